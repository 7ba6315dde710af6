import type { DeviceActionResult } from '../devices/model.js';
import type { MacroService } from '../home/macros.js';
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
        deviceId: m.deviceId,
        command: m.command,
        spaceId: m.spaceId ?? null,
      }),
    );
    return [...fromPrograms, ...fromMaps];
  }

  async run(id: string, wait: boolean): Promise<{ presetId: string; run?: ProgramRun; action?: DeviceActionResult }> {
    const preset = this.list().find((p) => p.id === id);
    if (!preset) throw programErrors.PRESET_NOT_FOUND({ id }, { details: { id } });
    if (preset.kind === 'program') return { presetId: id, run: await this.programs.run(preset.programId!, { trigger: 'preset', wait }) };
    return { presetId: id, action: await this.macros.trigger(preset.actionMapId!) };
  }
}
