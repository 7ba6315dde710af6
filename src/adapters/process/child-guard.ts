import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../platform/atomic-file.js';

/**
 * The reaper: a few lines of POSIX shell, so it costs about a megabyte where a second Node would
 * cost forty. It reads `+<pgid>` and `-<pgid>` lines on stdin, the process groups of the hub's
 * children. Its stdin is a pipe from the hub; when the hub dies, however it dies (kill -9
 * included), the kernel closes the hub's end, `read` meets end of input, and the reaper stops
 * every group still listed: SIGTERM, then SIGKILL a second later. It ignores the signals a
 * terminal sends to the hub's group (Ctrl-C must not kill it before the hub is gone), and sits in
 * a process group of its own so that killing the hub's group does not take it too. No `prctl`:
 * this works the same on Linux and macOS.
 */
const REAPER_SCRIPT = `
trap '' INT HUP TERM QUIT
groups=' '
while IFS= read -r line; do
  p=\${line#?}
  case "$p" in ''|*[!0-9]*) continue ;; esac
  case "$line" in
    +*) groups="$groups$p " ;;
    -*) kept=' '; for g in $groups; do [ "$g" = "$p" ] || kept="$kept$g "; done; groups=$kept ;;
  esac
done
[ "$groups" = ' ' ] && exit 0
for g in $groups; do kill -TERM -"$g" 2>/dev/null; done
i=0
while [ $i -lt 10 ]; do
  alive=''
  for g in $groups; do kill -0 -"$g" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && exit 0
  sleep 0.1
  i=$((i+1))
done
for g in $groups; do kill -KILL -"$g" 2>/dev/null; done
exit 0
`;

export interface ChildRecord {
  pid: number;
  label: string;
  /** The arguments it was started with (not the program: a script's program may be an interpreter the system chose). */
  args: string[];
  /** The value of MARKER_VARIABLE in its environment, which no process.title rewrites. */
  marker?: string;
  startedAt: number;
}

export interface ChildGuardLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

const isPosix = process.platform !== 'win32';

/**
 * Makes sure no child of the hub outlives it. Every child runs in a process group of its own
 * (the runner spawns it detached), and the guard:
 * - tells the reaper (above) about each group, so that the children stop when the hub dies;
 * - keeps a record of them in `recordFile` (under DATA_DIR), so that a start after a crash the
 *   reaper did not survive either (the machine's OOM killer taking both, say) stops what the last
 *   run left behind: `reapLeftovers` stops each recorded process whose command line still ends
 *   with the arguments recorded, so that a recycled pid of an unrelated program is never touched.
 */
export class ChildGuard {
  private reaper: ChildProcess | undefined;
  private readonly children = new Map<number, ChildRecord>();
  private recordWrite: Promise<void> = Promise.resolve();
  private recordDirty = false;
  private closed = false;

  constructor(
    private readonly recordFile: string | undefined,
    private readonly log: ChildGuardLog,
  ) {}

  track(record: ChildRecord): void {
    if (this.closed) return;
    this.children.set(record.pid, record);
    this.tellReaper(`+${record.pid}`);
    this.saveRecord();
  }

  untrack(pid: number): void {
    if (!this.children.delete(pid)) return;
    this.tellReaper(`-${pid}`);
    this.saveRecord();
  }

  get tracked(): number {
    return this.children.size;
  }

  /** The reaper's pid (tests check that it exits with the hub). */
  get reaperPid(): number | undefined {
    return this.reaper?.pid;
  }

  /**
   * Stops the processes a previous run recorded and that still run; answers how many. Called
   * once at start, before anything is spawned.
   */
  async reapLeftovers(): Promise<number> {
    if (!this.recordFile || !isPosix) return 0;
    let records: ChildRecord[];
    try {
      const parsed = JSON.parse(await fs.readFile(this.recordFile, 'utf8')) as { children?: unknown };
      records = Array.isArray(parsed.children) ? (parsed.children as ChildRecord[]).filter(isRecord) : [];
    } catch {
      return 0;
    }
    let stopped = 0;
    for (const record of records) {
      if (this.children.has(record.pid)) continue;
      if (!(await isRecordedProcess(record))) continue;
      this.log.warn({ pid: record.pid, label: record.label }, 'a child process of a previous run is still running; stopping it');
      await stopGroup(record.pid);
      stopped++;
    }
    this.saveRecord();
    return stopped;
  }

  /** Ends the reaper (what is still tracked is stopped by it) and waits for the record to be written. */
  async close(): Promise<void> {
    this.closed = true;
    const reaper = this.reaper;
    this.reaper = undefined;
    if (reaper?.stdin && !reaper.stdin.destroyed) reaper.stdin.end();
    this.saveRecord();
    await this.recordWrite;
  }

  private tellReaper(line: string): void {
    if (!isPosix) return;
    const reaper = this.reaper ?? this.startReaper();
    if (!reaper?.stdin || reaper.stdin.destroyed) return;
    reaper.stdin.write(`${line}\n`);
  }

  private startReaper(): ChildProcess | undefined {
    if (this.closed) return undefined;
    try {
      const reaper = spawn('/bin/sh', ['-c', REAPER_SCRIPT, 'hcs-reaper'], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
      reaper.on('error', (err) => this.log.warn({ err: err.message }, 'the child reaper could not start; children are stopped by the record at the next start'));
      reaper.stdin?.on('error', () => undefined);
      reaper.on('exit', () => {
        if (this.reaper === reaper) this.reaper = undefined;
      });
      // Neither the reaper nor its pipe keeps the hub's event loop alive.
      reaper.unref();
      (reaper.stdin as unknown as { unref?: () => void } | null)?.unref?.();
      this.reaper = reaper;
      return reaper;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'the child reaper could not start');
      return undefined;
    }
  }

  /** Rewrites the record after the current write, coalescing changes made meanwhile. */
  private saveRecord(): void {
    const file = this.recordFile;
    if (!file) return;
    if (this.recordDirty) return;
    this.recordDirty = true;
    this.recordWrite = this.recordWrite.then(async () => {
      this.recordDirty = false;
      const body = `${JSON.stringify({ hubPid: process.pid, children: [...this.children.values()] }, null, 1)}\n`;
      try {
        await fs.mkdir(path.dirname(file), { recursive: true });
        await writeFileAtomic(file, body);
      } catch (err) {
        this.log.warn({ err: (err as Error).message, file }, 'could not record the hub\u2019s child processes');
      }
    });
  }
}

function isRecord(value: unknown): value is ChildRecord {
  const r = value as ChildRecord;
  return !!r && Number.isInteger(r.pid) && r.pid > 1 && Array.isArray(r.args) && r.args.every((a) => typeof a === 'string') && typeof r.label === 'string';
}

/** Set in each child's environment: a process that renames itself (Homebridge sets process.title) keeps it. */
export const MARKER_VARIABLE = 'HCS_PROCESS_ID';

/** Whether the recorded process still runs as the hub started it: its marker (Linux) or its command line. */
async function isRecordedProcess(record: ChildRecord): Promise<boolean> {
  if (record.marker) {
    const environ = await fs.readFile(`/proc/${record.pid}/environ`, 'utf8').catch(() => undefined);
    if (environ !== undefined) return environ.split('\0').includes(`${MARKER_VARIABLE}=${record.marker}`);
  }
  return commandLineEndsWith(record.pid, record.args);
}

/** Whether process `pid` runs and its command line ends with `args` (Linux: /proc; elsewhere: ps). */
export async function commandLineEndsWith(pid: number, args: readonly string[]): Promise<boolean> {
  if (args.length === 0) return false;
  let argv: string[] | undefined;
  try {
    const raw = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8');
    argv = raw.split('\0');
    if (argv.at(-1) === '') argv.pop();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (await fs.stat('/proc/self').then(() => true, () => false))) return false;
  }
  if (argv) return argv.length >= args.length && args.every((a, i) => argv[argv.length - args.length + i] === a);
  const line = await new Promise<string | undefined>((resolve) =>
    execFile('ps', ['-ww', '-o', 'args=', '-p', String(pid)], { timeout: 2000 }, (err, stdout) => resolve(err ? undefined : stdout.trim())),
  );
  return line !== undefined && line.endsWith(args.join(' '));
}

const alive = (pid: number) => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * SIGTERM to the group, SIGKILL after 2 s. The wait is wall time on purpose: it is a real
 * process's, at start, before the hub's clock drives anything.
 */
async function stopGroup(pgid: number): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pgid, sig);
    } catch {
      try {
        process.kill(pgid, sig);
      } catch {
        // gone
      }
    }
  };
  signal('SIGTERM');
  for (let i = 0; i < 20 && alive(pgid); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive(pgid)) signal('SIGKILL');
}
