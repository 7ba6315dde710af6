import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Automations (docs/automations.md):
 * - program records: a `timer` becomes the time trigger with id "timer" and `concurrency` is
 *   said as `mode` too (the views still show both);
 * - program runs keep their status in a column, so the notable ones (failed, not passed,
 *   skipped, interrupted) are kept apart from the newest, and the runs left running are found;
 * - the fields automations watch: each one's last value and since when it holds.
 */
export const m0008Automations: Migration = {
  async up(db: Kysely<unknown>) {
    const rows = await sql<{ id: string; body: string }>`select id, body from documents where kind = 'program'`.execute(db);
    for (const row of rows.rows) {
      const program = JSON.parse(row.body) as Record<string, unknown>;
      const timer = program['timer'];
      const triggers = Array.isArray(program['triggers']) ? (program['triggers'] as unknown[]) : [];
      if (timer && typeof timer === 'object') triggers.unshift({ id: 'timer', type: 'time', timer });
      delete program['timer'];
      program['triggers'] = triggers;
      const concurrency = program['concurrency'];
      program['mode'] = concurrency === 'restart' ? 'restart' : concurrency === 'queue' ? 'queued' : 'single';
      if (program['enabled'] === undefined) program['enabled'] = true;
      await sql`update documents set body = ${JSON.stringify(program)} where kind = 'program' and id = ${row.id}`.execute(db);
    }

    await db.schema.alterTable('program_runs').addColumn('status', 'text', (c) => c.notNull().defaultTo('succeeded')).execute();
    const runs = await sql<{ id: string; body: string }>`select id, body from program_runs`.execute(db);
    for (const run of runs.rows) {
      const status = (JSON.parse(run.body) as { status?: string }).status ?? 'succeeded';
      await sql`update program_runs set status = ${status} where id = ${run.id}`.execute(db);
    }
    await db.schema.createIndex('program_runs_by_status').on('program_runs').columns(['status']).execute();

    await db.schema
      .createTable('automation_fields')
      .addColumn('device_id', 'text', (c) => c.notNull())
      .addColumn('field', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('since', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('automation_fields_pk', ['device_id', 'field'])
      .execute();
  },
};
