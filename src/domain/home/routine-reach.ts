import type { Audience } from '../access/audience.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { Macro, Zone } from './model.js';
import type { ProgramDirectory, RoutineDevices } from './ports.js';
import type { DocumentCollection } from '../../platform/document-collection.js';

/**
 * Whether a routine (a program or a macro) stays within what a caller sees: a user without the
 * admin role may list, read and run the routines whose every device, reached through the macros,
 * zones and programs they run, is granted to them. One that reaches nothing, or something gone,
 * is outside, so a user with nothing granted sees none.
 */
export class RoutineReach {
  private readonly via: RoutineDevices;

  constructor(
    private readonly programs: ProgramDirectory,
    macros: DocumentCollection<Macro>,
    zones: DocumentCollection<Zone>,
    private readonly registry: Pick<DeviceRegistry, 'find'>,
  ) {
    this.via = {
      macroDevices: (id) => macros.find(id)?.steps.map((step) => step.deviceId),
      zoneDevices: (id) => zones.find(id)?.deviceIds,
    };
  }

  seesProgram(audience: Audience, programId: string): boolean {
    if (audience.everything) return true;
    const { devices, unresolved } = this.programs.devicesReachedBy(programId, this.via);
    return !unresolved && this.allSeen(audience, devices);
  }

  seesMacro(audience: Audience, macroId: string): boolean {
    if (audience.everything) return true;
    const devices = this.via.macroDevices(macroId);
    return devices !== undefined && this.allSeen(audience, devices);
  }

  /**
   * Whether what a mapped control (or its activity preset) runs stays within what a caller sees:
   * its room, and the device, macro or program it names.
   */
  seesTarget(audience: Audience, target: { spaceId?: string | null; deviceId?: string; macroId?: string; programId?: string }): boolean {
    if (audience.everything) return true;
    if (target.spaceId && !audience.seesSpace(target.spaceId)) return false;
    if (target.deviceId !== undefined && !audience.seesDevice(this.registry.find(target.deviceId))) return false;
    if (target.macroId !== undefined && !this.seesMacro(audience, target.macroId)) return false;
    return target.programId === undefined || this.seesProgram(audience, target.programId);
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
