import { Type } from 'typebox';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import { DeviceActionResultSchema, Id, PresetSchema } from '../home/schemas.js';
import type { ActivityPresets } from './presets.js';
import type { ProgramService } from './program-service.js';
import { ProgramRunSchema } from './run-schema.js';

const Wait = Type.Optional(Type.Boolean({ description: 'Answer when the run has finished instead of when it has started.' }));

/**
 * Programs as the home model offers them: a zone's assigned program, and the activity presets
 * generated from programs and mapped controls. They are programs' operations (they run programs),
 * listed with the home's in `hub.ops.home`.
 */
export function activityOperations(programs: ProgramService, presets: ActivityPresets) {
  return {
    runZoneProgram: defineOperation({
      name: 'zones.program.run',
      summary: 'Run the program assigned to a zone.',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, wait: Wait }),
      output: ProgramRunSchema,
      async handler({ id, wait }) {
        return programs.runZoneProgram(id, wait ?? false);
      },
    }),
    listPresets: defineOperation({
      name: 'activity_presets.list',
      summary: 'Activity presets, generated from programs and mapped controls.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ presets: Type.Array(PresetSchema) }),
      async handler() {
        return { presets: presets.list() };
      },
    }),
    runPreset: defineOperation({
      name: 'activity_presets.run',
      summary: 'Run an activity preset: its program, or its mapped control\'s command.',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, wait: Wait }),
      output: Type.Object({ presetId: Type.String(), run: Type.Optional(ProgramRunSchema), action: Type.Optional(DeviceActionResultSchema) }),
      async handler({ id, wait }) {
        return presets.run(id, wait ?? false);
      },
    }),
  };
}
