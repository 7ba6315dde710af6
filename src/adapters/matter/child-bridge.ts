import { DeviceFeed } from '../../domain/devices/device-feed.js';
import type { DeviceView } from '../../domain/devices/device-service.js';
import type { ProcessExit, ProcessRunner, RunningProcess } from '../../platform/processes.js';
import { messageOf } from '../../platform/network-failures.js';
import type { MatterBridgeOptions, RunningMatterBridge } from './bridge.js';
import { requirementFoldersForChild } from '../requirements/resolution.js';
import { childProgram } from '../process/child-program.js';
import { MAX_LINE_BYTES, type BridgeSnapshot, type BridgeToHub, type HubToBridge } from './bridge-protocol.js';

const START_TIMEOUT_MS = 60_000;
const CALL_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

export interface ChildBridgeOptions extends Omit<MatterBridgeOptions, 'devices'> {
  devices(): readonly DeviceView[];
  processes: ProcessRunner;
  /** Where matter.js was installed, when not in the hub's node_modules (src/adapters/requirements). */
  requirementFolders?: readonly string[];
  /** Called once when the process ends other than by `close()` (a crash, a kill): the bridge is gone. */
  onExit(exit: ProcessExit, why: string): void;
}

/**
 * Starts the Matter bridge in a process of its own and answers for it as the in-process bridge
 * did. The devices' changes go to it in batches, one per turn of the event loop (each device
 * once, with its latest view); a controller's commands come back as the hub's commands; its state
 * (`status()`) is the last snapshot it sent, so reading it costs no round trip.
 */
export async function startChildBridge(o: ChildBridgeOptions): Promise<RunningMatterBridge> {
  let snapshot: BridgeSnapshot = { port: o.port, commissioned: false, fabrics: [], devices: [], unmapped: [] };
  let closing = false;
  let settleStart: { resolve: () => void; reject: (err: Error) => void } | undefined;
  const calls = new Map<number, { resolve: () => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  let nextCall = 1;

  // Written before the child has spawned too: the pipe keeps it until the child reads.
  const write = (message: HubToBridge) => {
    const stdin = child.stdin;
    if (stdin && !stdin.destroyed && stdin.writable) stdin.write(`${JSON.stringify(message)}\n`);
  };

  const onMessage = (message: BridgeToHub) => {
    switch (message.t) {
      case 'started':
        snapshot = message.snapshot;
        settleStart?.resolve();
        return;
      case 'failed':
        settleStart?.reject(new Error(message.error));
        return;
      case 'snapshot':
        snapshot = message.snapshot;
        return;
      case 'called': {
        snapshot = message.snapshot;
        const call = calls.get(message.id);
        calls.delete(message.id);
        if (!call) return;
        clearTimeout(call.timer);
        if (message.error === undefined) call.resolve();
        else call.reject(new Error(message.error));
        return;
      }
      case 'command':
        o.command(message.deviceId, message.command, message.params, message.from).then(
          () => write({ t: 'commanded', id: message.id }),
          (err: unknown) => write({ t: 'commanded', id: message.id, error: messageOf(err) }),
        );
        return;
      case 'log':
        o.log[message.level](message.obj, message.msg);
        return;
    }
  };

  // matter.js installed under DATA_DIR (a home box installed with `npm ci --omit=dev`) is found through a resolve hook.
  const resolution = requirementFoldersForChild(o.requirementFolders ?? []);
  const child: RunningProcess = o.processes.start(
    { label: 'matter-bridge', command: process.execPath, args: [...resolution.args, ...childProgram(import.meta.url, 'bridge-child')], env: { ...process.env, NODE_OPTIONS: '', ...resolution.env }, stdin: 'pipe', maxStdoutLineBytes: MAX_LINE_BYTES },
    {
      onStdoutLine: (line) => {
        let message: BridgeToHub;
        try {
          message = JSON.parse(line.toString('utf8')) as BridgeToHub;
        } catch {
          return o.log.warn({ line: line.toString('utf8').slice(0, 200) }, 'Matter bridge process: a line that is not the protocol');
        }
        onMessage(message);
      },
      onStdoutOverflow: () => o.log.error({}, 'Matter bridge process: a message longer than the limit was dropped'),
      onStderrLine: (line) => o.log.info({ bridge: line.slice(0, 2000) }, 'Matter bridge process output'),
      onExit: (exit) => {
        const why = exit.startError ? `could not be started: ${exit.startError.message}` : exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
        settleStart?.reject(new Error(`the bridge process ${why}`));
        for (const call of calls.values()) {
          clearTimeout(call.timer);
          call.reject(new Error(`the bridge process ${why}`));
        }
        calls.clear();
        unsubscribe();
        if (!closing && started) o.onExit(exit, why);
      },
    },
  );
  // A broken pipe (the child just died) is its exit's business, not an uncaught error.
  child.stdin?.on('error', () => undefined);

  // Changes are gathered for one turn and sent together: a scene of 50 lights is one line.
  const feed = new DeviceFeed(o.events, setImmediate, ({ deviceIds, presses }) => {
    const views: DeviceView[] = [];
    const removed: string[] = [];
    for (const id of deviceIds) {
      const view = o.device(id);
      if (view && !view.removed) views.push(view);
      else removed.push(id);
    }
    write({ t: 'changes', views, removed, presses });
  });
  const unsubscribe = () => feed.close();

  let started = false;
  const startTimer = setTimeout(() => settleStart?.reject(new Error(`the bridge process did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
  try {
    await new Promise<void>((resolve, reject) => {
      settleStart = { resolve, reject };
      write({ t: 'start', options: { storageDir: o.storageDir, hubId: o.hubId, port: o.port, bind: o.bind, mdnsInterface: o.mdnsInterface }, devices: [...o.devices()] });
    });
  } catch (err) {
    closing = true;
    unsubscribe();
    await child.stop(STOP_GRACE_MS);
    throw err;
  } finally {
    clearTimeout(startTimer);
    settleStart = undefined;
  }
  started = true;

  type Call = Extract<HubToBridge, { t: 'call' }>;
  const call = (message: Call extends infer C ? (C extends Call ? Omit<C, 'id'> : never) : never) =>
    new Promise<void>((resolve, reject) => {
      if (!child.running) return reject(new Error('the bridge process is not running'));
      const id = nextCall++;
      const timer = setTimeout(() => {
        calls.delete(id);
        reject(new Error(`the bridge process did not answer within ${CALL_TIMEOUT_MS / 1000} s`));
      }, CALL_TIMEOUT_MS);
      calls.set(id, { resolve, reject, timer });
      write({ ...message, id } as HubToBridge);
    });

  return {
    get port() {
      return snapshot.port;
    },
    get pid() {
      return child.pid;
    },
    commissioned: () => snapshot.commissioned,
    fabrics: () => snapshot.fabrics,
    pairing: () => snapshot.pairing,
    devices: () => snapshot.devices,
    unmapped: () => snapshot.unmapped,
    openCommissioningWindow: () => call({ t: 'call', call: 'openCommissioningWindow' }),
    removeFabric: (fabricIndex: number) => call({ t: 'call', call: 'removeFabric', fabricIndex }),
    async close() {
      closing = true;
      unsubscribe();
      // The bridge closes its node (and its storage) itself; one that does not in time is stopped.
      await call({ t: 'call', call: 'close' }).catch(() => undefined);
      await child.stop(STOP_GRACE_MS);
    },
  };
}
