import type { Kysely, Migration } from 'kysely';

export const m0002Devices: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('devices')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('driver_key', 'text', (c) => c.notNull())
      .addColumn('driver_device_id', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('removed', 'integer', (c) => c.notNull().defaultTo(0))
      // The rest of the record as JSON: its shape grows with features, its identity does not.
      .addColumn('record', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('devices_driver_identity')
      .on('devices')
      .columns(['driver_key', 'driver_device_id'])
      .unique()
      .execute();

    await db.schema
      .createTable('device_state')
      .addColumn('device_id', 'text', (c) => c.primaryKey().references('devices.id').onDelete('cascade'))
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('driver_settings')
      .addColumn('driver_key', 'text', (c) => c.primaryKey())
      .addColumn('values', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
