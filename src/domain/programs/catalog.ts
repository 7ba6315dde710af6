import type { DocumentCollection } from '../../platform/document-collection.js';
import type { ProgramDirectory, RoutineDevices } from '../home/ports.js';
import { programErrors } from './errors.js';
import type { Program } from './model.js';
import { devicesReachedBy, referencesOf } from './references.js';

/**
 * The program records and who refers to whom. It sits below the home model (which reads it to
 * name a zone's program and to refuse removing a zone or macro that programs use) and below the
 * program service (which saves, runs and schedules the same records).
 */
export class ProgramCatalog implements ProgramDirectory {
  constructor(readonly records: DocumentCollection<Program>) {}

  list(): Program[] {
    return this.records.list();
  }

  find(id: string): Program | undefined {
    return this.records.find(id);
  }

  require(id: string): Program {
    const program = this.records.find(id);
    if (!program) throw programErrors.PROGRAM_NOT_FOUND({ id }, { details: { programId: id } });
    return program;
  }

  programsUsingZone(zoneId: string): Program[] {
    return this.records.list().filter((p) => referencesOf(p).zones.has(zoneId));
  }

  programsUsingMacro(macroId: string): Program[] {
    return this.records.list().filter((p) => referencesOf(p).macros.has(macroId));
  }

  devicesReachedBy(programId: string, via: RoutineDevices): { devices: Set<string>; unresolved: boolean } {
    return devicesReachedBy(programId, { program: (id) => this.records.find(id), ...via });
  }
}
