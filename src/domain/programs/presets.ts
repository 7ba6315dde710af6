import { failureOf } from '../../platform/errors.js';
import type { DeviceActionResult } from '../devices/model.js';
import type { MacroRunResult, MacroService } from '../home/macros.js';
import type { ActionMapRunner } from './action-maps.js';
import { programErrors } from './errors.js';
import type { ProgramRun } from './model.js';
import type { ProgramService } from './program-service.js';

export interface ActivityPreset {
  /** `program:<id>` or `action:<id>`: stable as long as its source exists. */
  id: string;
  kind: 'program' | 'action_map';
  name: string;
  programId?: string;
  actionMapId?: string;
  controlKey?: string;
  macroId?: string;
  deviceId?: string;
  command?: string;
  spaceId?: string | null;
  semantics?: string[];
}

/**
 * Activity presets are generated, never stored: one per program and one per mapped control, so
 * they are current whenever programs or action maps change.
 */
export class ActivityPresets {
  constructor(
    private readonly programs: ProgramService,
    private readonly macros: MacroService,
    private readonly actionMaps: ActionMapRunner,
  ) {}

  list(): ActivityPreset[] {
    const fromPrograms = this.programs
      .list()
      .map((p): ActivityPreset => ({ id: `program:${p.id}`, kind: 'program', name: p.name, programId: p.id, semantics: p.semantics ?? [] }));
    const fromMaps = this.macros.actionMaps.list().map(
      (m): ActivityPreset => ({
        id: `action:${m.id}`,
        kind: 'action_map',
        name: m.name,
        actionMapId: m.id,
        controlKey: m.controlKey,
        ...(m.macroId ? { macroId: m.macroId } : {}),
        ...(m.programId ? { programId: m.programId } : {}),
        ...(m.deviceId ? { deviceId: m.deviceId, command: m.command } : {}),
        spaceId: m.spaceId ?? null,
      }),
    );
    return [...fromPrograms, ...fromMaps];
  }

  /**
   * A mapped control's preset answers as its target would: a device command's result in `action`
   * (failures included), a macro's run in `macro`, a program's in `run` (one that cannot start fails).
   */
  async run(id: string, wait: boolean): Promise<{ presetId: string; run?: ProgramRun; action?: DeviceActionResult; macro?: MacroRunResult }> {
    const preset = this.list().find((p) => p.id === id);
    if (!preset) throw programErrors.PRESET_NOT_FOUND({ id }, { details: { id } });
    if (preset.kind === 'program') return { presetId: id, run: await this.programs.run(preset.programId!, { trigger: 'preset', wait }) };
    const outcome = await this.actionMaps.run(this.actionMaps.find(preset.actionMapId!));
    if (outcome.target.kind === 'device_command') {
      const { ok, command, result, error } = outcome;
      return { presetId: id, action: { deviceId: outcome.target.deviceId, ok, command, ...(result === undefined ? {} : { result }), ...(error ? { error } : {}) } };
    }
    if (!outcome.ok && outcome.result === undefined) throw failureOf(outcome.error, outcome);
    return { presetId: id, ...(outcome.target.kind === 'macro' ? { macro: outcome.result as MacroRunResult } : { run: outcome.result as ProgramRun }) };
  }
}
