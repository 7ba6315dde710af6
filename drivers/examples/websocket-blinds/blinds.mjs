// Example external driver: two simulated window blinds, connected to the hub over the driver
// WebSocket with the SDK. Not a local process: it has no *.driver.json manifest and is started
// by hand (or by a service manager) wherever it runs:
//
//   node drivers/examples/websocket-blinds/blinds.mjs ws://127.0.0.1:8080/driver
//
// A hub with DRIVER_AUTH=token needs a driver token issued for example.blinds, in BLINDS_TOKEN.
//
// The SDK registers (driver.register, protocolVersion 1), announces the devices, answers the
// hub's ACTIONs, and reconnects with backoff (re-registering and re-announcing both blinds) when
// the hub restarts.

import process from 'node:process';
import { createDriver } from '../../sdk/hub-driver.mjs';

const url = process.argv[2] ?? process.env.BLINDS_HUB_URL ?? 'ws://127.0.0.1:8080/driver';
/** Percent per movement step, and the time a step takes. */
const STEP = 20;
const STEP_MS = Number(process.env.BLINDS_STEP_MS ?? 200);

const driver = createDriver({
  driverKey: 'example.blinds',
  instanceId: process.env.BLINDS_INSTANCE_ID ?? 'blinds-1',
  transport: { url },
  name: 'Example blinds (WebSocket)',
  version: '1.0.0',
  ...(process.env.BLINDS_TOKEN ? { token: process.env.BLINDS_TOKEN } : {}),
});

/** position: 0 = closed, 100 = open. */
const blinds = new Map([
  ['blind-living', { name: 'Living Room Blinds', position: 0, target: 0, moving: undefined }],
  ['blind-bedroom', { name: 'Bedroom Blinds', position: 100, target: 100, moving: undefined }],
]);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Moves a blind step by step toward its target, reporting each position. A new command for a
 * moving blind changes its target; the motor keeps going and every caller waits for the end.
 */
function moveTo(blind, deviceId, target) {
  blind.target = target;
  if (!blind.moving) {
    blind.moving = (async () => {
      while (blind.position !== blind.target) {
        await sleep(STEP_MS);
        const delta = Math.max(-STEP, Math.min(STEP, blind.target - blind.position));
        blind.position += delta;
        driver.reportState(deviceId, { position: blind.position });
      }
      blind.moving = undefined;
    })();
  }
  return blind.moving;
}

driver.onAction(async ({ deviceId, command, params }) => {
  const blind = blinds.get(deviceId);
  if (!blind) throw new Error(`unknown device ${deviceId}`);
  let target;
  switch (command) {
    case 'open':
      target = 100;
      break;
    case 'close':
      target = 0;
      break;
    case 'set_position': {
      const value = params.position === null || params.position === '' ? NaN : Number(params.position);
      if (!Number.isFinite(value) || value < 0 || value > 100) throw new Error('set_position needs {"position": 0-100} (0 closed, 100 open)');
      target = Math.round(value);
      break;
    }
    default:
      throw new Error(`unknown command ${command}`);
  }
  if (blind.position === target && !blind.moving) driver.reportState(deviceId, { position: target });
  else await moveTo(blind, deviceId, target);
  return { position: blind.position };
});

driver.onMessage((payload) => driver.log.info(`message from the hub: ${JSON.stringify(payload)}`));
driver.onStatus((status) => {
  if (status.status === 'error') driver.log.warn(`hub says ${status.code}: ${status.message}`);
});
driver.onClose((err) => {
  if (err) {
    driver.log.error(`giving up: ${err.message}`);
    process.exit(1);
  }
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    driver.close().finally(() => process.exit(0));
  });
}

// Devices may be announced before start(): the SDK sends them once registered.
for (const [id, blind] of blinds) {
  driver.discover({
    id,
    name: blind.name,
    deviceClass: 'cover',
    attributes: { tilt: false },
    category: 'blinds',
    commands: [
      { name: 'open', label: 'Open' },
      { name: 'close', label: 'Close' },
      { name: 'set_position', label: 'Set position', params: { position: { type: 'integer', minimum: 0, maximum: 100 } } },
    ],
    properties: { positionMeaning: '0 closed, 100 open' },
    state: { position: blind.position },
  });
}

try {
  await driver.start();
  driver.log.info(`registered at ${url} with ${blinds.size} blinds`);
} catch (err) {
  driver.log.error(`could not register: ${err.message}`);
  process.exit(1);
}
