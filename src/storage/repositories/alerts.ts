import type { Kysely } from 'kysely';
import type { Alert, AlertQuery, AlertRepository } from '../../domain/home/model.js';
import type { Database } from '../schema.js';

export class KyselyAlertRepository implements AlertRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(alert: Alert): Promise<void> {
    await this.db
      .insertInto('alerts')
      .values({ id: alert.id, at: alert.at, type: alert.type, severity: alert.severity, device_id: alert.deviceId ?? null, source: alert.source ?? null, body: JSON.stringify(alert) })
      .execute();
  }

  async get(id: string): Promise<Alert | undefined> {
    const row = await this.db.selectFrom('alerts').select('body').where('id', '=', id).executeTakeFirst();
    return row ? (JSON.parse(row.body) as Alert) : undefined;
  }

  async query(q: AlertQuery): Promise<{ alerts: Alert[]; hasMore: boolean }> {
    let query = this.db.selectFrom('alerts').select(['body', 'at', 'id']);
    if (q.type) query = query.where('type', '=', q.type);
    if (q.severity) query = query.where('severity', '=', q.severity);
    if (q.deviceId) query = query.where('device_id', '=', q.deviceId);
    if (q.since !== undefined) query = query.where('at', '>=', q.since);
    if (q.before) {
      const cursor = await this.db.selectFrom('alerts').select(['at', 'id']).where('id', '=', q.before).executeTakeFirst();
      if (cursor) query = query.where((eb) => eb.or([eb('at', '<', cursor.at), eb.and([eb('at', '=', cursor.at), eb('id', '<', cursor.id)])]));
    }
    const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(q.limit + 1).execute();
    return { alerts: rows.slice(0, q.limit).map((r) => JSON.parse(r.body) as Alert), hasMore: rows.length > q.limit };
  }

  async prune(olderThan: number, keepNewest: number): Promise<number> {
    const byAge = await this.db.deleteFrom('alerts').where('at', '<', olderThan).executeTakeFirst();
    const keep = this.db.selectFrom('alerts').select('id').orderBy('at', 'desc').orderBy('id', 'desc').limit(keepNewest);
    const byCount = await this.db.deleteFrom('alerts').where('id', 'not in', keep).executeTakeFirst();
    return Number(byAge.numDeletedRows) + Number(byCount.numDeletedRows);
  }
}
