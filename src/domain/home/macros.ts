import type { Clock, Timers } from '../../platform/clock.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import { tryCommand } from '../devices/command-results.js';
import type { DeviceActionResult } from '../devices/model.js';
import { homeErrors } from './errors.js';
import type { ActionMap, ActionMapTarget, Macro, MacroStep } from './model.js';
import type { ProgramDirectory } from './ports.js';

export interface MacroRunResult {
  macroId: string;
  ok: boolean;
  steps: Array<DeviceActionResult & { index: number; status: 'succeeded' | 'failed' | 'skipped' }>;
}

/** A map as saved: the stored record without its stamps, the id optional (a new map). */
export type ActionMapInput = Omit<ActionMap, 'id' | 'createdAt' | 'updatedAt'> & { id?: string };

/** Macros (ordered device commands with optional delays) and action maps (control key → target); the programs module runs the maps. */
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
    const users = [
      ...this.programs.programsUsingMacro(id).map((p) => ({ kind: 'program', id: p.id, name: p.name })),
      ...this.actionMaps.list().filter((m) => m.macroId === id).map((m) => ({ kind: 'action_map', id: m.id, name: m.name })),
    ];
    if (users.length > 0) throw homeErrors.MACRO_IN_USE({ id, users: users.map((u) => `${u.kind.replace('_', ' ')} ${u.name}`).join(', ') }, { details: { users } });
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

  async saveActionMap(input: ActionMapInput): Promise<ActionMap> {
    const { id, name, controlKey, spaceId, sourceId, ...target } = input;
    const fields = { name, controlKey, ...this.checkedTarget(target), spaceId: spaceId ?? null, ...(sourceId ? { sourceId } : {}) };
    if (spaceId && !this.spaceExists(spaceId)) throw homeErrors.SPACE_NOT_FOUND({ id: spaceId }, { details: { spaceId } });
    if (sourceId && !this.devices.registry.list().some((d) => d.remoteSources.some((meta) => `${d.id}:${meta.id}` === sourceId))) {
      throw homeErrors.UNKNOWN_REMOTE_SOURCE({ sourceId }, { details: { sourceId } });
    }
    const { item, created } = await this.actionMaps.save({ id, ...fields });
    this.events.emit(created ? 'action_map.created' : 'action_map.updated', { actionMap: item, at: this.clock.now() });
    return item;
  }

  /** Exactly one target, and what it names exists (404 otherwise). */
  private checkedTarget({ deviceId, command, params, macroId, programId }: Omit<ActionMapInput, 'id' | 'name' | 'controlKey' | 'spaceId' | 'sourceId'>) {
    const given = [deviceId !== undefined || command !== undefined || params !== undefined, macroId !== undefined, programId !== undefined];
    if (given.filter(Boolean).length !== 1 || (given[0] && (!deviceId || !command))) {
      throw homeErrors.ACTION_MAP_TARGET_INVALID({}, { details: { deviceId, command, macroId, programId } });
    }
    if (macroId) return { macroId: this.macros.get(macroId).id };
    if (programId) return { programId: this.programs.require(programId).id };
    this.devices.registry.requireAll([deviceId!]);
    return { deviceId: deviceId!, command: command!, ...(params ? { params } : {}) };
  }

  /** Mapped controls of a removed space apply everywhere rather than nowhere. */
  async spaceRemoved(spaceId: string): Promise<void> {
    for (const map of this.actionMaps.list()) if (map.spaceId === spaceId) await this.actionMaps.update(map.id, () => ({ spaceId: null }));
  }

  async removeActionMap(id: string): Promise<void> {
    await this.actionMaps.remove(id);
    this.events.emit('action_map.removed', { actionMapId: id, at: this.clock.now() });
  }
}

/** What a mapped control runs; records from before macro and program targets are device commands. */
export function actionMapTarget(map: ActionMap): ActionMapTarget {
  if (map.macroId) return { kind: 'macro', macroId: map.macroId };
  if (map.programId) return { kind: 'program', programId: map.programId };
  return { kind: 'device_command', deviceId: map.deviceId!, command: map.command!, ...(map.params ? { params: map.params } : {}) };
}
