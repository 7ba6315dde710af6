import { Type } from 'typebox';
import { errors } from '../../platform/errors.js';
import { ADMIN_ACCOUNT, ANY_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { PlayerService } from './player-service.js';
import { AssignmentInput, AssignmentSchema, PlayerEntrySchema, PlayerId, PlayerInput, RosterRecordSchema, StatusReportInput } from './schemas.js';

export function playerOperations(players: PlayerService) {
  return {
    roster: defineOperation({
      name: 'players.roster',
      summary: "The caller's assigned players as roster records, in a stable order (empty when none).",
      description:
        'Status comes from the runtime state authority when the linked logical device is live (`statusSource: runtime`), else from the last persisted status (`persisted`), else `offline` with `statusSource: unknown`; never from LAN discovery.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ players: Type.Array(RosterRecordSchema) }),
      async handler(_input, ctx) {
        if (!ctx.principal) throw errors.AUTH_REQUIRED();
        return { players: await players.rosterOf(ctx.principal.userId) };
      },
    }),
    list: defineOperation({
      name: 'players.list',
      summary: 'Every player: the record as stored, its roster view and the users assigned to it.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ players: Type.Array(PlayerEntrySchema) }),
      async handler() {
        await players.settled();
        return { players: players.entries() };
      },
    }),
    get: defineOperation({
      name: 'players.get',
      summary: 'One player: the record as stored, its roster view and the users assigned to it.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ id: PlayerId }),
      output: PlayerEntrySchema,
      async handler({ id }) {
        await players.settled();
        return players.entry(id);
      },
    }),
    save: defineOperation({
      name: 'players.save',
      summary: 'Create a player (no id, or an id not used yet: its fleet identity for good) or replace one; its persisted status stays.',
      description: '`logicalDeviceId` must name a device (404 `DEVICE_NOT_FOUND`) and `roomId` a space (404 `SPACE_NOT_FOUND`); `accessDetails` is stored as given.',
      access: ADMIN_ACCOUNT,
      input: PlayerInput,
      output: Type.Intersect([PlayerEntrySchema, Type.Object({ created: Type.Boolean() })]),
      async handler(input) {
        return players.save(input);
      },
    }),
    remove: defineOperation({
      name: 'players.remove',
      summary: 'Remove a player; users who had it no longer do.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ id: PlayerId }),
      output: Type.Object({ removed: Type.Literal(true), id: Type.String() }),
      async handler({ id }) {
        await players.remove(id);
        return { removed: true as const, id };
      },
    }),
    reportStatus: defineOperation({
      name: 'players.status.report',
      summary: "Record a player's status as a fleet peer or an admin saw it; the roster answers it while the runtime does not know the player.",
      access: ADMIN_ACCOUNT,
      input: StatusReportInput,
      output: PlayerEntrySchema,
      async handler({ id, status, lastSeenAt }) {
        return players.reportStatus(id, status, lastSeenAt);
      },
    }),
    getAssignments: defineOperation({
      name: 'players.assignments.get',
      summary: 'The players a user has.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, description: 'User id.' }) }),
      output: AssignmentSchema,
      async handler({ id }) {
        return players.assignmentOf(id);
      },
    }),
    setAssignments: defineOperation({
      name: 'players.assignments.set',
      summary: 'Replace the players a user has; unknown users and players answer 404.',
      access: ADMIN_ACCOUNT,
      input: AssignmentInput,
      output: AssignmentSchema,
      async handler({ id, playerIds }) {
        return players.assign(id, playerIds);
      },
    }),
  };
}
