import { Type } from 'typebox';
import { defineOperation, OS_ADMIN, type Access } from '../../platform/operations.js';
import type { AuthService } from '../auth/auth-service.js';

/** A metrics scraper's credential: a token of scope `metrics`, good for GET /metrics only. */
export const METRICS: Access = { scopes: ['metrics'] };

export function metricsOperations(auth: AuthService) {
  return {
    issueToken: defineOperation({
      name: 'metrics.token.issue',
      summary: 'Issue a token of scope `metrics` for a Prometheus scraper (GET /metrics with it as a bearer); shown once, hashed, expiring, revocable.',
      access: OS_ADMIN,
      input: Type.Object({ expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: 365 })) }),
      output: Type.Object({ token: Type.String(), id: Type.String(), scope: Type.Literal('metrics'), expiresIn: Type.Integer(), expiresAt: Type.Integer() }),
      async handler({ expiresInDays }, ctx) {
        const issued = await auth.issueScoped(ctx.principal!, 'metrics', (expiresInDays ?? 365) * 86_400);
        return { token: issued.accessToken, id: issued.id, scope: 'metrics' as const, expiresIn: issued.expiresIn, expiresAt: issued.expiresAt };
      },
    }),
    revokeToken: defineOperation({
      name: 'metrics.token.revoke',
      summary: 'Revoke a metrics token by its id.',
      access: OS_ADMIN,
      input: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
      output: Type.Object({ id: Type.String(), revoked: Type.Boolean() }),
      async handler({ id }) {
        return { id, revoked: await auth.revoke(id, 'metrics') };
      },
    }),
    scrape: defineOperation({
      name: 'metrics.scrape',
      summary: 'Authorizes a scrape of GET /metrics (the surface renders the Prometheus text).',
      access: METRICS,
      input: Type.Object({}),
      output: Type.Object({ ok: Type.Literal(true) }),
      async handler() {
        return { ok: true as const };
      },
    }),
  };
}
