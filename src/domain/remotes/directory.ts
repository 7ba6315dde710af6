import { randomBytes } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import type { Authenticator, Principal, TokenKind } from '../../platform/operations.js';
import { hashToken } from '../auth/auth-service.js';
import type { DomainEventBus } from '../events.js';
import type { PairedRemote } from './model.js';

export type RemoteView = Omit<PairedRemote, 'tokenHash'>;

/**
 * Paired remotes and their tokens. A remote's token never expires by time (a remote on the wall
 * must keep working) but is revoked at once: it leaves memory before storage, so no request
 * authenticates with it after `revoke` is called. Authenticating is a hash and a map lookup.
 */
export class RemoteDirectory implements Authenticator {
  private readonly byTokenHash = new Map<string, string>();

  constructor(
    readonly remotes: DocumentCollection<PairedRemote>,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
  ) {}

  async load(): Promise<void> {
    // Remotes paired or revoked on another instance sharing the database.
    this.remotes.followChanges((id, before, after) => {
      if (before) this.byTokenHash.delete(before.tokenHash);
      if (after) this.byTokenHash.set(after.tokenHash, id);
    });
    await this.remotes.load();
    for (const remote of this.remotes.list()) this.byTokenHash.set(remote.tokenHash, remote.id);
  }

  authenticate(token: string, kinds: readonly TokenKind[]): Principal | undefined {
    if (!kinds.includes('access')) return undefined;
    const tokenHash = hashToken(token);
    const id = this.byTokenHash.get(tokenHash);
    const remote = id === undefined ? undefined : this.remotes.find(id);
    if (!remote) return undefined;
    return { userId: `remote:${remote.id}`, username: remote.name, role: 'user', scope: 'remote', tokenHash, remoteId: remote.id };
  }

  list(): RemoteView[] {
    return this.remotes.list().map(viewOf);
  }

  get(id: string): PairedRemote {
    return this.remotes.get(id);
  }

  /** Creates the remote and its token; the token is returned once and only its hash is kept. */
  async add(fields: { name: string; kind?: string; pairedBy: string; activeSpaceId: string | null; address: string }): Promise<{ remote: PairedRemote; token: string }> {
    const token = randomBytes(32).toString('base64url');
    const { item } = await this.remotes.save({
      name: fields.name,
      ...(fields.kind ? { kind: fields.kind } : {}),
      tokenHash: hashToken(token),
      pairedBy: fields.pairedBy,
      activeSpaceId: fields.activeSpaceId,
      lastSeenAt: null,
      lastAddress: fields.address,
    });
    this.byTokenHash.set(item.tokenHash, item.id);
    return { remote: item, token };
  }

  async update(id: string, change: Partial<Pick<PairedRemote, 'activeSpaceId' | 'lastSeenAt' | 'lastAddress'>>): Promise<PairedRemote> {
    return this.remotes.update(id, () => change);
  }

  /** Notes a remote's activity; a remote revoked meanwhile stays gone (what it asked for already ran). */
  async touch(id: string, change: Pick<PairedRemote, 'lastSeenAt' | 'lastAddress'>): Promise<void> {
    if (this.remotes.find(id)) await this.remotes.update(id, () => change);
  }

  async revoke(id: string): Promise<RemoteView> {
    const remote = this.remotes.get(id);
    this.byTokenHash.delete(remote.tokenHash);
    await this.remotes.remove(id);
    this.events.emit('remote.revoked', { remoteId: id, name: remote.name, at: this.clock.now() });
    return viewOf(remote);
  }
}

export function viewOf({ tokenHash: _hidden, ...view }: PairedRemote): RemoteView {
  return view;
}
