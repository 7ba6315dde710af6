import { defineIntegration } from '../contract.js';
import { zwaveErrors } from './errors.js';
import { networkKeys, type StoredKeys, type ZwaveSecurityKeys } from './keys.js';
import { ZwaveNetwork } from './network.js';
import { zwaveOperations } from './operations.js';

/** A serial device (`/dev/ttyACM0`, `/dev/serial/by-id/…`, `COM3`) or a networked stick (`tcp://host:port`). */
function checkPort(value: string): string | undefined {
  if (/^tcp:\/\//i.test(value)) {
    try {
      const url = new URL(value);
      return url.hostname && url.port ? undefined : 'a networked stick is tcp://host:port';
    } catch {
      return 'a networked stick is tcp://host:port';
    }
  }
  return /^(\/|COM\d+$)/i.test(value) ? undefined : 'a serial device path (/dev/ttyACM0, /dev/serial/by-id/…) or tcp://host:port';
}

/** The bound of one Z-Wave command: a routed node that must be reached through others can take seconds. */
const COMMAND_TIMEOUT_MS = 15_000;

/**
 * Z-Wave (docs/zwave.md): a USB or networked controller driven by zwave-js, its nodes mapped into
 * the device model by their command classes (mapping.ts), inclusion with S2, and repairs.
 */
export const zwaveIntegration = defineIntegration({
  name: 'zwave',
  title: 'Z-Wave',
  doc: 'docs/zwave.md',
  settings: {
    port: {
      env: 'ZWAVE_PORT',
      label: 'Controller port',
      description: 'The Z-Wave controller: a serial device (`/dev/serial/by-id/…` names the stick whatever port it is on) or `tcp://host:port` for a networked one (ser2net, a Z-Wave JS UI remote stick). Unset, Z-Wave is off.',
      example: '/dev/serial/by-id/usb-0658_0200-if00',
      check: checkPort,
    },
  },
  dataFolders: ['zwave'],
  requirements: ['zwave-js'],
  oncePerCluster: true,
  errors: zwaveErrors,
  adminPage: { label: 'Z-Wave', url: '/panel/zwave', load: () => import('./admin-page.js') },
  create(context) {
    const keys = context.documents<StoredKeys>('keys');
    let networkKeysOnce: Promise<ZwaveSecurityKeys> | undefined;
    const network = new ZwaveNetwork({
      port: () => context.settings.values().port,
      cacheDir: context.folder('zwave'),
      // Read (or made) once: every reopen of the stick after a failure uses the same keys.
      keys: () => (networkKeysOnce ??= networkKeys(keys, context.secrets, context.clock.now()).catch((err: unknown) => {
        networkKeysOnce = undefined;
        throw err;
      })),
      ...(context.requirements ? { requirements: context.requirements } : {}),
      ...(context.leases ? { leases: context.leases } : {}),
      manager: context.manager,
      integrations: context.integrations,
      processes: context.processes,
      clock: context.clock,
      timers: context.timers,
      log: context.log,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
    });
    const operations = zwaveOperations(network);
    const z = operations.zwave;
    return {
      operations,
      routes: [
        { method: 'GET', url: '/zwave/status', operation: z.status },
        { method: 'POST', url: '/zwave/inclusion', operation: z.startInclusion },
        { method: 'DELETE', url: '/zwave/inclusion', operation: z.stopInclusion },
        { method: 'POST', url: '/zwave/inclusion/pin', operation: z.enterPin },
        { method: 'POST', url: '/zwave/exclusion', operation: z.startExclusion },
        { method: 'POST', url: '/zwave/nodes/:nodeId/reinterview', operation: z.reinterview },
        { method: 'POST', url: '/zwave/nodes/:nodeId/heal', operation: z.heal },
        { method: 'DELETE', url: '/zwave/nodes/:nodeId', operation: z.removeFailed },
      ],
      start: () => network.start(),
      stop: () => network.stop(),
      reconfigure: () => network.reconfigure(),
    };
  },
});
