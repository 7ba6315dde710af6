import type { StoredToken, TokenRepository } from '../domain/auth/model.js';
import type { DocumentRepository } from '../platform/document-repository.js';
import type { ClusterNode } from './cluster-node.js';

/** A document repository whose writes the other instances hear of, and which hears of theirs. */
export function replicatedDocuments<T extends { id: string }>(inner: DocumentRepository<T>, kind: string, node: ClusterNode): DocumentRepository<T> {
  return {
    list: () => inner.list(),
    get: (id) => inner.get(id),
    async save(doc, at) {
      await inner.save(doc, at);
      node.documentChanged(kind, doc.id, doc);
    },
    async remove(id) {
      const removed = await inner.remove(id);
      if (removed) node.documentChanged(kind, id);
      return removed;
    },
    watch: (listener) => node.watchDocuments(kind, (id, doc) => listener(id, doc as T | undefined)),
  };
}

/** The token repository, telling the other instances which tokens to adopt or forget. */
export function replicatedTokens(inner: TokenRepository, node: ClusterNode): TokenRepository {
  return {
    async insert(token: StoredToken) {
      await inner.insert(token);
      node.tokenChanged({ hash: token.tokenHash, op: 'add' });
    },
    listActive: (now) => inner.listActive(now),
    find: (hash) => inner.find(hash),
    async delete(hash) {
      await inner.delete(hash);
      node.tokenChanged({ hash, op: 'del' });
    },
    async deleteForUser(userId) {
      await inner.deleteForUser(userId);
      node.tokenChanged({ userId, op: 'user' });
    },
    // Expired tokens are refused everywhere by their expiry; nothing to tell.
    deleteExpired: (now) => inner.deleteExpired(now),
  };
}
