import { Type } from 'typebox';
import { LOG_PAGE } from '../../platform/batched-log.js';
import { ADMIN_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { AuditTrail } from './audit-trail.js';

const AuditEntrySchema = Type.Object({
  id: Type.Integer(),
  at: Type.Integer({ description: 'Epoch ms.' }),
  actor: Type.Union([Type.String(), Type.Null()]),
  action: Type.String({ description: 'The operation (e.g. `users.create`) or event (`auth.login_failed`).' }),
  ok: Type.Boolean(),
  code: Type.Optional(Type.String({ description: "The failure's code." })),
  target: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  input: Type.Optional(Type.Unknown({ description: 'The input, secrets masked, long values cut.' })),
  clientAddress: Type.Optional(Type.String()),
  requestId: Type.Optional(Type.String()),
});

export function auditOperations(trail: AuditTrail) {
  return {
    list: defineOperation({
      name: 'audit.list',
      summary: "The audit trail: administrators' changes (with their outcome) and failed sign-ins, newest first.",
      access: ADMIN_ACCOUNT,
      input: Type.Object({
        ...LOG_PAGE,
        action: Type.Optional(Type.String({ maxLength: 100, description: 'Only actions starting with this, e.g. `users.`.' })),
        actor: Type.Optional(Type.String({ maxLength: 100 })),
      }),
      output: Type.Object({ entries: Type.Array(AuditEntrySchema), hasMore: Type.Boolean() }),
      async handler({ limit, before, action, actor }) {
        return trail.query({ limit: limit ?? 100, ...(before ? { before } : {}), ...(action ? { action } : {}), ...(actor ? { actor } : {}) });
      },
    }),
  };
}
