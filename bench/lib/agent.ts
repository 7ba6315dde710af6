import path from 'node:path';
import { makeTempDir, stopOnce, track, type Resource } from './cleanup.js';
import { baseEnv, spawnLogged, type ChildHandle } from './proc.js';
import { REPO_ROOT } from './service.js';

/**
 * A bench agent: a client (driver, load generator, stream clients...) that runs in its own
 * child process, so that its CPU is its own and never counted as the service's. The harness
 * drives it over Node's IPC channel with request/answer calls; the agent side is
 * bench/agents/runtime.ts. Agents exit by themselves when the harness goes away.
 */
export interface AgentHandle extends Resource {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildHandle;
  /** Calls `method` in the agent; rejects on its error, on timeout, or when it exits. */
  call<T = unknown>(method: string, params?: unknown, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

interface Answer {
  id?: number;
  ok?: boolean;
  result?: unknown;
  error?: string;
  ready?: boolean;
}

export interface AgentOptions {
  env?: Record<string, string>;
  readyTimeoutMs?: number;
  /** How long `stop` waits before SIGKILL (default 3 s). */
  stopGraceMs?: number;
  /**
   * Another file than `bench/agents/<script>.ts`, with its arguments: a benchmark that is its own
   * agent in a role (`bench/mqtt.ts --bench-mqtt-role=peer`). `script` then only names its log.
   */
  entry?: { file: string; args?: string[] };
  /** Whether an answer that does not come in time says the agent's log tail too. */
  logTailOnTimeout?: boolean;
}

/** Starts `bench/agents/<script>.ts` (or `options.entry`) with `node --import tsx` and waits until it is ready. */
export async function startAgent(name: string, script: string, options: AgentOptions = {}): Promise<AgentHandle> {
  const tmp = makeTempDir(`hcs-bench-${script}`);
  const entry = options.entry ? [options.entry.file, ...(options.entry.args ?? [])] : [path.join('bench', 'agents', `${script}.ts`)];
  const child = spawnLogged(name, process.execPath, ['--import', 'tsx', ...entry], {
    cwd: REPO_ROOT,
    logPath: path.join(tmp.path, `${script}.log`),
    env: { ...baseEnv(), NODE_ENV: 'production', ...options.env },
    ipc: true,
  });

  let nextId = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout }>();
  let readyResolve: (() => void) | undefined;
  const ready = new Promise<void>((resolve) => {
    readyResolve = resolve;
  });
  child.child.on('message', (raw: unknown) => {
    const msg = raw as Answer;
    if (msg.ready) {
      readyResolve?.();
      return;
    }
    const entry = msg.id === undefined ? undefined : waiting.get(msg.id);
    if (!entry) return;
    waiting.delete(msg.id!);
    clearTimeout(entry.timer);
    if (msg.ok) entry.resolve(msg.result);
    else entry.reject(new Error(`${name}: ${msg.error ?? 'failed'}`));
  });
  void child.exited.then((info) => {
    for (const [id, entry] of waiting) {
      waiting.delete(id);
      clearTimeout(entry.timer);
      entry.reject(new Error(`${name} exited (code ${info.code}, signal ${info.signal}) during a call; log tail:\n${child.logTail()}`));
    }
  });

  const stop = stopOnce(() => handle, child, tmp, options.stopGraceMs ?? 3000);

  const handle: AgentHandle = {
    label: `${name} agent (pid ${child.pid})`,
    name,
    pid: child.pid,
    child,
    call<T>(method: string, params?: unknown, timeoutMs = 60_000): Promise<T> {
      if (!child.running()) return Promise.reject(new Error(`${name} is not running; log tail:\n${child.logTail()}`));
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`${name}: ${method} did not answer within ${timeoutMs} ms${options.logTailOnTimeout ? `; log tail:\n${child.logTail()}` : ''}`));
        }, timeoutMs);
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
        child.child.send({ id, method, params: params ?? {} });
      });
    },
    stop,
    dispose: stop,
    disposeSync() {
      child.disposeSync();
      tmp.disposeSync();
    },
  };
  track(handle);

  const timeoutMs = options.readyTimeoutMs ?? 20_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ready,
      child.exited.then((info) => {
        throw new Error(`${name} exited before it was ready (code ${info.code}); log tail:\n${child.logTail()}`);
      }),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${name} was not ready within ${timeoutMs} ms; log tail:\n${child.logTail()}`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return handle;
}
