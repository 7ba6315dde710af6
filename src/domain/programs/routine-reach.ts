import type { Audience } from '../access/audience.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { MacroService } from '../home/macros.js';
import type { ZoneService } from '../home/zones.js';
import type { ProgramService } from './program-service.js';
import { devicesReachedBy, type RoutineWorld } from './references.js';

/**
 * Whether a routine (a program or a macro) stays within what a caller sees: a user without the
 * admin role may list, read and run the routines whose every device, reached through the macros,
 * zones and programs they run, is granted to them. One that reaches nothing, or something gone,
 * is outside, so a user with nothing granted sees none.
 */
export class RoutineReach {
  private readonly world: RoutineWorld;

  constructor(
    programs: ProgramService,
    private readonly macros: MacroService,
    zones: ZoneService,
    private readonly registry: DeviceRegistry,
  ) {
    this.world = {
      program: (id) => programs.find(id),
      macroDevices: (id) => macros.macros.find(id)?.steps.map((step) => step.deviceId),
      zoneDevices: (id) => zones.zones.find(id)?.deviceIds,
    };
  }

  seesProgram(audience: Audience, programId: string): boolean {
    if (audience.everything) return true;
    const { devices, unresolved } = devicesReachedBy(programId, this.world);
    return !unresolved && this.allSeen(audience, devices);
  }

  seesMacro(audience: Audience, macroId: string): boolean {
    if (audience.everything) return true;
    const devices = this.world.macroDevices(macroId);
    return devices !== undefined && this.allSeen(audience, devices);
  }

  private allSeen(audience: Audience, deviceIds: Iterable<string>): boolean {
    let any = false;
    for (const id of deviceIds) {
      if (!audience.seesDevice(this.registry.find(id))) return false;
      any = true;
    }
    return any;
  }
}
