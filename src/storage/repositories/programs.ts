import type { Kysely } from 'kysely';
import type { FieldHistoryRepository, TrackedField } from '../../domain/automations/fields.js';
import type { ProgramRun } from '../../domain/programs/model.js';
import { NOTABLE_STATUSES, type ProgramRunRepository } from '../../domain/programs/program-service.js';
import type { FireStore } from '../../domain/programs/scheduler.js';
import type { Database } from '../schema.js';

export class KyselyProgramRunRepository implements ProgramRunRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async save(run: ProgramRun): Promise<void> {
    const row = { id: run.id, program_id: run.programId, started_at: run.startedAt, status: run.status, body: JSON.stringify(run) };
    await this.db.insertInto('program_runs').values(row).onConflict((oc) => oc.column('id').doUpdateSet({ body: row.body, status: row.status })).execute();
  }

  async saveMany(runs: ProgramRun[]): Promise<void> {
    if (runs.length === 0) return;
    await this.db.transaction().execute(async (tx) => {
      for (const run of runs) {
        const row = { id: run.id, program_id: run.programId, started_at: run.startedAt, status: run.status, body: JSON.stringify(run) };
        await tx.insertInto('program_runs').values(row).onConflict((oc) => oc.column('id').doUpdateSet({ body: row.body, status: row.status })).execute();
      }
    });
  }

  async list(programId: string, limit: number, options: { notable?: boolean } = {}): Promise<ProgramRun[]> {
    let query = this.db.selectFrom('program_runs').select('body').where('program_id', '=', programId);
    if (options.notable) query = query.where('status', 'in', [...NOTABLE_STATUSES]);
    const rows = await query.orderBy('started_at', 'desc').limit(limit).execute();
    return rows.map((r) => JSON.parse(r.body) as ProgramRun);
  }

  async listRunning(): Promise<ProgramRun[]> {
    const rows = await this.db.selectFrom('program_runs').select('body').where('status', '=', 'running').execute();
    return rows.map((r) => JSON.parse(r.body) as ProgramRun);
  }

  async get(runId: string): Promise<ProgramRun | undefined> {
    const row = await this.db.selectFrom('program_runs').select('body').where('id', '=', runId).executeTakeFirst();
    return row ? (JSON.parse(row.body) as ProgramRun) : undefined;
  }

  /** Keeps the newest `keep` runs, the newest `keepNotable` notable ones, and every run still running. */
  async prune(programId: string, keep: number, keepNotable: number): Promise<void> {
    const newest = this.db.selectFrom('program_runs').select('id').where('program_id', '=', programId).orderBy('started_at', 'desc').limit(keep);
    const notable = this.db
      .selectFrom('program_runs')
      .select('id')
      .where('program_id', '=', programId)
      .where('status', 'in', [...NOTABLE_STATUSES])
      .orderBy('started_at', 'desc')
      .limit(keepNotable);
    await this.db
      .deleteFrom('program_runs')
      .where('program_id', '=', programId)
      .where('status', '!=', 'running')
      .where('id', 'not in', newest)
      .where('id', 'not in', notable)
      .execute();
  }
}

export class KyselyFireStore implements FireStore {
  constructor(private readonly db: Kysely<Database>) {}

  async lastFire(programId: string): Promise<number | undefined> {
    const row = await this.db.selectFrom('timer_fires').select('last_fire_at').where('program_id', '=', programId).executeTakeFirst();
    return row ? Number(row.last_fire_at) : undefined;
  }

  /** One statement on either engine: inserted, or updated only while the slot is not recorded yet. */
  async claimFire(programId: string, scheduledAt: number, at: number, toleranceMs: number): Promise<boolean> {
    const row = await this.db
      .insertInto('timer_fires')
      .values({ program_id: programId, last_fire_at: at })
      .onConflict((oc) => oc.column('program_id').doUpdateSet({ last_fire_at: at }).where('timer_fires.last_fire_at', '<', scheduledAt - toleranceMs))
      .returning('program_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async recordFire(programId: string, at: number): Promise<void> {
    await this.db
      .insertInto('timer_fires')
      .values({ program_id: programId, last_fire_at: at })
      .onConflict((oc) => oc.column('program_id').doUpdateSet({ last_fire_at: at }))
      .execute();
  }
}

/** The fields automations watch, written behind in one transaction per batch. */
export class KyselyFieldHistoryRepository implements FieldHistoryRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async loadAll(): Promise<TrackedField[]> {
    const rows = await this.db.selectFrom('automation_fields').selectAll().execute();
    return rows.map((r) => ({ deviceId: r.device_id, field: r.field, value: JSON.parse(r.value) as unknown, since: Number(r.since) }));
  }

  async saveMany(fields: TrackedField[]): Promise<void> {
    if (fields.length === 0) return;
    await this.db.transaction().execute(async (tx) => {
      // In chunks: one statement's parameters stay well under both engines' limits.
      for (let i = 0; i < fields.length; i += 200) {
        const rows = fields.slice(i, i + 200).map((f) => ({ device_id: f.deviceId, field: f.field, value: JSON.stringify(f.value ?? null), since: f.since }));
        await tx
          .insertInto('automation_fields')
          .values(rows)
          .onConflict((oc) => oc.columns(['device_id', 'field']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value'), since: eb.ref('excluded.since') })))
          .execute();
      }
    });
  }

  async removeDevice(deviceId: string): Promise<void> {
    await this.db.deleteFrom('automation_fields').where('device_id', '=', deviceId).execute();
  }
}
