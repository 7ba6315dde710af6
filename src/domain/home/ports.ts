import type { Program, ProgramRun } from '../programs/model.js';

/** What the home model needs of programs; the program service provides it. */
export interface ProgramPort {
  list(): Program[];
  find(id: string): Program | undefined;
  /** Starts a run; with `wait`, resolves when it has finished. */
  run(programId: string, options: { trigger: ProgramRun['trigger']; path?: 'on' | 'off'; wait?: boolean }): Promise<ProgramRun>;
  /** Programs whose steps run the macro. */
  programsUsingMacro(macroId: string): Program[];
  /** Programs whose steps set the zone's volume. */
  programsUsingZone(zoneId: string): Program[];
}
