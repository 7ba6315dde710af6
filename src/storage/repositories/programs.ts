import type { Kysely } from 'kysely';
import type { ProgramRun } from '../../domain/programs/model.js';
import type { ProgramRunRepository } from '../../domain/programs/program-service.js';
import type { FireStore } from '../../domain/programs/scheduler.js';
import type { Database } from '../schema.js';

export class KyselyProgramRunRepository implements ProgramRunRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async save(run: ProgramRun): Promise<void> {
    const row = { id: run.id, program_id: run.programId, started_at: run.startedAt, body: JSON.stringify(run) };
    await this.db.insertInto('program_runs').values(row).onConflict((oc) => oc.column('id').doUpdateSet({ body: row.body })).execute();
  }

  async list(programId: string, limit: number): Promise<ProgramRun[]> {
    const rows = await this.db.selectFrom('program_runs').select('body').where('program_id', '=', programId).orderBy('started_at', 'desc').limit(limit).execute();
    return rows.map((r) => JSON.parse(r.body) as ProgramRun);
  }

  async get(runId: string): Promise<ProgramRun | undefined> {
    const row = await this.db.selectFrom('program_runs').select('body').where('id', '=', runId).executeTakeFirst();
    return row ? (JSON.parse(row.body) as ProgramRun) : undefined;
  }

  async prune(programId: string, keep: number): Promise<void> {
    const newest = this.db.selectFrom('program_runs').select('id').where('program_id', '=', programId).orderBy('started_at', 'desc').limit(keep);
    await this.db.deleteFrom('program_runs').where('program_id', '=', programId).where('id', 'not in', newest).execute();
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
