import type { Clock } from '../../platform/clock.js';
import { defineModule } from '../../platform/module.js';
import type { DeviceActions } from '../devices/actions.js';
import { errorInfo } from '../devices/command-results.js';
import type { DeviceService } from '../devices/device-service.js';
import { buildHomeGraph } from '../graph/graph.js';
import { homeErrors } from '../home/errors.js';
import type { MacroService } from '../home/macros.js';
import type { SpaceService } from '../home/spaces.js';
import type { ZoneService } from '../home/zones.js';
import type { ProgramService } from '../programs/program-service.js';
import type { SceneCatalog } from '../scenes/catalog.js';
import { IntentEngine } from './engine.js';
import { intentOperations } from './operations.js';

export interface IntentsModuleDeps {
  devices: DeviceService;
  actions: DeviceActions;
  spaces: SpaceService;
  zones: ZoneService;
  macros: MacroService;
  programs: ProgramService;
  scenes: SceneCatalog;
  clock: Clock;
}

/**
 * The local intent engine, over the home graph (built per sentence). Its ports report what
 * could not be done as results instead of throwing, so one failing target never hides the others.
 */
export function intentsModule({ devices, actions, spaces, zones, macros, programs, scenes, clock }: IntentsModuleDeps) {
  const graphSources = { devices, spaces, zones, macros, programs, scenes, now: () => clock.now() };
  const intents = new IntentEngine({
    graph: () => buildHomeGraph(graphSources),
    perform: (deviceId, action) => actions.perform(deviceId, action),
    runProgram: async (programId) => {
      try {
        const run = await programs.run(programId, { trigger: 'intent' });
        return { ok: true, runId: run.id };
      } catch (err) {
        return { ok: false, error: errorInfo(err) };
      }
    },
    runScene: async (sceneId) => {
      try {
        await scenes.run(sceneId);
        return { ok: true };
      } catch (err) {
        return { ok: false, error: errorInfo(err) };
      }
    },
    runMacro: async (macroId) => {
      try {
        const result = await macros.run(macroId);
        return result.ok ? { ok: true } : { ok: false, error: homeErrors.MACRO_FAILED.info({ macro: macros.macros.get(macroId).name }) };
      } catch (err) {
        return { ok: false, error: errorInfo(err) };
      }
    },
    setZoneVolume: async (zoneId, volume) => {
      const { results } = await zones.setVolume(zoneId, { volume });
      return { ok: results.every((r) => r.ok), results: results.map((r) => ({ deviceId: r.deviceId, ok: r.ok })) };
    },
  });
  return defineModule({
    name: 'intents',
    needs: ['devices', 'home', 'programs', 'scenes'],
    intents,
    operations: { intents: intentOperations(intents) },
  });
}
