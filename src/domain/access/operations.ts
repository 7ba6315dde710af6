import { Type } from 'typebox';
import { ADMIN_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { AccessGrants } from './access-grants.js';

const Id = Type.String({ minLength: 1, maxLength: 200 });

const UserAccessSchema = Type.Object(
  {
    userId: Type.String(),
    spaceIds: Type.Array(Type.String(), { description: 'Spaces the user sees, with every device whose room they are.' }),
    deviceIds: Type.Array(Type.String(), { description: 'Devices the user sees wherever they are.' }),
    updatedAt: Type.Union([Type.Integer(), Type.Null()], { description: 'Last change, ms since epoch; null when nothing was ever granted.' }),
  },
  { description: "A non-admin user's grants; admins see everything whatever their grants." },
);

/** What grants may name: each owner refuses unknown ids with its own 404, naming every one. */
export interface AccessTargets {
  /** Answers the account, or fails with the accounts' own USER_NOT_FOUND. */
  users: { get(id: string): Promise<unknown> };
  spaces: { requireAll(ids: Iterable<string>): void };
  devices: { requireAll(ids: Iterable<string>): void };
}

export function accessOperations(grants: AccessGrants, targets: AccessTargets) {
  const requireUser = async (id: string) => {
    await targets.users.get(id);
  };
  return {
    get: defineOperation({
      name: 'access.get',
      summary: "The spaces and devices a user sees (empty lists when nothing is granted).",
      access: ADMIN_ACCOUNT,
      input: Type.Object({ id: Id }),
      output: UserAccessSchema,
      async handler({ id }) {
        await requireUser(id);
        return grants.view(id);
      },
    }),
    set: defineOperation({
      name: 'access.set',
      summary: "Replace a user's grants: the spaces (with the devices in them) and the single devices they see.",
      description: '404 USER_NOT_FOUND for an unknown user; 404 SPACE_NOT_FOUND / DEVICE_NOT_FOUND naming every unknown id (`details.spaceIds` / `details.deviceIds`), and nothing changes.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({
        id: Id,
        spaceIds: Type.Array(Id, { maxItems: 1000 }),
        deviceIds: Type.Array(Id, { maxItems: 5000 }),
      }),
      output: UserAccessSchema,
      async handler({ id, spaceIds, deviceIds }) {
        await requireUser(id);
        targets.spaces.requireAll(spaceIds);
        targets.devices.requireAll(deviceIds);
        return grants.replace(id, spaceIds, deviceIds);
      },
    }),
  };
}
