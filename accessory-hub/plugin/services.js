/* global module */
'use strict';

/**
 * A hub device as a HAP service: which service, which characteristics (with their ranges), how
 * each is read from the device's canonical reading (docs/devices.md) and which standard command
 * of its class a HomeKit write becomes. Nothing here talks to the hub or to Homebridge: the
 * platform (index.js) binds these to accessories and sends the commands.
 *
 * A characteristic's spec:
 *   - `type`: the HAP characteristic class;
 *   - `props`: its ranges where the device's attributes say;
 *   - `get(reading, local)`: its value, always within its range (`local` holds the targets HomeKit
 *     asked for and the device has not reached yet);
 *   - `set(value, reading)`: `{command, params?, reading?, local?, merge?, own?}` or null: the
 *     standard command (and params), the reading it should make (kept until the hub says otherwise),
 *     a target to remember until `local.until(reading)`, and `merge` to send the writes of one
 *     HomeKit request as one command (hue and saturation: `own` is the write's part of params).
 */

const MIRED = 1000000;
const num = (v, fallback) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const clamp = (v, min, max) => Math.min(max, Math.max(min, v));
const round1 = (v) => Math.round(v * 10) / 10;
/** HAP temperatures are Celsius; a device may speak Fahrenheit. */
const toCelsius = (v, unit) => (unit === '°F' ? round1(((v - 32) * 5) / 9) : v);
const fromCelsius = (v, unit) => (unit === '°F' ? round1((v * 9) / 5 + 32) : v);
const moving = (r) => r.coverState === 'opening' || r.coverState === 'closing';

/** HAP's heating/cooling states and the hvac modes they stand for. */
const TARGET_MODES = { off: 0, heat: 1, cool: 2, auto: 3, heat_cool: 3 };

function lightbulb(C, device) {
  const a = device.attributes || {};
  const modes = Array.isArray(a.colorModes) ? a.colorModes : ['onoff'];
  const chars = [{ type: C.On, get: (r) => r.on === true, set: (v) => ({ command: v ? 'turn_on' : 'turn_off', reading: { on: Boolean(v) } }) }];
  if (modes.some((m) => m === 'brightness' || m === 'color_temp' || m === 'hs')) {
    chars.push({
      type: C.Brightness,
      get: (r) => Math.round(clamp(num(r.brightness, r.on ? 100 : 0), 0, 100)),
      set: (v) => ({ command: 'set_brightness', params: { brightness: v }, reading: { brightness: v } }),
    });
  }
  if (modes.includes('color_temp')) {
    const minKelvin = num(a.minKelvin, 2000);
    const maxKelvin = num(a.maxKelvin, 6500);
    // Mireds are kelvin upside down: the coolest white is the fewest mireds.
    const minValue = Math.ceil(MIRED / maxKelvin);
    const maxValue = Math.max(minValue, Math.floor(MIRED / minKelvin));
    chars.push({
      type: C.ColorTemperature,
      props: { minValue, maxValue, minStep: 1 },
      get: (r) => clamp(Math.round(MIRED / num(r.colorTempKelvin, maxKelvin)), minValue, maxValue),
      set: (v) => {
        const kelvin = clamp(Math.round(MIRED / v), minKelvin, maxKelvin);
        return { command: 'set_color_temp', params: { kelvin }, reading: { colorTempKelvin: kelvin } };
      },
    });
  }
  if (modes.includes('hs')) {
    chars.push({
      type: C.Hue,
      get: (r) => clamp(num(r.hue, 0), 0, 360),
      set: (v, r) => ({ command: 'set_hs_color', params: { hue: v, saturation: clamp(num(r.saturation, 100), 0, 100) }, own: { hue: v }, merge: 'hs', reading: { hue: v } }),
    });
    chars.push({
      type: C.Saturation,
      get: (r) => clamp(num(r.saturation, 0), 0, 100),
      set: (v, r) => ({ command: 'set_hs_color', params: { hue: clamp(num(r.hue, 0), 0, 360), saturation: v }, own: { saturation: v }, merge: 'hs', reading: { saturation: v } }),
    });
  }
  return chars;
}

function onOff(C) {
  return { type: C.On, get: (r) => r.on === true, set: (v) => ({ command: v ? 'turn_on' : 'turn_off', reading: { on: Boolean(v) } }) };
}

function windowCovering(C, device) {
  const a = device.attributes || {};
  const position = (r) => Math.round(clamp(num(r.position, r.coverState === 'open' || r.coverState === 'opening' ? 100 : 0), 0, 100));
  const tiltAngle = (t) => Math.round(clamp(t * 1.8 - 90, -90, 90));
  const chars = [
    { type: C.CurrentPosition, get: position },
    {
      type: C.TargetPosition,
      get: (r, local) => {
        if (local.position) return local.position.value;
        if (r.coverState === 'opening') return 100;
        if (r.coverState === 'closing') return 0;
        return position(r);
      },
      set: (v) => ({ command: 'set_position', params: { position: v }, local: { key: 'position', value: v, until: (r) => !moving(r) && r.position === v } }),
    },
    { type: C.PositionState, get: (r) => (r.coverState === 'opening' ? 1 : r.coverState === 'closing' ? 0 : 2) },
  ];
  if (a.tilt) {
    chars.push({ type: C.CurrentHorizontalTiltAngle, get: (r) => tiltAngle(num(r.tilt, 0)) });
    chars.push({
      type: C.TargetHorizontalTiltAngle,
      get: (r, local) => (local.tilt ? local.tilt.value : tiltAngle(num(r.tilt, 0))),
      set: (v) => ({ command: 'set_tilt_position', params: { tilt: Math.round(clamp((v + 90) / 1.8, 0, 100)) }, local: { key: 'tilt', value: v, until: (r) => tiltAngle(num(r.tilt, 0)) === v } }),
    });
  }
  return chars;
}

function thermostat(C, device) {
  const a = device.attributes || {};
  const caps = device.capabilities || [];
  const unit = a.temperatureUnit;
  const min = num(a.minTemperature, unit === '°F' ? 41 : 5);
  const max = num(a.maxTemperature, unit === '°F' ? 95 : 35);
  const step = num(a.temperatureStep, 0.5);
  const minC = toCelsius(min, unit);
  const maxC = Math.max(minC, toCelsius(max, unit));
  const declared = Array.isArray(a.hvacModes) ? a.hvacModes.map(String) : undefined;
  // The target states the device takes: its declared modes, else all four.
  const modeFor = (state) => {
    const words = Object.keys(TARGET_MODES).filter((w) => TARGET_MODES[w] === state);
    if (!declared) return words[0];
    return declared.find((m) => words.includes(m.toLowerCase()));
  };
  const validValues = [0, 1, 2, 3].filter((s) => modeFor(s) !== undefined);
  const targets = validValues.length > 0 ? validValues : [0, 1, 2, 3];
  const targetOf = (r) => {
    const mode = typeof r.hvacMode === 'string' ? r.hvacMode.toLowerCase() : undefined;
    let state = mode !== undefined && mode in TARGET_MODES ? TARGET_MODES[mode] : r.on === false ? 0 : r.on === true ? 3 : 0;
    if (r.on === false) state = 0;
    return targets.includes(state) ? state : targets[0];
  };
  const current = (r) => toCelsius(num(r.currentTemperature, num(r.targetTemperature, (min + max) / 2)), unit);
  const target = (r) => toCelsius(num(r.targetTemperature, min), unit);
  const chars = [
    { type: C.CurrentTemperature, get: (r) => clamp(round1(current(r)), -270, 100) },
    {
      type: C.TargetTemperature,
      props: { minValue: minC, maxValue: maxC, minStep: unit === '°F' ? 0.1 : step },
      get: (r) => clamp(round1(target(r)), minC, maxC),
      set: (v) => {
        const temperature = clamp(Math.round(Math.round(fromCelsius(v, unit) / step) * step * 1000) / 1000, min, max);
        return { command: 'set_target_temperature', params: { temperature }, reading: { targetTemperature: temperature } };
      },
    },
    {
      type: C.CurrentHeatingCoolingState,
      get: (r) => {
        const state = targetOf(r);
        if (state !== 3) return state;
        // Auto: heating below the target, cooling above it.
        const now = current(r);
        const wanted = target(r);
        return now < wanted ? 1 : now > wanted ? 2 : 0;
      },
    },
    {
      type: C.TargetHeatingCoolingState,
      props: { validValues: targets },
      get: targetOf,
      set: (v) => {
        const mode = modeFor(v) ?? Object.keys(TARGET_MODES).find((w) => TARGET_MODES[w] === v);
        // A thermostat that only switches: off is off, anything else is on.
        if (!caps.includes('climate_mode') && caps.includes('power')) return { command: v === 0 ? 'turn_off' : 'turn_on', reading: { on: v !== 0 } };
        return { command: 'set_hvac_mode', params: { mode }, reading: { hvacMode: mode } };
      },
    },
    // The device's unit; HomeKit's choice of display unit changes nothing on the device.
    { type: C.TemperatureDisplayUnits, get: () => (unit === '°F' ? 1 : 0), set: () => null },
  ];
  if (typeof device.reading?.humidity === 'number') chars.push({ type: C.CurrentRelativeHumidity, get: (r) => clamp(num(r.humidity, 0), 0, 100) });
  return chars;
}

function fanv2(C, device) {
  const a = device.attributes || {};
  const caps = device.capabilities || [];
  const chars = [{ type: C.Active, get: (r) => (r.on ? 1 : 0), set: (v) => ({ command: v ? 'turn_on' : 'turn_off', reading: { on: Boolean(v) } }) }];
  if (caps.includes('fan_speed') || typeof device.reading?.percentage === 'number') {
    chars.push({
      type: C.RotationSpeed,
      get: (r) => Math.round(clamp(num(r.percentage, r.on ? 100 : 0), 0, 100)),
      set: (v) => ({ command: 'set_percentage', params: { percentage: v }, reading: { percentage: v } }),
    });
  }
  if (a.oscillate) {
    chars.push({ type: C.SwingMode, get: (r) => (r.oscillating ? 1 : 0), set: (v) => ({ command: 'oscillate', params: { oscillating: v === 1 }, reading: { oscillating: v === 1 } }) });
  }
  if (a.direction) {
    // HAP: 0 clockwise, 1 counter-clockwise; the model: forward, reverse.
    chars.push({
      type: C.RotationDirection,
      get: (r) => (r.direction === 'reverse' ? 1 : 0),
      set: (v) => ({ command: 'set_direction', params: { direction: v === 1 ? 'reverse' : 'forward' }, reading: { direction: v === 1 ? 'reverse' : 'forward' } }),
    });
  }
  return chars;
}

function lockMechanism(C) {
  const currentOf = (r) => (r.jammed ? 2 : r.locked === true ? 1 : r.locked === false ? 0 : 3);
  return [
    { type: C.LockCurrentState, get: currentOf },
    {
      type: C.LockTargetState,
      get: (r, local) => (local.lock ? local.lock.value : r.locked ? 1 : 0),
      set: (v) => ({ command: v === 1 ? 'lock' : 'unlock', local: { key: 'lock', value: v, until: (r) => r.jammed === true || r.locked === (v === 1) } }),
    },
  ];
}

function sensor(C, device) {
  const unit = (device.attributes || {}).unit;
  const value = (r) => num(r.value, 0);
  switch (device.service) {
    case 'TemperatureSensor':
      return [{ type: C.CurrentTemperature, get: (r) => clamp(round1(toCelsius(value(r), unit)), -270, 100) }];
    case 'HumiditySensor':
      return [{ type: C.CurrentRelativeHumidity, get: (r) => clamp(value(r), 0, 100) }];
    case 'LightSensor':
      return [{ type: C.CurrentAmbientLightLevel, get: (r) => clamp(value(r), 0.0001, 100000) }];
    case 'CarbonDioxideSensor':
      return [
        { type: C.CarbonDioxideDetected, get: (r) => (value(r) >= 1000 ? 1 : 0) },
        { type: C.CarbonDioxideLevel, get: (r) => clamp(value(r), 0, 100000) },
      ];
    case 'Battery':
      return [
        { type: C.BatteryLevel, get: (r) => Math.round(clamp(value(r), 0, 100)) },
        { type: C.StatusLowBattery, get: (r) => (value(r) < 20 ? 1 : 0) },
      ];
    default:
      return [];
  }
}

function binarySensor(C, service) {
  const detected = (r) => r.detected === true;
  switch (service) {
    case 'MotionSensor':
      return [{ type: C.MotionDetected, get: detected }];
    case 'OccupancySensor':
      return [{ type: C.OccupancyDetected, get: (r) => (detected(r) ? 1 : 0) }];
    case 'ContactSensor':
      // HAP: 0 the contact is made (closed), 1 it is not (open); the reading: detected = open.
      return [{ type: C.ContactSensorState, get: (r) => (detected(r) ? 1 : 0) }];
    case 'LeakSensor':
      return [{ type: C.LeakDetected, get: (r) => (detected(r) ? 1 : 0) }];
    case 'SmokeSensor':
      return [{ type: C.SmokeDetected, get: (r) => (detected(r) ? 1 : 0) }];
    default:
      return [];
  }
}

/** Button presses as ProgrammableSwitchEvent values. */
const PRESSES = { single: 0, double: 1, long: 2 };

/** The service class and characteristic specs of a bridged device; null when the plugin knows no such service. */
function specOf(hap, device) {
  const { Service: S, Characteristic: C } = hap;
  const service = S[device.service];
  if (!service) return null;
  switch (device.service) {
    case 'Lightbulb':
      return { service, chars: lightbulb(C, device) };
    case 'Switch':
      return { service, chars: [onOff(C)] };
    case 'Outlet':
      return { service, chars: [onOff(C), { type: C.OutletInUse, get: (r) => (typeof r.value === 'number' ? r.value > 0 : r.on === true) }] };
    case 'WindowCovering':
      return { service, chars: windowCovering(C, device) };
    case 'Thermostat':
      return { service, chars: thermostat(C, device) };
    case 'Fanv2':
      return { service, chars: fanv2(C, device) };
    case 'LockMechanism':
      return { service, chars: lockMechanism(C) };
    case 'TemperatureSensor':
    case 'HumiditySensor':
    case 'LightSensor':
    case 'CarbonDioxideSensor':
    case 'Battery':
      return { service, chars: sensor(C, device) };
    case 'MotionSensor':
    case 'OccupancySensor':
    case 'ContactSensor':
    case 'LeakSensor':
    case 'SmokeSensor':
      return { service, chars: binarySensor(C, device.service) };
    case 'StatelessProgrammableSwitch': {
      const presses = Array.isArray((device.attributes || {}).presses) ? device.attributes.presses : Object.keys(PRESSES);
      const validValues = presses.map((p) => PRESSES[p]).filter((v) => v !== undefined);
      // Event only: HAP reads it as null, and a press is an event notification.
      return { service, chars: [{ type: C.ProgrammableSwitchEvent, props: { validValues: validValues.length > 0 ? validValues : [0, 1, 2] }, event: true }] };
    }
    default:
      return null;
  }
}

/** What decides an accessory's make-up: rebuilt (another service) or reconfigured in place (characteristics, ranges, name) when it changes. */
function signatureOf(device, spec) {
  return JSON.stringify([device.service, device.name, spec.chars.map((c) => [c.type.UUID, c.props || null])]);
}

module.exports = { specOf, signatureOf, PRESSES };
