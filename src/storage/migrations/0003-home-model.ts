import type { Kysely, Migration } from 'kysely';

export const m0003HomeModel: Migration = {
  async up(db: Kysely<unknown>) {
    // Aggregates whose shape is a document (spaces, programs, zones, macros, …): one row each,
    // keyed by kind and id, so that a new aggregate needs no new table.
    await db.schema
      .createTable('documents')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('documents_pk', ['kind', 'id'])
      .execute();

    await db.schema
      .createTable('program_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('program_id', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('program_runs_program').on('program_runs').columns(['program_id', 'started_at']).execute();

    await db.schema
      .createTable('timer_fires')
      .addColumn('program_id', 'text', (c) => c.primaryKey())
      .addColumn('last_fire_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('alerts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('severity', 'text', (c) => c.notNull())
      .addColumn('device_id', 'text')
      .addColumn('source', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('alerts_at').on('alerts').column('at').execute();
  },
};
