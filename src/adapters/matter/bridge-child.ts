/**
 * The Matter bridge's own process (started by child-bridge.ts through the hub's process runner):
 * matter.js, its timers, its sockets and its garbage run here, so that an exception in them ends
 * this process and not the hub, and their pauses are not the hub's. It holds a copy of the
 * devices' views, kept current by the hub's batches, and runs bridge.ts on it unchanged.
 */
import { createInterface } from 'node:readline';
import type { DeviceView } from '../../domain/devices/device-service.js';
import { createDomainEventBus } from '../../domain/events.js';
import { systemClock, systemTimers } from '../../platform/clock.js';
import { messageOf } from '../../platform/network-failures.js';
import type { RunningMatterBridge } from './bridge.js';
import type { BridgeSnapshot, BridgeToHub, HubToBridge } from './bridge-protocol.js';

// Only the protocol goes to stdout: whatever else writes there (matter.js's logger, a stray
// console.log) goes to stderr, which the hub keeps as log lines.
const protocolOut = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
const send = (message: BridgeToHub): void => void protocolOut(`${JSON.stringify(message)}\n`);

const views = new Map<string, DeviceView>();
const events = createDomainEventBus();
const commands = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
let nextCommand = 1;
let bridge: RunningMatterBridge | undefined;
let lastSnapshot = '';

const log = {
  info: (obj: object, msg: string) => send({ t: 'log', level: 'info', obj, msg }),
  warn: (obj: object, msg: string) => send({ t: 'log', level: 'warn', obj, msg }),
  error: (obj: object, msg: string) => send({ t: 'log', level: 'error', obj, msg }),
};

function snapshotOf(b: RunningMatterBridge): BridgeSnapshot {
  const pairing = b.pairing();
  return { port: b.port, commissioned: b.commissioned(), fabrics: b.fabrics(), ...(pairing ? { pairing } : {}), devices: b.devices(), unmapped: b.unmapped() };
}

/** Sends the bridge's state when it changed: after each batch, and at least each second (a controller commissions, a window closes). */
function reportIfChanged(): void {
  if (!bridge) return;
  const snapshot = snapshotOf(bridge);
  const text = JSON.stringify(snapshot);
  if (text === lastSnapshot) return;
  lastSnapshot = text;
  send({ t: 'snapshot', snapshot });
}

async function handle(message: HubToBridge): Promise<void> {
  switch (message.t) {
    case 'start': {
      for (const view of message.devices) views.set(view.id, view);
      try {
        const { startMatterBridge } = await import('./bridge.js');
        bridge = await startMatterBridge({
          ...message.options,
          devices: () => [...views.values()],
          device: (id) => views.get(id),
          events,
          command: (deviceId, command, params, from) =>
            new Promise<void>((resolve, reject) => {
              const id = nextCommand++;
              commands.set(id, { resolve, reject });
              send({ t: 'command', id, deviceId, command, params, from });
            }),
          log,
          // A process of its own, with no hub to inject them: the system's.
          clock: systemClock,
          timers: systemTimers,
        });
      } catch (err) {
        send({ t: 'failed', error: messageOf(err) });
        process.exit(1);
      }
      const snapshot = snapshotOf(bridge);
      lastSnapshot = JSON.stringify(snapshot);
      send({ t: 'started', snapshot });
      setInterval(reportIfChanged, 1000).unref();
      return;
    }
    case 'changes': {
      const at = Date.now();
      // The bridge marks a device for its next sync on any of these; the view it then reads is the hub's latest.
      for (const view of message.views) {
        const known = views.has(view.id);
        views.set(view.id, view);
        events.emit(known ? 'device.state_changed' : 'device.online_changed', known ? { deviceId: view.id, state: {}, changed: {}, at } : { deviceId: view.id, online: view.online, at });
      }
      for (const deviceId of message.removed) {
        views.delete(deviceId);
        events.emit('device.removed', { deviceId, at });
      }
      for (const { deviceId, press } of message.presses) events.emit('device.button_pressed', { deviceId, press, at });
      setImmediate(reportIfChanged);
      return;
    }
    case 'commanded': {
      const pending = commands.get(message.id);
      commands.delete(message.id);
      if (message.error === undefined) pending?.resolve();
      else pending?.reject(new Error(message.error));
      return;
    }
    case 'call': {
      const running = bridge;
      try {
        if (!running) throw new Error('the bridge has not started');
        if (message.call === 'openCommissioningWindow') await running.openCommissioningWindow();
        else if (message.call === 'removeFabric') await running.removeFabric(message.fabricIndex);
        else await running.close();
        send({ t: 'called', id: message.id, snapshot: snapshotOf(running) });
      } catch (err) {
        send({ t: 'called', id: message.id, error: messageOf(err), ...(running ? { snapshot: snapshotOf(running) } : { snapshot: { port: 0, commissioned: false, fabrics: [], devices: [], unmapped: [] } }) });
      }
      if (message.t === 'call' && message.call === 'close') process.exit(0);
      return;
    }
  }
}

// Messages are handled in order: a batch never overtakes the start it follows.
let queue: Promise<void> = Promise.resolve();
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line) as HubToBridge;
  // A command's answer is not queued: a call in the queue may be waiting on that very command.
  if (message.t === 'commanded') return void handle(message);
  queue = queue.then(() => handle(message)).catch<void>((err: unknown) => log.error({ err: messageOf(err) }, 'Matter bridge process: a message from the hub failed'));
});
// The hub went (its end of stdin closed): nothing is left to bridge for.
process.stdin.on('end', () => process.exit(0));
