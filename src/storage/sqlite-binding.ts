import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The SQLite binding for the Node that runs the hub. better-sqlite3 12 is built on
 * `node::ObjectWrap`, which Node 24 changed: a statement garbage-collected while the process
 * exits aborts it (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook, exit
 * 134). better-sqlite3 13 is built on Node-API and has no such abort, but needs Node 22 or later
 * (on Node 20 it crashes loading). Both are installed (13 under the alias `better-sqlite3-napi`);
 * the one for this runtime is loaded. Their JavaScript API is the same.
 */
const require = createRequire(import.meta.url);
const nodeMajor = Number(process.versions.node.split('.')[0]);

export const SQLITE_BINDING = nodeMajor >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

const SQLite = require(SQLITE_BINDING) as typeof BetterSqlite3;
export default SQLite;
export type SqliteDatabase = BetterSqlite3.Database;
export type SqliteStatement = BetterSqlite3.Statement;
