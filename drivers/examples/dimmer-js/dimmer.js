// Example local driver: a simulated dimmable light, using the driver SDK over stdio.
//
// The hub starts it as `node dimmer.js` (see dimmer.driver.json). Try it by hand:
//   printf '%s\n' '{"type":"ACTION","actionId":"a1","deviceId":"dimmer-1","command":"turn_on","params":{}}' | node dimmer.js
//
// set_brightness and toggle are in the manifest's command catalog, so the hub sends them as
// COMMAND_EXECUTE; turn_on and turn_off arrive as ACTION. The SDK treats both alike.

import process from 'node:process';
import { createDriver } from '../../sdk/hub-driver.mjs';

const DEVICE_ID = 'dimmer-1';
const name = process.env.DIMMER_NAME || 'Hall Light';
const fadeMs = clampInt(Number(process.env.DIMMER_FADE_MS ?? 300), 0, 5000, 300);

const driver = createDriver({ driverKey: 'example.dimmer' });

/** The light as it is right now. `brightness` is kept while the light is off. */
const light = { on: false, brightness: 100 };
/** Commands run one after another: each result is the state that command left. */
let queue = Promise.resolve();

function clampInt(value, min, max, fallback) {
  if (!Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.round(value)));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function publish() {
  driver.reportState(DEVICE_ID, { on: light.on, brightness: light.brightness });
  // A made-up power draw: 0.3 W standby, up to 9 W at full brightness.
  driver.reportMetrics(DEVICE_ID, { power_w: light.on ? Math.round(light.brightness * 9) / 100 : 0.3 });
}

/** Moves to a level in up to five steps over fadeMs, reporting the intermediate levels. */
async function fadeTo(target, on) {
  const from = light.on ? light.brightness : 0;
  const to = on ? target : 0;
  const steps = fadeMs > 0 && from !== to ? Math.min(5, Math.max(1, Math.round(fadeMs / 100))) : 0;
  for (let i = 1; i <= steps; i++) {
    await sleep(fadeMs / steps);
    if (i === steps) break;
    const level = Math.round(from + ((to - from) * i) / steps);
    driver.reportState(DEVICE_ID, { on: level > 0, brightness: Math.max(level, 1) });
  }
  light.on = on;
  light.brightness = target;
  publish();
}

async function run(command, params) {
  switch (command) {
    case 'turn_on':
      await fadeTo(light.brightness || 100, true);
      break;
    case 'turn_off':
      await fadeTo(light.brightness, false);
      break;
    case 'toggle':
      await fadeTo(light.brightness || 100, !light.on);
      break;
    case 'set_brightness': {
      const value = params.brightness === null || params.brightness === '' ? NaN : Number(params.brightness);
      if (!Number.isFinite(value) || value < 0 || value > 100) throw new Error('set_brightness needs {"brightness": 0-100}');
      const level = Math.round(value);
      if (level === 0) await fadeTo(light.brightness, false);
      else await fadeTo(level, true);
      break;
    }
    default:
      throw new Error(`unknown command ${command}`);
  }
  return { on: light.on, brightness: light.brightness };
}

driver.onAction(({ type, deviceId, command, params }) => {
  // stderr: the hub records these lines in its log under the driver's name.
  driver.log.info(`${type} ${command} ${JSON.stringify(params)}`);
  if (deviceId !== DEVICE_ID) throw new Error(`unknown device ${deviceId}`);
  const result = queue.then(() => run(command, params));
  queue = result.catch(() => undefined);
  return result;
});

driver.onMessage((payload) => {
  driver.log.info(`message from the hub: ${JSON.stringify(payload)}`);
});

await driver.start();
driver.discover({
  id: DEVICE_ID,
  name,
  deviceClass: 'light',
  attributes: { colorModes: ['brightness'] },
  category: 'light',
  commands: [
    { name: 'turn_on', label: 'Turn on' },
    { name: 'turn_off', label: 'Turn off' },
    { name: 'toggle', label: 'Toggle' },
    { name: 'set_brightness', label: 'Set brightness', params: { brightness: { type: 'integer', minimum: 0, maximum: 100 } } },
  ],
  properties: { dimmable: true, fadeMs },
  state: { on: light.on, brightness: light.brightness },
});
driver.log.info(`${name} ready (fade ${fadeMs} ms)`);
