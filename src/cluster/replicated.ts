import type { Kysely } from 'kysely';
import type { StoredToken, TokenRepository } from '../domain/auth/model.js';
import type { DocumentRepository } from '../platform/document-repository.js';
import type { Database } from '../storage/schema.js';
import type { ClusterWrites } from './replication.js';

/**
 * A document repository whose writes the other instances hear of (in the writing transaction),
 * and which hears of theirs. `over` builds the plain repository on a connection or transaction;
 * `writes` are the cluster's replicated writes, which exist before the rest of the cluster node.
 */
export function replicatedDocuments<T extends { id: string }>(over: (db: Kysely<Database>) => DocumentRepository<T>, db: Kysely<Database>, kind: string, writes: ClusterWrites): DocumentRepository<T> {
  const plain = over(db);
  return {
    list: () => plain.list(),
    get: (id) => plain.get(id),
    save: (doc, at) => writes.documentChanged((trx) => over(trx).save(doc, at), kind, doc.id, doc),
    async remove(id) {
      let removed = false;
      await writes.documentChanged(async (trx) => {
        removed = await over(trx).remove(id);
      }, kind, id);
      return removed;
    },
    watch: (listener, resync) =>
      writes.watchDocuments(kind, {
        changed: (id, doc) => listener(id, doc as T | undefined),
        resync: async () => resync?.(await plain.list()),
      }),
  };
}

/** The token repository, telling the other instances (in the writing transaction) which tokens to adopt or forget. */
export function replicatedTokens(over: (db: Kysely<Database>) => TokenRepository, db: Kysely<Database>, writes: ClusterWrites): TokenRepository {
  const plain = over(db);
  return {
    insert: (token: StoredToken) => writes.tokenChanged((trx) => over(trx).insert(token), { hash: token.tokenHash, op: 'add' }),
    listActive: (now) => plain.listActive(now),
    find: (hash) => plain.find(hash),
    delete: (hash) => writes.tokenChanged((trx) => over(trx).delete(hash), { hash, op: 'del' }),
    deleteForUser: (userId) => writes.tokenChanged((trx) => over(trx).deleteForUser(userId), { userId, op: 'user' }),
    // Expired tokens are refused everywhere by their expiry; nothing to tell.
    deleteExpired: (now) => plain.deleteExpired(now),
  };
}
