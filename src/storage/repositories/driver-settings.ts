import type { Kysely } from 'kysely';
import type { DriverSettingsRepository } from '../../domain/drivers/driver-settings.js';
import type { Database } from '../schema.js';

export class KyselyDriverSettingsRepository implements DriverSettingsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(driverKey: string) {
    const row = await this.db.selectFrom('driver_settings').select('values').where('driver_key', '=', driverKey).executeTakeFirst();
    return row ? (JSON.parse(row.values) as Record<string, unknown>) : undefined;
  }

  async save(driverKey: string, values: Record<string, unknown>, at: number) {
    const row = { driver_key: driverKey, values: JSON.stringify(values), updated_at: at };
    await this.db
      .insertInto('driver_settings')
      .values(row)
      .onConflict((oc) => oc.column('driver_key').doUpdateSet(row))
      .execute();
  }
}
