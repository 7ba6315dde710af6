import { Type } from 'typebox';
import { ANY_ACCOUNT, defineOperation, type Access, type OperationContext, type Principal, type Role } from '../../platform/operations.js';
import { DeviceActionResultSchema, Id, RemoteSourceView } from '../home/schemas.js';
import type { RemoteControl } from './control.js';
import type { RemoteDirectory } from './directory.js';
import { remoteErrors } from './errors.js';
import { homeErrors } from '../home/errors.js';
import type { Audience } from '../access/audience.js';
import type { PairingService } from './pairing.js';
import { BatchEntrySchema, KeyName, KeyParams, KeyOutcomeSchema, PairingViewSchema, PendingPairingSchema, RemoteViewSchema, RequestId, SessionSchema } from './schemas.js';

/** remoteAuth: a paired remote's own token. */
export const PAIRED_REMOTE: Access = { scopes: ['remote'] };

/** Keys one batch may carry: a macro-like burst, not a script. */
export const MAX_KEYS_PER_BATCH = 20;

const RemoteName = Type.String({ minLength: 1, maxLength: 100 });
const RemoteKind = Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'e.g. "handheld", "wall-panel", "phone".' }));

function remoteIdOf(ctx: OperationContext): string {
  const remoteId = ctx.principal?.remoteId;
  // The access rule admits only remote tokens, and every remote principal names its remote.
  if (!remoteId) throw remoteErrors.REMOTE_NOT_FOUND({ id: ctx.principal?.userId ?? 'unknown' });
  return remoteId;
}

/** Pairing (the remote's public side and the household's) and the paired remotes' list. */
/**
 * A household member pairs remotes that act within what they see themselves, and manages those;
 * an admin sees every request's code and every remote. Codes are shown to admins only, because a
 * remote that enters one acts for the whole household.
 */
export function remoteAdminOperations(
  pairing: PairingService,
  directory: RemoteDirectory,
  audiences: { audienceOfAccount(account: { userId: string; role: Role }): Audience },
) {
  const isAdmin = (ctx: OperationContext) => ctx.principal?.role === 'admin';
  const ownRemote = (ctx: OperationContext, id: string) => {
    const remote = directory.get(id);
    if (!isAdmin(ctx) && remote.pairedBy !== ctx.principal?.userId) throw remoteErrors.REMOTE_NOT_FOUND({ id }, { details: { id } });
    return remote;
  };
  return {
    pairingStart: defineOperation({
      name: 'remotes.pairing.start',
      summary: 'Open a pairing request; the code to enter appears on the hub, not in this answer.',
      access: 'public',
      input: Type.Object({ name: RemoteName, kind: RemoteKind }),
      output: PairingViewSchema,
      async handler(input, ctx) {
        return pairing.open(input, ctx.clientAddress);
      },
    }),
    pairingStatus: defineOperation({
      name: 'remotes.pairing.status',
      summary: "A pairing request's status; the first answer after pairing carries the remote's token.",
      access: 'public',
      input: Type.Object({ requestId: RequestId }),
      output: PairingViewSchema,
      async handler({ requestId }) {
        return pairing.status(requestId);
      },
    }),
    pairingSubmitCode: defineOperation({
      name: 'remotes.pairing.submit_code',
      summary: 'Enter the code shown on the hub; the answer to the right code carries the token.',
      description: 'Wrong codes: 403 PAIRING_CODE_INVALID; the fifth rejects the request; over the per-request or per-address limit 429 PAIRING_RATE_LIMITED with Retry-After.',
      access: 'public',
      input: Type.Object({ requestId: RequestId, code: Type.String({ minLength: 1, maxLength: 20 }) }),
      output: PairingViewSchema,
      async handler({ requestId, code }, ctx) {
        return pairing.submitCode(requestId, code, ctx.clientAddress);
      },
    }),
    pairingList: defineOperation({
      name: 'remotes.pairing.list',
      summary: 'Pending pairing requests; admins also see the codes to tell.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ requests: Type.Array(PendingPairingSchema) }),
      async handler(_input, ctx) {
        return { requests: pairing.list(isAdmin(ctx)) };
      },
    }),
    pairingConfirm: defineOperation({
      name: 'remotes.pairing.confirm',
      summary: 'Pair the remote of a pending request; its token goes to the remote, not here.',
      access: ANY_ACCOUNT,
      input: Type.Object({ requestId: RequestId, name: Type.Optional(RemoteName), spaceId: Type.Optional(Id) }),
      output: Type.Object({ requestId: Type.String(), status: Type.Literal('paired'), remote: RemoteViewSchema }),
      async handler({ requestId, ...fields }, ctx) {
        const principal = ctx.principal as Principal;
        if (fields.spaceId && !audiences.audienceOfAccount(principal).seesSpace(fields.spaceId)) {
          throw homeErrors.SPACE_NOT_FOUND({ id: fields.spaceId }, { details: { id: fields.spaceId } });
        }
        return pairing.confirm(requestId, fields, principal.userId);
      },
    }),
    pairingReject: defineOperation({
      name: 'remotes.pairing.reject',
      summary: 'Refuse a pending pairing request.',
      access: ANY_ACCOUNT,
      input: Type.Object({ requestId: RequestId }),
      output: PairingViewSchema,
      async handler({ requestId }) {
        return pairing.reject(requestId);
      },
    }),
    list: defineOperation({
      name: 'remotes.list',
      summary: 'Paired remotes: all of them for an admin, those a user paired for a user.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ remotes: Type.Array(RemoteViewSchema) }),
      async handler(_input, ctx) {
        const remotes = directory.list();
        return { remotes: isAdmin(ctx) ? remotes : remotes.filter((remote) => remote.pairedBy === ctx.principal?.userId) };
      },
    }),
    revoke: defineOperation({
      name: 'remotes.revoke',
      summary: "Unpair a remote: its token stops working at once and its live sockets are closed.",
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id }),
      output: Type.Object({ revoked: Type.Literal(true), remote: RemoteViewSchema }),
      async handler({ id }, ctx) {
        ownRemote(ctx, id);
        return { revoked: true as const, remote: await directory.revoke(id) };
      },
    }),
  };
}

/** A paired remote's own session: where it is, and its key presses. */
export function remoteSessionOperations(control: RemoteControl) {
  return {
    session: defineOperation({
      name: 'remote.session',
      summary: "The calling remote, its active space and the space's remote sources.",
      access: PAIRED_REMOTE,
      input: Type.Object({}),
      output: SessionSchema,
      async handler(_input, ctx) {
        return control.session(remoteIdOf(ctx));
      },
    }),
    selectSpace: defineOperation({
      name: 'remote.space.select',
      summary: "Make a space the remote's active space.",
      access: PAIRED_REMOTE,
      input: Type.Object({ spaceId: Id }),
      output: SessionSchema,
      async handler({ spaceId }, ctx) {
        return control.selectSpace(remoteIdOf(ctx), spaceId);
      },
    }),
    activateSource: defineOperation({
      name: 'remote.source.activate',
      journal: 'activity',
      summary: "Activate a remote source of the remote's active space (power, input).",
      access: PAIRED_REMOTE,
      input: Type.Object({ sourceId: Id }),
      output: Type.Object({ source: RemoteSourceView, results: Type.Array(DeviceActionResultSchema) }),
      async handler({ sourceId }, ctx) {
        return control.activateSource(remoteIdOf(ctx), sourceId);
      },
    }),
    pressKey: defineOperation({
      name: 'remote.key.press',
      journal: 'activity',
      summary: 'Press a key: run what it maps to where the remote is.',
      description:
        'Resolution: an action map bound to the active source of the active space, then one of the space, then a global one; else a command of that name on the active source\'s device; else 404 KEY_NOT_MAPPED. A target that fails answers 200 with `ok: false` and its error.',
      access: PAIRED_REMOTE,
      input: Type.Object({ key: KeyName, params: KeyParams }),
      output: KeyOutcomeSchema,
      async handler({ key, params }, ctx) {
        return control.press(remoteIdOf(ctx), key, params, ctx.clientAddress);
      },
    }),
    pressKeys: defineOperation({
      name: 'remote.keys.press',
      journal: 'activity',
      summary: `Press up to ${MAX_KEYS_PER_BATCH} keys in order; each answers as one press would, failures included.`,
      access: PAIRED_REMOTE,
      input: Type.Object({
        keys: Type.Array(Type.Union([KeyName, Type.Object({ key: KeyName, params: KeyParams })]), { minItems: 1, maxItems: MAX_KEYS_PER_BATCH }),
        stopOnError: Type.Optional(Type.Boolean({ description: 'Skip the keys after the first that fails.' })),
      }),
      output: Type.Object({ ok: Type.Boolean(), results: Type.Array(BatchEntrySchema) }),
      async handler({ keys, stopOnError }, ctx) {
        const presses = keys.map((k) => (typeof k === 'string' ? { key: k } : k));
        const results = await control.pressMany(remoteIdOf(ctx), presses, stopOnError ?? false, ctx.clientAddress);
        return { ok: results.every((r) => r.ok), results };
      },
    }),
  };
}
