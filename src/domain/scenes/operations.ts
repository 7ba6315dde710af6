import { Type } from 'typebox';
import { errors } from '../../platform/errors.js';
import { ANY_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { AudienceResolver, DeviceLocation } from '../access/audience.js';
import { ResultError } from '../devices/capability-schemas.js';
import { sceneObjectIds, type SceneCatalog, type SceneEntry } from './catalog.js';
import { sceneErrors } from './errors.js';

export const SceneViewSchema = Type.Object({
  id: Type.String({ description: '`<deviceId>:<sceneId>`.' }),
  deviceId: Type.String(),
  sceneId: Type.String(),
  name: Type.String(),
  entityId: Type.String({ description: 'Its `scene.*` entity.' }),
});

/** Each scene with the id of its `scene.*` entity (the graph's entities name them the same way). */
export function withEntityIds(scenes: readonly SceneEntry[]): Array<SceneEntry & { entityId: string }> {
  const objectIds = sceneObjectIds(scenes);
  return scenes.map((s) => ({ ...s, entityId: `scene.${objectIds.get(s.id)!}` }));
}

/**
 * Scenes devices expose: listing (from the catalog, or asking the devices first) and running.
 * A scene is seen with its device: a household member lists and runs the scenes of the devices
 * granted to them, and one of another device answers as one that does not exist.
 */
export function sceneOperations(scenes: SceneCatalog, audiences: AudienceResolver, findDevice: (id: string) => DeviceLocation | undefined) {
  return {
    listScenes: defineOperation({
      name: 'scenes.list',
      summary: 'Scenes devices expose, as last listed; with refresh, the scene-capable online devices are asked first.',
      description: 'A device that fails or times out during the refresh keeps its last listed scenes and is reported in `refreshed` with its error.',
      access: ANY_ACCOUNT,
      input: Type.Object({ refresh: Type.Optional(Type.Boolean({ description: 'Ask the devices (scenes.list) before answering (administrators).' })) }),
      output: Type.Object({
        scenes: Type.Array(SceneViewSchema),
        refreshed: Type.Optional(
          Type.Array(
            Type.Object({
              deviceId: Type.String(),
              ok: Type.Boolean(),
              scenes: Type.Optional(Type.Integer({ description: 'Scenes the device listed.' })),
              error: Type.Optional(ResultError),
            }),
            { description: 'One entry per device asked (with refresh).' },
          ),
        ),
      }),
      async handler({ refresh }, { principal }) {
        const audience = audiences.audienceOf(principal);
        // Asking every device is the administrators' to do; the others read what was last listed.
        if (refresh && !audience.everything) throw errors.ROLE_REQUIRED({ roles: 'admin' });
        const refreshed = refresh ? await scenes.refresh() : undefined;
        const seen = withEntityIds(scenes.list()).filter((scene) => audience.everything || audience.seesDevice(findDevice(scene.deviceId)));
        return { scenes: seen, ...(refreshed ? { refreshed } : {}) };
      },
    }),

    runScene: defineOperation({
      name: 'scenes.run',
      journal: 'activity',
      summary: 'Run a scene by its id `<deviceId>:<sceneId>` (driver command scenes.run {sceneId}).',
      description: '404 SCENE_NOT_FOUND; driver failures as for device commands (502 DRIVER_ERROR, 503 DRIVER_OFFLINE, 504 DRIVER_TIMEOUT).',
      access: ANY_ACCOUNT,
      input: Type.Object({ sceneId: Type.String({ minLength: 3, maxLength: 401, description: '`<deviceId>:<sceneId>` as in scenes.list.' }) }),
      output: Type.Object({ sceneId: Type.String(), deviceId: Type.String(), ok: Type.Literal(true), result: Type.Optional(Type.Unknown()) }),
      async handler({ sceneId }, { principal }) {
        const audience = audiences.audienceOf(principal);
        if (!audience.everything && !audience.seesDevice(findDevice(sceneId.slice(0, sceneId.indexOf(':'))))) {
          throw sceneErrors.SCENE_NOT_FOUND({ id: sceneId }, { details: { sceneId } });
        }
        const run = await scenes.run(sceneId);
        return { ...run, ok: true as const };
      },
    }),
  };
}
