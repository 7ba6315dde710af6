import type { Kysely } from 'kysely';
import type { DeviceRepository, LogicalDevice } from '../../domain/devices/model.js';
import type { StateRepository, StoredState } from '../../domain/state/model.js';
import type { Database } from '../schema.js';

export class KyselyDeviceRepository implements DeviceRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async loadAll(): Promise<LogicalDevice[]> {
    const rows = await this.db.selectFrom('devices').select(['record']).execute();
    return rows.map((r) => JSON.parse(r.record) as LogicalDevice);
  }

  async save(device: LogicalDevice): Promise<void> {
    const row = {
      id: device.id,
      driver_key: device.driverKey,
      driver_device_id: device.driverDeviceId,
      name: device.name,
      removed: device.removed ? 1 : 0,
      record: JSON.stringify(device),
      updated_at: device.updatedAt,
    };
    await this.db
      .insertInto('devices')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet(row))
      .execute();
  }
}

export class KyselyStateRepository implements StateRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async loadAll(): Promise<StoredState[]> {
    const rows = await this.db.selectFrom('device_state').selectAll().execute();
    return rows.map((r) => ({ deviceId: r.device_id, state: JSON.parse(r.state) as Record<string, unknown>, updatedAt: Number(r.updated_at) }));
  }

  async saveMany(states: StoredState[]): Promise<void> {
    if (states.length === 0) return;
    // The last of a device's states wins; PostgreSQL refuses an upsert that names one row twice.
    const latest = [...new Map(states.map((s) => [s.deviceId, s])).values()];
    // One transaction, multi-row upserts in chunks under SQLite's bound-parameter limit.
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < latest.length; i += 500) {
        const rows = latest.slice(i, i + 500).map((s) => ({ device_id: s.deviceId, state: JSON.stringify(s.state), updated_at: s.updatedAt }));
        await trx
          .insertInto('device_state')
          .values(rows)
          .onConflict((oc) =>
            oc.column('device_id').doUpdateSet((eb) => ({ state: eb.ref('excluded.state'), updated_at: eb.ref('excluded.updated_at') })),
          )
          .execute();
      }
    });
  }
}
