import type { Clock } from '../../platform/clock.js';
import type { OperationRegistry, Principal, Scope } from '../../platform/operations.js';
import type { AccountService } from './accounts.js';
import type { AuthService } from './auth-service.js';

/** How long a scoped caller's token lives before it is issued anew. */
const TOKEN_TTL_SECONDS = 86_400;

/**
 * A surface inside the hub that calls operations for a whole protocol rather than for a signed-in
 * person (MQTT dashboards, Matter controllers): a token of its own scope, held in memory, issued
 * for an enabled admin and revoked at stop, so that its calls go through the registry like any
 * surface's (checked, translated, journalled; `clientAddress` says who in the protocol called).
 */
export class ScopedCaller {
  private issued: { token: string; id: string; expiresAt: number } | undefined;
  private calls = 0;

  constructor(
    private readonly scope: Scope,
    private readonly deps: { registry: OperationRegistry; auth: AuthService; accounts: AccountService; clock: Clock },
  ) {}

  /** Calls `operation` with `input` as its JSON body; `from` names the caller in the activity log (`mqtt`, `matter:Apple Home`). */
  async call(operation: string, input: Record<string, unknown>, from: string): Promise<unknown> {
    const token = await this.token();
    return this.deps.registry.invoke(operation, { json: input }, { credential: { token }, clientAddress: from, requestId: `${this.scope}-${++this.calls}` });
  }

  private async token(): Promise<string> {
    if (this.issued && this.issued.expiresAt - 60_000 > this.deps.clock.now()) return this.issued.token;
    const admin = (await this.deps.accounts.list()).find((u) => u.role === 'admin' && !u.disabled);
    if (!admin) throw new Error(`no enabled admin account to run ${this.scope} commands for`);
    const principal: Principal = { userId: admin.id, username: admin.username, role: 'admin', scope: this.scope, tokenHash: '' };
    const issued = await this.deps.auth.issueScoped(principal, this.scope, TOKEN_TTL_SECONDS);
    if (this.issued) await this.deps.auth.revoke(this.issued.id, this.scope);
    this.issued = { token: issued.accessToken, id: issued.id, expiresAt: issued.expiresAt };
    return issued.accessToken;
  }

  async stop(): Promise<void> {
    const issued = this.issued;
    this.issued = undefined;
    if (issued) await this.deps.auth.revoke(issued.id, this.scope).catch(() => undefined);
  }
}
