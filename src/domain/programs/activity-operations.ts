import { Type } from 'typebox';
import { failureOf } from '../../platform/errors.js';
import { ANY_ACCOUNT, defineOperation, OS_ADMIN, type Principal } from '../../platform/operations.js';
import type { AudienceResolver } from '../access/audience.js';
import type { RoutineReach } from '../home/routine-reach.js';
import { DeviceActionResultSchema, Id, MacroRunSchema, PresetSchema } from '../home/schemas.js';
import type { ActionMapRunner } from './action-maps.js';
import { ActionMapOutcomeSchema } from './action-map-schemas.js';
import { programErrors } from './errors.js';
import type { ActivityPreset, ActivityPresets } from './presets.js';
import type { ProgramService } from './program-service.js';
import { ProgramRunSchema } from './run-schema.js';

const Wait = Type.Optional(Type.Boolean({ description: 'Answer when the run has finished instead of when it has started.' }));

/**
 * Programs as the home model offers them: a zone's assigned program, and the activity presets
 * generated from programs and mapped controls. They are programs' operations (they run programs),
 * listed with the home's in `hub.ops.home`.
 */
export function activityOperations(programs: ProgramService, presets: ActivityPresets, actionMaps: ActionMapRunner, visibility: { audiences: AudienceResolver; reach: RoutineReach }) {
  const { audiences, reach } = visibility;
  /** A preset is seen with what it runs: its program, or its mapped control's room and target. */
  const seesPreset = (principal: Principal | undefined, preset: ActivityPreset) => {
    const audience = audiences.audienceOf(principal);
    return preset.kind === 'program' ? reach.seesProgram(audience, preset.programId!) : reach.seesTarget(audience, preset);
  };
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
      summary: 'Activity presets, generated from programs and mapped controls; a user without the admin role sees those whose program or target is within what is granted to them.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ presets: Type.Array(PresetSchema) }),
      async handler(_input, { principal }) {
        return { presets: presets.list().filter((preset) => seesPreset(principal, preset)) };
      },
    }),
    runPreset: defineOperation({
      name: 'activity_presets.run',
      journal: 'activity',
      summary: 'Run an activity preset: its program, or its mapped control\'s target (device command, macro or program).',
      description: 'A preset the caller does not see answers 404 PRESET_NOT_FOUND, as one that does not exist.',
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id, wait: Wait }),
      output: Type.Object({
        presetId: Type.String(),
        run: Type.Optional(ProgramRunSchema),
        action: Type.Optional(DeviceActionResultSchema),
        macro: Type.Optional(MacroRunSchema),
      }),
      async handler({ id, wait }, { principal }) {
        const preset = presets.list().find((p) => p.id === id);
        if (preset && !seesPreset(principal, preset)) throw programErrors.PRESET_NOT_FOUND({ id }, { details: { id } });
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
