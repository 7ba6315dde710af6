import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import SQLite from './sqlite-binding.js';
import { Kysely, SqliteDialect, sql, type Transaction } from 'kysely';
import { COPY_FILES, RESTORE_IMPORT_DIR } from './files.js';
import type { Database } from './schema.js';

/**
 * A logical export of the hub's tables, engine-independent (a pg_dump-equivalent for what the
 * hub stores): JSON lines, a header first ({format, version, engine, migrations}), then one
 * `[table, row]` per line. PostgreSQL backups are taken so, inside one repeatable-read
 * transaction: every row is as of one instant while writes go on.
 */
export const DUMP_FORMAT = 'hcs-logical-dump';
const DUMP_VERSION = 1;

/** Every table of the hub's state, parents before children (the order rows are restored in). */
export const DUMPED_TABLES = [
  'users',
  'tokens',
  'invites',
  'settings',
  'audit_log',
  'activity_log',
  'devices',
  'device_state',
  'driver_settings',
  'documents',
  'program_runs',
  'timer_fires',
  'alerts',
] as const satisfies ReadonlyArray<keyof Database>;

type DumpedTable = (typeof DUMPED_TABLES)[number];
const KNOWN = new Set<string>(DUMPED_TABLES);
const PAGE = 2000;

export interface DumpHeader {
  format: typeof DUMP_FORMAT;
  version: number;
  engine: string;
  migrations: string[];
}

/**
 * Writes every table to `file`, reading through `trx` (a transaction that sees one snapshot).
 * `present`: the tables the source has, when it may predate some (an old SQLite file).
 */
export async function writeDump(trx: Transaction<Database> | Kysely<Database>, engine: string, file: string, present?: ReadonlySet<string>): Promise<void> {
  const migrations = (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(trx)).rows.map((r) => r.name);
  const out = fs.createWriteStream(file, { flags: 'wx' });
  const write = (line: string) => (out.write(`${line}\n`) ? Promise.resolve() : new Promise<void>((resolve) => out.once('drain', () => resolve())));
  try {
    await write(JSON.stringify({ format: DUMP_FORMAT, version: DUMP_VERSION, engine, migrations } satisfies DumpHeader));
    for (const table of DUMPED_TABLES) {
      if (present && !present.has(table)) continue;
      // Keyset pages would need each table's key; offsets are fine inside one snapshot.
      for (let offset = 0; ; offset += PAGE) {
        const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)} order by 1 limit ${PAGE} offset ${offset}`.execute(trx);
        for (const row of rows.rows) await write(JSON.stringify([table, row]));
        if (rows.rows.length < PAGE) break;
      }
    }
  } finally {
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/** Every table as of one instant (one repeatable-read transaction) while writes go on, to `file`. */
export function exportSnapshot(db: Kysely<Database>, engine: string, file: string): Promise<void> {
  return db.transaction().setIsolationLevel('repeatable read').execute((trx) => writeDump(trx, engine, file));
}

async function* dumpLines(file: string): AsyncGenerator<{ line: number; value: unknown }> {
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new Error(`line ${n} is not JSON: ${(err as Error).message}`);
    }
    yield { line: n, value };
  }
}

/** Reads a dump's header and checks every line: its migrations, and "ok" or the first problem. */
export async function inspectDump(file: string): Promise<{ migrations: string[]; integrity: string }> {
  let header: DumpHeader | undefined;
  try {
    for await (const { line, value } of dumpLines(file)) {
      if (!header) {
        const h = value as DumpHeader;
        if (h?.format !== DUMP_FORMAT || !Array.isArray(h.migrations)) return { migrations: [], integrity: `line 1 is not a ${DUMP_FORMAT} header` };
        if (h.version > DUMP_VERSION) return { migrations: h.migrations, integrity: `dump version ${h.version} is newer than ${DUMP_VERSION}` };
        header = h;
        continue;
      }
      const row = value as [string, unknown];
      if (!Array.isArray(row) || row.length !== 2 || !KNOWN.has(row[0]) || typeof row[1] !== 'object' || row[1] === null) {
        return { migrations: header.migrations, integrity: `line ${line} is not a row of a known table` };
      }
    }
  } catch (err) {
    return { migrations: header?.migrations ?? [], integrity: (err as Error).message };
  }
  return header ? { migrations: header.migrations, integrity: 'ok' } : { migrations: [], integrity: 'the dump is empty' };
}

/**
 * A restore that waits in `DATA_DIR/restore-import/` (restore.ts puts it there: a copy of the
 * other engine, or any copy on PostgreSQL), imported after the migrations: the current rows are
 * exported to where the restore keeps the replaced state, then replaced by the copy's in one
 * transaction. An SQLite file is read through a logical export of its own. Returns whether one
 * was imported.
 */
export async function importPendingRestore(db: Kysely<Database>, engine: 'sqlite' | 'postgres', dataDir: string): Promise<boolean> {
  const dir = path.join(dataDir, RESTORE_IMPORT_DIR);
  const copy = COPY_FILES.map((name) => path.join(dir, name)).find((file) => fs.existsSync(file));
  if (!copy) return false;
  const keptIn = fs.readFileSync(path.join(dir, 'kept-in'), 'utf8').trim();
  fs.mkdirSync(keptIn, { recursive: true });
  const kept = path.join(keptIn, 'database.jsonl');
  fs.rmSync(kept, { force: true });
  await exportSnapshot(db, engine, kept);
  let dump = copy;
  if (copy.endsWith('.sqlite')) {
    dump = path.join(dir, 'from-sqlite.jsonl');
    fs.rmSync(dump, { force: true });
    const file = new SQLite(copy, { readonly: true, fileMustExist: true });
    const present = new Set((file.prepare("select name from sqlite_master where type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
    const source = new Kysely<Database>({ dialect: new SqliteDialect({ database: file }) });
    try {
      await writeDump(source, 'sqlite', dump, present);
    } finally {
      await source.destroy();
    }
  }
  await readDumpInto(db, dump, engine);
  fs.rmSync(dir, { recursive: true, force: true });
  return true;
}

/**
 * Replaces every table's rows with the dump's, in one transaction (all or nothing). Identity
 * columns carry on after the highest restored number.
 */
export async function readDumpInto(db: Kysely<Database>, file: string, engine: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    for (const table of [...DUMPED_TABLES].reverse()) await trx.deleteFrom(table).execute();
    let rows = 0;
    let batch: { table: DumpedTable; rows: Record<string, unknown>[] } | undefined;
    const flush = async () => {
      if (!batch || batch.rows.length === 0) return;
      await trx.insertInto(batch.table).values(batch.rows as never).execute();
      batch = undefined;
    };
    let first = true;
    for await (const { value } of dumpLines(file)) {
      if (first) {
        first = false;
        continue;
      }
      const [table, row] = value as [DumpedTable, Record<string, unknown>];
      if (batch?.table !== table || batch.rows.length >= 200) {
        await flush();
        batch = { table, rows: [] };
      }
      batch.rows.push(row);
      rows++;
    }
    await flush();
    if (engine === 'postgres') {
      // The logs' ids are serial: a restored log goes on after its last entry.
      for (const table of ['audit_log', 'activity_log']) {
        await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce((select max(id) from ${sql.table(table)}), 0) + 1, false)`.execute(trx);
      }
    }
    return rows;
  });
}
