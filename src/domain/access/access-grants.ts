import type { Clock } from '../../platform/clock.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import type { Principal, Role } from '../../platform/operations.js';
import { EVERYTHING, grantedAudience, NOTHING, type Audience, type AudienceResolver } from './audience.js';
import { authErrors } from '../auth/errors.js';
import type { UserAccess, UserAccessView } from './model.js';

/**
 * Per-user grants, in memory and written through. Resolving a caller's audience is a map lookup
 * on every filtered call, so each grant's audience is built once and kept until the grant changes.
 */
export class AccessGrants implements AudienceResolver {
  private readonly grants: DocumentCollection<UserAccess>;
  private readonly audiences = new WeakMap<UserAccess, Audience>();

  constructor(repository: DocumentRepository<UserAccess>, clock: Clock) {
    this.grants = new DocumentCollection(repository, clock, authErrors.USER_NOT_FOUND);
  }

  load(): Promise<void> {
    return this.grants.load();
  }

  audienceOf(principal: Principal | undefined): Audience {
    return principal ? this.audienceOfAccount(principal) : NOTHING;
  }

  /** What an account sees: also asked for a remote, which acts within the account that paired it. */
  audienceOfAccount(account: { userId: string; role: Role }): Audience {
    if (account.role === 'admin') return EVERYTHING;
    const grant = this.grants.find(account.userId);
    if (!grant) return NOTHING;
    let audience = this.audiences.get(grant);
    if (!audience) {
      audience = grantedAudience(grant.spaceIds, grant.deviceIds);
      this.audiences.set(grant, audience);
    }
    return audience;
  }

  view(userId: string): UserAccessView {
    const grant = this.grants.find(userId);
    return { userId, spaceIds: grant?.spaceIds ?? [], deviceIds: grant?.deviceIds ?? [], updatedAt: grant?.updatedAt ?? null };
  }

  /** Makes the lists the user's whole grant (ids already checked by the caller). */
  async replace(userId: string, spaceIds: string[], deviceIds: string[]): Promise<UserAccessView> {
    await this.grants.save({ id: userId, spaceIds: [...new Set(spaceIds)], deviceIds: [...new Set(deviceIds)] });
    return this.view(userId);
  }

  /** A removed account keeps no grants (a new account must not inherit them). */
  async userRemoved(userId: string): Promise<void> {
    if (this.grants.find(userId)) await this.grants.remove(userId);
  }

  /** A removed space leaves every grant, so a later space that reuses its id is not granted by accident. */
  async spaceRemoved(spaceId: string): Promise<void> {
    for (const grant of this.grants.list()) {
      if (grant.spaceIds.includes(spaceId)) await this.grants.update(grant.id, (g) => ({ spaceIds: g.spaceIds.filter((id) => id !== spaceId) }));
    }
  }
}
