import type { Clock } from '../../platform/clock.js';
import type { FailureInfo } from '../../platform/errors.js';
import { errorInfo, tryCommand } from '../devices/command-results.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import { homeErrors } from '../home/errors.js';
import { actionMapTarget, type MacroService } from '../home/macros.js';
import type { ActionMap, ActionMapTarget } from '../home/model.js';
import type { ProgramService } from './program-service.js';

/** What running a mapped control did: its target, whether it went well, and the target's own result. */
export interface ActionMapOutcome {
  actionMapId: string;
  target: ActionMapTarget;
  ok: boolean;
  /** A device command's driver result, the macro run, or the started program run. */
  result?: unknown;
  error?: FailureInfo;
  /** Device command targets also name the device and command here, as before macro and program targets existed. */
  deviceId?: string;
  command?: string;
}

/** Where a key is pressed: a remote's active space and that space's active remote source. */
export interface KeyContext {
  spaceId: string | null;
  sourceId: string | null;
}

/**
 * Runs action maps. It sits in the programs module because a map may run a program, and the
 * home model (which stores the maps) is below programs; `action_maps.trigger`, activity presets
 * and remote key presses all run maps here.
 */
export class ActionMapRunner {
  constructor(
    private readonly macros: MacroService,
    private readonly programs: ProgramService,
    private readonly devices: DeviceService,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
  ) {}

  /** A map by id, else by control key: with a space given, that space's map before a global one. */
  find(idOrControlKey: string, spaceId?: string): ActionMap {
    const byId = this.macros.actionMaps.find(idOrControlKey);
    if (byId) return byId;
    const candidates = this.macros.actionMaps.list().filter((m) => m.controlKey === idOrControlKey && (!spaceId || m.spaceId === spaceId || !m.spaceId));
    const map = candidates.find((m) => spaceId && m.spaceId === spaceId) ?? candidates[0];
    if (!map) throw homeErrors.ACTION_MAP_NOT_FOUND({ id: idOrControlKey }, { details: { id: idOrControlKey } });
    return map;
  }

  /**
   * The map a key press resolves to: one bound to the space's active source, else one of the
   * space, else a global one (no space, no source); the oldest wins a tie.
   */
  resolveKey(key: string, where: KeyContext): ActionMap | undefined {
    let best: { map: ActionMap; rank: number } | undefined;
    for (const map of this.macros.actionMaps.list()) {
      if (map.controlKey !== key) continue;
      const rank = rankIn(map, where);
      if (rank > 0 && (!best || rank > best.rank)) best = { map, rank };
    }
    return best?.map;
  }

  /** Runs the map's target; a failure is reported in the outcome, not thrown. */
  async run(map: ActionMap, extraParams: Record<string, unknown> = {}): Promise<ActionMapOutcome> {
    const target = actionMapTarget(map);
    const outcome = { actionMapId: map.id, target, ...(await this.runTarget(target, extraParams)) };
    this.events.emit('action_map.triggered', { actionMapId: map.id, ok: outcome.ok, at: this.clock.now() });
    return outcome;
  }

  private async runTarget(target: ActionMapTarget, extraParams: Record<string, unknown>): Promise<Omit<ActionMapOutcome, 'actionMapId' | 'target'>> {
    try {
      switch (target.kind) {
        case 'device_command': {
          const { result, error, ok } = await tryCommand(this.devices, target.deviceId, target.command, { ...target.params, ...extraParams });
          return { ok, deviceId: target.deviceId, command: target.command, ...(result === undefined ? {} : { result }), ...(error ? { error } : {}) };
        }
        case 'macro': {
          const run = await this.macros.run(target.macroId);
          const name = this.macros.macros.find(target.macroId)?.name ?? target.macroId;
          return { ok: run.ok, result: run, ...(run.ok ? {} : { error: homeErrors.MACRO_FAILED.info({ macro: name }) }) };
        }
        case 'program':
          return { ok: true, result: await this.programs.run(target.programId, { trigger: 'action_map' }) };
      }
    } catch (err) {
      return { ok: false, error: errorInfo(err) };
    }
  }
}

/** 3: bound to the active source; 2: the space's; 1: global; 0: does not apply here. */
function rankIn(map: ActionMap, { spaceId, sourceId }: KeyContext): number {
  if (map.sourceId) return map.sourceId === sourceId && (!map.spaceId || map.spaceId === spaceId) ? 3 : 0;
  if (map.spaceId) return map.spaceId === spaceId ? 2 : 0;
  return 1;
}
