/** A program as the home model names it. */
export interface ProgramRef {
  id: string;
  name: string;
}

/**
 * What the home model reads of programs: which exist, and which use a zone or a macro (removing
 * one they use is refused). The program catalog implements it, one module below the home model:
 * zones name a program and programs name zones, so the records both read sit beneath both, and
 * home never imports programs.
 */
export interface ProgramDirectory {
  find(id: string): ProgramRef | undefined;
  /** The program a record refers to; PROGRAM_NOT_FOUND (details `{programId}`) when there is none. */
  require(id: string): ProgramRef;
  /** Programs whose steps set the zone's volume. */
  programsUsingZone(zoneId: string): ProgramRef[];
  /** Programs whose steps run the macro. */
  programsUsingMacro(macroId: string): ProgramRef[];
  /**
   * Every device a program reaches, through the programs it runs and the macros and zones it
   * names (whose devices `via` tells), transitively; `unresolved` when something it names is gone.
   */
  devicesReachedBy(programId: string, via: RoutineDevices): { devices: Set<string>; unresolved: boolean };
}

/** The devices of the home's own routines and groups, as the program directory needs them. */
export interface RoutineDevices {
  macroDevices(id: string): readonly string[] | undefined;
  zoneDevices(id: string): readonly string[] | undefined;
}
