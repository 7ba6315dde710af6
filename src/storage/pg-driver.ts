import { createRequire } from 'node:module';
import type pg from 'pg';

const require = createRequire(import.meta.url);
let loaded: typeof pg | undefined;

/**
 * The `pg` driver, loaded the first time PostgreSQL is used: a home on SQLite never pays for it
 * (loading it took about 40 ms of every start).
 */
export function pgDriver(): typeof pg {
  loaded ??= require('pg') as typeof pg;
  return loaded;
}
