import { Type } from 'typebox';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import { ResultError } from '../devices/capability-schemas.js';
import { sceneObjectIds, type SceneCatalog, type SceneEntry } from './catalog.js';

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

/** Scenes devices expose: listing (from the catalog, or asking the devices first) and running. */
export function sceneOperations(scenes: SceneCatalog) {
  return {
    listScenes: defineOperation({
      name: 'scenes.list',
      summary: 'Scenes devices expose, as last listed; with refresh, the scene-capable online devices are asked first.',
      description: 'A device that fails or times out during the refresh keeps its last listed scenes and is reported in `refreshed` with its error.',
      access: OS_ADMIN,
      input: Type.Object({ refresh: Type.Optional(Type.Boolean({ description: 'Ask the devices (scenes.list) before answering.' })) }),
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
      async handler({ refresh }) {
        const refreshed = refresh ? await scenes.refresh() : undefined;
        return { scenes: withEntityIds(scenes.list()), ...(refreshed ? { refreshed } : {}) };
      },
    }),

    runScene: defineOperation({
      name: 'scenes.run',
      journal: 'activity',
      summary: 'Run a scene by its id `<deviceId>:<sceneId>` (driver command scenes.run {sceneId}).',
      description: '404 SCENE_NOT_FOUND; driver failures as for device commands (502 DRIVER_ERROR, 503 DRIVER_OFFLINE, 504 DRIVER_TIMEOUT).',
      access: OS_ADMIN,
      input: Type.Object({ sceneId: Type.String({ minLength: 3, maxLength: 401, description: '`<deviceId>:<sceneId>` as in scenes.list.' }) }),
      output: Type.Object({ sceneId: Type.String(), deviceId: Type.String(), ok: Type.Literal(true), result: Type.Optional(Type.Unknown()) }),
      async handler({ sceneId }) {
        const run = await scenes.run(sceneId);
        return { ...run, ok: true as const };
      },
    }),
  };
}
