import type { Migration } from 'kysely';
import { m0001Initial } from './0001-initial.js';

/**
 * Versioned, forward-only migrations. A migration that has shipped is never edited; a change
 * is a new entry. Names sort in the order they apply.
 */
export const migrations: Record<string, Migration> = {
  '0001-initial': m0001Initial,
};
