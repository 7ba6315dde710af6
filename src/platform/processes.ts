/**
 * The port through which the domain runs child processes (local drivers, Homebridge, npm and
 * pip). The domain says what to run and what to do with its output; the adapter
 * (`src/adapters/process/`) spawns it in a process group of its own, splits its output into
 * bounded lines, stops it (SIGTERM, then SIGKILL after a grace on the injected timers) and makes
 * sure that it never outlives the hub, even a hub killed with SIGKILL.
 */
import type { Writable } from 'node:stream';

export interface ProcessSpec {
  /** What the process is, in logs and in the hub's record of its children: `driver:hue`, `homebridge`, `npm`. */
  label: string;
  command: string;
  args: readonly string[];
  cwd?: string;
  /** The whole environment of the child (nothing is inherited that is not here). */
  env: Record<string, string | undefined>;
  /** `pipe`: the hub writes to the child's stdin (`RunningProcess.stdin`). Default `ignore`. */
  stdin?: 'pipe' | 'ignore';
  /** The longest stdout line handed on (bytes); a longer one is dropped and reported. Default 64 KiB. */
  maxStdoutLineBytes?: number;
  /** The longest stderr line handed on (bytes). Default 16 KiB. */
  maxStderrLineBytes?: number;
}

export interface ProcessExit {
  code: number | null;
  signal: string | null;
  /** It could not be started at all (the program is missing, for instance). */
  startError?: { code?: string; message: string };
}

export interface ProcessHandlers {
  /** It was started (it has a pid). */
  onSpawn?(): void;
  /** One line of stdout, without its newline. */
  onStdoutLine?(line: Buffer): void;
  /** A stdout line longer than the limit was dropped. */
  onStdoutOverflow?(): void;
  /** One line of stderr (UTF-8, without its newline). */
  onStderrLine?(line: string): void;
  onStderrOverflow?(): void;
  /** Once: it exited (its output read to the end, within a bound), or it could not be started. */
  onExit?(exit: ProcessExit): void;
}

export interface RunningProcess {
  readonly label: string;
  /** Set once it was spawned. */
  readonly pid: number | undefined;
  /** Its stdin, when the spec asked for a pipe. */
  readonly stdin: Writable | undefined;
  readonly running: boolean;
  /** Settles once with how it ended; never rejects. */
  readonly exited: Promise<ProcessExit>;
  /** Stops reading its stdout (back-pressure: the child blocks once the pipe is full). */
  pauseOutput(): void;
  resumeOutput(): void;
  /** SIGTERM to its process group, SIGKILL after `graceMs`; resolves when it exited. */
  stop(graceMs: number): Promise<ProcessExit>;
  /** SIGKILL to its process group now. */
  kill(): void;
}

export interface ProcessRunner {
  start(spec: ProcessSpec, handlers?: ProcessHandlers): RunningProcess;
}

/** The last lines of some output, oldest first, each cut to `maxChars`. */
export class OutputTail {
  private readonly lines: string[] = [];

  constructor(
    private readonly size: number,
    private readonly maxChars = 500,
  ) {}

  push(line: string): void {
    this.lines.push(line.length > this.maxChars ? `${line.slice(0, this.maxChars)}…` : line);
    if (this.lines.length > this.size) this.lines.shift();
  }

  get length(): number {
    return this.lines.length;
  }

  toArray(): string[] {
    return [...this.lines];
  }
}
