import { Type } from 'typebox';
import { LOG_PAGE } from '../../platform/batched-log.js';
import { ADMIN_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { ActivityLog } from './activity-log.js';

const ActivityEntrySchema = Type.Object({
  id: Type.Integer(),
  at: Type.Integer({ description: 'Epoch ms.' }),
  actor: Type.Union([Type.String(), Type.Null()], { description: 'The account that acted (username).' }),
  operation: Type.String({ description: 'What was done: `devices.command`, `scenes.run`, `remote.key.press`…' }),
  subject: Type.Optional(Type.String({ description: 'The id of the device, scene or program it acted on.' })),
  subjectName: Type.Optional(Type.String({ description: 'Its name when the call was made.' })),
  count: Type.Optional(Type.Integer({ minimum: 2, description: 'The same call repeated within the second its entry waited: how many times.' })),
  lastAt: Type.Optional(Type.Integer({ description: 'When the last repeat was (epoch ms).' })),
  ok: Type.Boolean(),
  code: Type.Optional(Type.String({ description: "The failure's code." })),
  input: Type.Optional(Type.Unknown({ description: 'The command and its parameters, secrets masked, long values cut.' })),
  clientAddress: Type.Optional(Type.String()),
});

export function activityOperations(activity: ActivityLog) {
  return {
    list: defineOperation({
      name: 'activity.list',
      summary: "The household's activity log: device commands, scene and program runs, key presses and media controls, by whom and with what outcome, newest first.",
      description: 'Every call of an operation that uses the home, from every account and surface (docs/activity.md). The newest 50,000 entries are kept; entries are written within a second of the call.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({
        ...LOG_PAGE,
        actor: Type.Optional(Type.String({ maxLength: 100 })),
        subject: Type.Optional(Type.String({ maxLength: 200, description: 'Only entries about this device, scene or program id.' })),
        operation: Type.Optional(Type.String({ maxLength: 100, description: 'Only operations starting with this, e.g. `devices.`.' })),
      }),
      output: Type.Object({ entries: Type.Array(ActivityEntrySchema), hasMore: Type.Boolean() }),
      async handler({ limit, before, actor, subject, operation }) {
        return activity.query({ limit: limit ?? 100, ...(before ? { before } : {}), ...(actor ? { actor } : {}), ...(subject ? { subject } : {}), ...(operation ? { operation } : {}) });
      },
    }),
  };
}
