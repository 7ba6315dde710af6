import type { Clock, Timers } from '../../platform/clock.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import { tryCommand } from '../devices/command-results.js';
import type { DeviceActionResult } from '../devices/model.js';
import { homeErrors } from './errors.js';
import type { ActionMap, Macro, MacroStep } from './model.js';
import type { ProgramDirectory } from './ports.js';

export interface MacroRunResult {
  macroId: string;
  ok: boolean;
  steps: Array<DeviceActionResult & { index: number; status: 'succeeded' | 'failed' | 'skipped' }>;
}

/** Macros (ordered device commands with optional delays) and action maps (control key → command). */
export class MacroService {
  constructor(
    readonly macros: DocumentCollection<Macro>,
    readonly actionMaps: DocumentCollection<ActionMap>,
    private readonly devices: DeviceService,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly programs: ProgramDirectory,
    private readonly spaceExists: (spaceId: string) => boolean,
  ) {}

  async save(input: { id?: string; name: string; steps: MacroStep[]; stopOnError?: boolean }): Promise<Macro> {
    this.devices.registry.requireAll(input.steps.map((s) => s.deviceId));
    const { item, created } = await this.macros.save({ id: input.id, name: input.name, steps: input.steps, stopOnError: input.stopOnError ?? false });
    this.events.emit(created ? 'macro.created' : 'macro.updated', { macro: item, at: this.clock.now() });
    return item;
  }

  /** Refuses (409 MACRO_IN_USE, naming them) while programs run the macro. */
  async remove(id: string): Promise<void> {
    this.macros.get(id);
    const users = this.programs.programsUsingMacro(id).map((p) => ({ kind: 'program', id: p.id, name: p.name }));
    if (users.length > 0) throw homeErrors.MACRO_IN_USE({ id, users: users.map((u) => `program ${u.name}`).join(', ') }, { details: { users } });
    await this.macros.remove(id);
    this.events.emit('macro.removed', { macroId: id, at: this.clock.now() });
  }

  /** Runs the steps in order and answers each one's result. */
  async run(id: string): Promise<MacroRunResult> {
    const macro = this.macros.get(id);
    this.events.emit('macro.run_started', { macroId: id, at: this.clock.now() });
    const steps: MacroRunResult['steps'] = [];
    let failed = false;
    for (const [index, step] of macro.steps.entries()) {
      if (failed && macro.stopOnError) {
        steps.push({ index, deviceId: step.deviceId, command: step.command, ok: false, status: 'skipped' });
        continue;
      }
      if (step.delayMs) await new Promise<void>((resolve) => this.timers.setTimeout(resolve, step.delayMs!));
      const result = await tryCommand(this.devices, step.deviceId, step.command, step.params ?? {});
      failed ||= !result.ok;
      steps.push({ ...result, index, status: result.ok ? 'succeeded' : 'failed' });
    }
    const outcome = { macroId: id, ok: steps.every((s) => s.ok), steps };
    this.events.emit('macro.run_finished', { macroId: id, ok: outcome.ok, at: this.clock.now() });
    return outcome;
  }

  async saveActionMap(input: { id?: string; name: string; controlKey: string; deviceId: string; command: string; params?: Record<string, unknown>; spaceId?: string | null }): Promise<ActionMap> {
    this.devices.registry.requireAll([input.deviceId]);
    if (input.spaceId && !this.spaceExists(input.spaceId)) throw homeErrors.SPACE_NOT_FOUND({ id: input.spaceId }, { details: { spaceId: input.spaceId } });
    const { item, created } = await this.actionMaps.save({ ...input, spaceId: input.spaceId ?? null });
    this.events.emit(created ? 'action_map.created' : 'action_map.updated', { actionMap: item, at: this.clock.now() });
    return item;
  }

  /** Mapped controls of a removed space apply everywhere rather than nowhere. */
  async spaceRemoved(spaceId: string): Promise<void> {
    for (const map of this.actionMaps.list()) if (map.spaceId === spaceId) await this.actionMaps.update(map.id, () => ({ spaceId: null }));
  }

  async removeActionMap(id: string): Promise<void> {
    await this.actionMaps.remove(id);
    this.events.emit('action_map.removed', { actionMapId: id, at: this.clock.now() });
  }

  /** Runs the command an action map binds; by id or by control key. */
  async trigger(idOrControlKey: string, spaceId?: string): Promise<DeviceActionResult & { actionMapId: string }> {
    const map =
      this.actionMaps.find(idOrControlKey) ??
      this.actionMaps.list().find((m) => m.controlKey === idOrControlKey && (!spaceId || m.spaceId === spaceId || !m.spaceId));
    if (!map) throw homeErrors.ACTION_MAP_NOT_FOUND({ id: idOrControlKey }, { details: { id: idOrControlKey } });
    const result = await tryCommand(this.devices, map.deviceId, map.command, map.params ?? {});
    this.events.emit('action_map.triggered', { actionMapId: map.id, ok: result.ok, at: this.clock.now() });
    return { ...result, actionMapId: map.id };
  }
}
