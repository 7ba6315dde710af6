import { Type } from 'typebox';
import { failureOf } from '../../platform/errors.js';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import { DeviceActionResultSchema, Id, MacroRunSchema, PresetSchema } from '../home/schemas.js';
import type { ActionMapRunner } from './action-maps.js';
import { ActionMapOutcomeSchema } from './action-map-schemas.js';
import type { ActivityPresets } from './presets.js';
import type { ProgramService } from './program-service.js';
import { ProgramRunSchema } from './run-schema.js';

const Wait = Type.Optional(Type.Boolean({ description: 'Answer when the run has finished instead of when it has started.' }));

/**
 * Programs as the home model offers them: a zone's assigned program, and the activity presets
 * generated from programs and mapped controls. They are programs' operations (they run programs),
 * listed with the home's in `hub.ops.home`.
 */
export function activityOperations(programs: ProgramService, presets: ActivityPresets, actionMaps: ActionMapRunner) {
  return {
    runZoneProgram: defineOperation({
      name: 'zones.program.run',
      journal: 'activity',
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
      journal: 'activity',
      summary: 'Run an activity preset: its program, or its mapped control\'s target (device command, macro or program).',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, wait: Wait }),
      output: Type.Object({
        presetId: Type.String(),
        run: Type.Optional(ProgramRunSchema),
        action: Type.Optional(DeviceActionResultSchema),
        macro: Type.Optional(MacroRunSchema),
      }),
      async handler({ id, wait }) {
        return presets.run(id, wait ?? false);
      },
    }),
    triggerActionMap: defineOperation({
      name: 'action_maps.trigger',
      journal: 'activity',
      summary: 'Run what a mapped control binds (by id or control key): a device command, a macro or a program.',
      description:
        'By control key, a map of `spaceId` wins over a global one. A target that fails fails the call with its own error (COMMAND_NOT_SUPPORTED, DRIVER_ERROR, MACRO_FAILED, PROGRAM_RUNNING…), `details` carrying the whole outcome.',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, spaceId: Type.Optional(Id) }),
      output: ActionMapOutcomeSchema,
      async handler({ id, spaceId }) {
        const outcome = await actionMaps.run(actionMaps.find(id, spaceId));
        if (!outcome.ok) throw failureOf(outcome.error, outcome);
        return outcome;
      },
    }),
  };
}
