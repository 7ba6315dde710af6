/**
 * The intent engine: sentence templates from resources/intents/en.yaml matched against a hand-built
 * home graph, and execution through recording ports (the engine's boundary).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import type { AbstractAction } from '../src/domain/devices/actions.js';
import { deriveAttributes, deriveCapabilities, deriveDeviceClass, type CapabilityName } from '../src/domain/devices/capabilities.js';
import { readingOf } from '../src/domain/devices/readings.js';
import type { GraphDevice, HomeGraph } from '../src/domain/graph/model.js';
import { IntentEngine, type IntentPorts, type ParseResult } from '../src/domain/intents/engine.js';
import { EntityIndex, matchSentence } from '../src/domain/intents/matcher.js';
import { ExecuteResultSchema, ParseResultSchema, intentOperations } from '../src/domain/intents/operations.js';
import { compileLanguage, Normalizer } from '../src/domain/intents/templates.js';
import { DomainError } from '../src/platform/errors.js';

// ---------------------------------------------------------------------------------------------
// Fixture: a realistic home

function device(id: string, name: string, category: string, spaceId: string | null, capabilities: CapabilityName[], state: Record<string, unknown> = {}, commands: string[] = []): GraphDevice {
  // Read through the model as the graph does: the declared capabilities, category and state.
  const derived = deriveCapabilities({ category, capabilities, commands }, state);
  const deviceClass = deriveDeviceClass({ category, capabilities, commands }, derived);
  const attributes = deriveAttributes(deviceClass, derived, state);
  return { id, name, category, spaceId, capabilities: derived, deviceClass, reading: readingOf(deviceClass, attributes, state), commands, state, online: true, entityIds: [] };
}

function home(): HomeGraph {
  const devices: GraphDevice[] = [
    device('floor-lamp', 'Floor lamp', 'light', 'living', ['power', 'brightness'], { on: false, brightness: 0 }),
    device('ceiling', 'Ceiling light', 'light', 'living', ['power', 'brightness'], { on: true, brightness: 70 }),
    device('tv', 'Living room TV', 'tv', 'living', ['power', 'volume', 'media', 'input'], { power: 'on', volume: 25, playback: 'playing' }),
    device('thermostat', 'Thermostat', 'climate', 'living', ['temperature', 'climate_mode'], { current_temperature: 21.5, target_temperature: 21 }),
    device('living-blinds', 'Living room blinds', 'cover', 'living', ['cover'], { position: 100 }),
    device('kitchen-light', 'Kitchen light', 'light', 'kitchen', ['power', 'brightness'], { on: true, brightness: 80 }),
    device('counter', 'Counter spots', 'light', 'kitchen', ['power', 'brightness'], { on: true, brightness: 50 }),
    device('kitchen-speaker', 'Kitchen speaker', 'speaker', 'kitchen', ['power', 'volume', 'media'], { power: 'on', volume: 30 }),
    device('coffee', 'Coffee machine', 'switch', 'kitchen', ['power'], { power: 'off' }),
    device('bedroom-light', 'Bedroom light', 'light', 'bedroom', ['power', 'brightness'], { on: false, brightness: 0 }),
    device('bedside', 'Bedside lamp', 'light', 'bedroom', ['power', 'brightness'], { on: true, brightness: 20 }),
    device('bedroom-thermostat', 'Bedroom thermostat', 'climate', 'bedroom', ['temperature'], { current_temperature: 19.5, target_temperature: 19 }),
    device('bedroom-blinds', 'Bedroom blinds', 'cover', 'bedroom', ['cover'], { position: 0 }),
    device('desk-lamp', 'Desk lamp', 'light', 'office', ['power', 'brightness'], { on: true, brightness: 60 }),
    device('office-speaker', 'Office speaker', 'speaker', 'office', ['power', 'volume'], { power: 'off', volume: 10 }),
    device('front-door', 'Front door', 'sensor', 'hall', ['sensor'], { contact: 'open', battery: 90 }),
  ];
  const spaces = [
    { id: 'living', name: 'Living room' },
    { id: 'kitchen', name: 'Kitchen' },
    { id: 'bedroom', name: 'Bedroom' },
    { id: 'office', name: 'Office' },
    { id: 'hall', name: 'Hallway' },
  ].map((s) => ({ ...s, deviceIds: devices.filter((d) => d.spaceId === s.id).map((d) => d.id), activeSourceId: null }));
  return {
    generatedAt: 1_700_000_000_000,
    spaces,
    devices,
    zones: [
      { id: 'zone-kitchen', name: 'Kitchen speakers', deviceIds: ['kitchen-speaker'], programId: null },
      { id: 'zone-house', name: 'Whole house', deviceIds: ['kitchen-speaker', 'office-speaker', 'tv'], programId: null },
    ],
    programs: [
      { id: 'movie-night', name: 'Movie night', semantics: ['movie', 'cinema'], hasTimer: false },
      { id: 'bedtime', name: 'Bedtime', semantics: ['sleep'], hasTimer: true },
      { id: 'good-morning', name: 'Good morning', semantics: [], hasTimer: true },
    ],
    macros: [{ id: 'tv-on', name: 'TV on' }],
    scenes: [{ id: 'hue-bridge:reading', deviceId: 'hue-bridge', sceneId: 'reading', name: 'Reading' }],
  };
}

/** Recording ports: every call the engine makes, and failures to inject. */
class RecordingPorts implements IntentPorts {
  readonly calls: Array<{ port: string; id: string; action?: AbstractAction; volume?: number }> = [];
  readonly failing = new Set<string>();
  constructor(public data: HomeGraph = home()) {}
  graph(): HomeGraph {
    return this.data;
  }
  async perform(deviceId: string, action: AbstractAction) {
    this.calls.push({ port: 'perform', id: deviceId, action });
    if (this.failing.has(deviceId)) return { deviceId, ok: false, error: { code: 'DEVICE_TIMEOUT', message: 'no answer from the driver' } };
    return { deviceId, ok: true, command: action.action, result: { accepted: true } };
  }
  async runProgram(programId: string) {
    this.calls.push({ port: 'runProgram', id: programId });
    return { ok: true, runId: `run-${programId}` };
  }
  async runScene(sceneId: string) {
    this.calls.push({ port: 'runScene', id: sceneId });
    return { ok: true };
  }
  async runMacro(macroId: string) {
    this.calls.push({ port: 'runMacro', id: macroId });
    if (this.failing.has(macroId)) return { ok: false, error: { code: 'MACRO_FAILED', message: 'step 2 failed' } };
    return { ok: true };
  }
  async setZoneVolume(zoneId: string, volume: number) {
    this.calls.push({ port: 'setZoneVolume', id: zoneId, volume });
    const zone = this.data.zones.find((z) => z.id === zoneId);
    return { ok: true, results: (zone?.deviceIds ?? []).map((deviceId) => ({ deviceId, ok: !this.failing.has(deviceId) })) };
  }
}

function setup() {
  const ports = new RecordingPorts();
  return { ports, engine: new IntentEngine(ports) };
}

// ---------------------------------------------------------------------------------------------
// Sentences → intent, targets, slots

type Expect = { intent: string; targets: string[]; slots?: Record<string, string | number>; exact?: boolean };

const CASES: Array<[string, Expect]> = [
  // HassTurnOn / HassTurnOff
  ['Turn on the kitchen light', { intent: 'HassTurnOn', targets: ['device:kitchen-light'], slots: { name: 'Kitchen light' }, exact: true }],
  ['switch the desk lamp off.', { intent: 'HassTurnOff', targets: ['device:desk-lamp'], exact: true }],
  ['Could you switch OFF the Coffee Machine, please?', { intent: 'HassTurnOff', targets: ['device:coffee'], exact: true }],
  ['Turn off the kitchen!', { intent: 'HassTurnOff', targets: ['space:kitchen'], slots: { area: 'Kitchen' }, exact: true }],
  ['turn on the lights in the bedroom', { intent: 'HassTurnOn', targets: ['space:bedroom'], slots: { area: 'Bedroom', domain: 'light' }, exact: true }],
  ['turn off the living room lights', { intent: 'HassTurnOff', targets: ['space:living'], slots: { domain: 'light' }, exact: true }],
  ['Turn the bedroom lights on', { intent: 'HassTurnOn', targets: ['space:bedroom'], slots: { domain: 'light' }, exact: true }],
  [
    'turn on all lights',
    {
      intent: 'HassTurnOn',
      targets: ['device:floor-lamp', 'device:ceiling', 'device:kitchen-light', 'device:counter', 'device:bedroom-light', 'device:bedside', 'device:desk-lamp'],
      slots: { domain: 'light' },
      exact: true,
    },
  ],
  ['please turn on the floor lamp in the living room', { intent: 'HassTurnOn', targets: ['device:floor-lamp'], slots: { name: 'Floor lamp', area: 'Living room' }, exact: true }],
  ['turn on the lamp in the office', { intent: 'HassTurnOn', targets: ['space:office'], slots: { domain: 'light' }, exact: true }],
  ['turn on the speaker in the office', { intent: 'HassTurnOn', targets: ['device:office-speaker'], slots: { area: 'Office' }, exact: false }],
  ['switch on the desk lamps', { intent: 'HassTurnOn', targets: ['device:desk-lamp'], exact: false }],
  ['turn off the TV', { intent: 'HassTurnOff', targets: ['device:tv'], exact: false }],
  ['turn off the whole house', { intent: 'HassTurnOff', targets: ['zone:zone-house'], exact: true }],
  // HassLightSet
  ['set the desk lamp to 40%', { intent: 'HassLightSet', targets: ['device:desk-lamp'], slots: { brightness: 40 }, exact: true }],
  ['dim the living room lights to twenty percent', { intent: 'HassLightSet', targets: ['space:living'], slots: { brightness: 20, domain: 'light' }, exact: true }],
  ['Set the brightness of the bedside lamp to forty-five per cent', { intent: 'HassLightSet', targets: ['device:bedside'], slots: { brightness: 45 }, exact: true }],
  ['set the lights in the kitchen to one hundred percent', { intent: 'HassLightSet', targets: ['space:kitchen'], slots: { brightness: 100 }, exact: true }],
  // HassSetVolume / HassVolumeUp / HassVolumeDown
  ['set the TV volume to 30', { intent: 'HassSetVolume', targets: ['device:tv'], slots: { volume: 30 }, exact: false }],
  ['set the living room TV volume to 30', { intent: 'HassSetVolume', targets: ['device:tv'], slots: { volume: 30 }, exact: true }],
  ['volume 20 on the kitchen speakers', { intent: 'HassSetVolume', targets: ['zone:zone-kitchen'], slots: { volume: 20, zone: 'Kitchen speakers' }, exact: true }],
  ['Set the volume of the whole house to fifty', { intent: 'HassSetVolume', targets: ['zone:zone-house'], slots: { volume: 50 }, exact: true }],
  ['turn up the volume on the office speaker', { intent: 'HassVolumeUp', targets: ['device:office-speaker'], exact: true }],
  ['turn the kitchen speaker down by 5', { intent: 'HassVolumeDown', targets: ['device:kitchen-speaker'], slots: { step: 5 }, exact: true }],
  // HassClimateSetTemperature
  ['set the thermostat to 21 degrees', { intent: 'HassClimateSetTemperature', targets: ['device:thermostat'], slots: { temperature: 21 }, exact: true }],
  ['set the temperature in the bedroom to 19', { intent: 'HassClimateSetTemperature', targets: ['space:bedroom'], slots: { temperature: 19 }, exact: true }],
  ['Set the bedroom thermostat to 18.5°C', { intent: 'HassClimateSetTemperature', targets: ['device:bedroom-thermostat'], slots: { temperature: 18.5 }, exact: true }],
  ['set the thermostat to twenty one', { intent: 'HassClimateSetTemperature', targets: ['device:thermostat'], slots: { temperature: 21 }, exact: true }],
  // HassCoverOpen / HassCoverClose
  ['open the living room blinds', { intent: 'HassCoverOpen', targets: ['device:living-blinds'], exact: true }],
  ['close the blinds in the bedroom', { intent: 'HassCoverClose', targets: ['space:bedroom'], slots: { domain: 'cover' }, exact: true }],
  // HassRunProgram (names and semantics), HassRunScene, HassRunMacro
  ['run movie night', { intent: 'HassRunProgram', targets: ['program:movie-night'], slots: { program: 'Movie night' }, exact: true }],
  ['Start the Bedtime program.', { intent: 'HassRunProgram', targets: ['program:bedtime'], exact: true }],
  ['start good morning', { intent: 'HassRunProgram', targets: ['program:good-morning'], exact: true }],
  ['movie time', { intent: 'HassRunProgram', targets: ['program:movie-night'], exact: false }],
  ["It's cinema time!", { intent: 'HassRunProgram', targets: ['program:movie-night'], exact: false }],
  ['time for sleep', { intent: 'HassRunProgram', targets: ['program:bedtime'], exact: false }],
  ['activate the reading scene', { intent: 'HassRunScene', targets: ['scene:hue-bridge:reading'], slots: { scene: 'Reading' }, exact: true }],
  ['run the TV on macro', { intent: 'HassRunMacro', targets: ['macro:tv-on'], exact: true }],
  // HassGetState
  ['is the kitchen light on?', { intent: 'HassGetState', targets: ['device:kitchen-light'], slots: { state: 'on' }, exact: true }],
  ['Is the front door open?', { intent: 'HassGetState', targets: ['device:front-door'], slots: { state: 'open' }, exact: true }],
  ['what is the temperature in the bedroom?', { intent: 'HassGetState', targets: ['space:bedroom'], slots: { attribute: 'temperature' }, exact: true }],
  ["what's the volume of the living room TV", { intent: 'HassGetState', targets: ['device:tv'], slots: { attribute: 'volume' }, exact: true }],
  ['how warm is it in the living room', { intent: 'HassGetState', targets: ['space:living'], slots: { attribute: 'temperature' }, exact: true }],
];

describe('parsing', () => {
  const { engine } = setup();

  it.each(CASES)('%s', (text, expected) => {
    const result = engine.parse(text);
    expect(result.matched, JSON.stringify(result)).toBe(true);
    expect(result.intent).toBe(expected.intent);
    expect(result.targets.map((t) => `${t.kind}:${t.id}`)).toEqual(expected.targets);
    if (expected.slots) expect(result.slots).toMatchObject(expected.slots);
    if (expected.exact === true) expect(result.confidence).toBe(1);
    if (expected.exact === false) {
      expect(result.confidence).toBeGreaterThan(0.5);
      expect(result.confidence).toBeLessThan(1);
    }
    expect(result.template).toEqual(expect.any(String));
    expect(Value.Check(ParseResultSchema, result)).toBe(true);
  });

  it.each([
    "what's the weather like tomorrow",
    'order a pizza',
    'set the desk lamp to 150 percent',
    'set the volume to 30',
    'turn',
    '',
    '   ?!  ',
    'turn on the lights in the kitchen and make coffee',
  ])('does not match: %s', (text) => {
    const result = engine.parse(text);
    expect(result.matched).toBe(false);
    expect(result.confidence).toBe(0);
    expect(result.intent).toBeUndefined();
    expect(result.targets).toEqual([]);
  });

  it('reports words that name nothing known', () => {
    const heater = engine.parse('turn on the garage heater');
    expect(heater).toMatchObject({ matched: false, confidence: 0, unresolved: { intent: 'HassTurnOn', slot: 'name', kind: 'device', text: 'garage heater' } });
    const garage = engine.parse('turn off the lights in the garage');
    expect(garage.unresolved).toEqual({ intent: 'HassTurnOff', slot: 'area', kind: 'space', text: 'garage' });
  });

  it('gives lower confidence to ambiguous partial names and lists the other readings', () => {
    const result = engine.parse('turn on the lamp');
    expect(result.matched).toBe(true);
    expect(result.ambiguous).toBe(true);
    expect(result.confidence).toBeLessThan(0.8);
    const named = [result, ...(result.alternatives ?? [])].flatMap((r) => r.targets.map((t) => t.id));
    expect(named).toEqual(expect.arrayContaining(['floor-lamp', 'bedside', 'desk-lamp']));
  });

  it('prefers the exact name over a partial one, keeping the partial as an alternative', () => {
    const result = engine.parse('set the thermostat to 20');
    expect(result.targets).toEqual([{ kind: 'device', id: 'thermostat', name: 'Thermostat' }]);
    expect(result.confidence).toBe(1);
    expect(result.ambiguous).toBeUndefined();
    expect(result.alternatives?.map((a) => a.targets[0]?.id)).toContain('bedroom-thermostat');
  });

  it('penalises a device named with an area it is not in', () => {
    const result = engine.parse('turn on the desk lamp in the kitchen');
    expect(result.intent).toBe('HassTurnOn');
    expect(result.targets[0]?.id).toBe('desk-lamp');
    expect(result.confidence).toBe(0.5);
  });

  it('penalises a device without the capability a template asks for', () => {
    const result = engine.parse('turn on the front door');
    expect(result.intent).toBe('HassTurnOn');
    expect(result.confidence).toBe(0.5);
  });

  it('matches the longest name: a device called like its room beats the room', () => {
    const ports = new RecordingPorts();
    ports.data.devices.push(device('kitchen-plug', 'Kitchen', 'switch', 'kitchen', ['power']));
    const result = new IntentEngine(ports).parse('turn on the kitchen light');
    expect(result.targets[0]?.id).toBe('kitchen-light');
  });

  it('reads live names: a renamed device is matched by its new name', () => {
    const ports = new RecordingPorts();
    const engine2 = new IntentEngine(ports);
    expect(engine2.parse('turn on the reading lamp').matched).toBe(false);
    ports.data.devices.find((d) => d.id === 'bedside')!.name = 'Reading lamp';
    // A new graph object (the real graph is rebuilt on change); the index is per graph.
    ports.data = { ...ports.data };
    expect(engine2.parse('turn on the reading lamp').targets[0]?.id).toBe('bedside');
  });
});

// ---------------------------------------------------------------------------------------------

describe('execution', () => {
  it('turns off every power-capable device of a space and counts them', async () => {
    const { ports, engine } = setup();
    const result = await engine.execute('turn off the kitchen');
    expect(result.ok).toBe(true);
    expect(ports.calls.map((c) => [c.id, c.action?.action])).toEqual([
      ['kitchen-light', 'turn_off'],
      ['counter', 'turn_off'],
      ['kitchen-speaker', 'turn_off'],
      ['coffee', 'turn_off'],
    ]);
    expect(result.results).toHaveLength(4);
    expect(result.speech).toBe('Turned off 4 devices in the Kitchen.');
    expect(Value.Check(ExecuteResultSchema, result)).toBe(true);
  });

  it('turns on only the lights of a space', async () => {
    const { ports, engine } = setup();
    const result = await engine.execute('Turn on the lights in the bedroom.');
    expect(ports.calls.map((c) => c.id)).toEqual(['bedroom-light', 'bedside']);
    expect(result.speech).toBe('Turned on 2 lights in the Bedroom.');
  });

  it('reports a device failure per target without throwing', async () => {
    const { ports, engine } = setup();
    ports.failing.add('kitchen-speaker');
    const result = await engine.execute('turn off the kitchen');
    expect(result.ok).toBe(false);
    expect(result.results.filter((r) => !r.ok)).toEqual([
      { target: { kind: 'device', id: 'kitchen-speaker', name: 'Kitchen speaker' }, ok: false, detail: { action: 'turn_off' }, error: { code: 'DEVICE_TIMEOUT', message: 'no answer from the driver' } },
    ]);
    expect(result.results.filter((r) => r.ok)).toHaveLength(3);
    expect(result.speech).toBe("Turned off 3 devices in the Kitchen. Kitchen speaker didn't respond.");
  });

  it('survives a port that throws anyway', async () => {
    const { ports, engine } = setup();
    ports.perform = async () => {
      throw new Error('driver link down');
    };
    const result = await engine.execute('turn on the desk lamp');
    expect(result.ok).toBe(false);
    expect(result.results[0]?.error).toEqual({ code: 'FAILED', message: 'driver link down' });
    expect(result.speech).toBe("Sorry, that didn't work: Desk lamp didn't respond.");
  });

  it('sets brightness on one device with the number said', async () => {
    const { ports, engine } = setup();
    const result = await engine.execute('set the desk lamp to forty percent');
    expect(ports.calls).toEqual([{ port: 'perform', id: 'desk-lamp', action: { action: 'set_brightness', value: 40 } }]);
    expect(result.speech).toBe('Set the Desk lamp to 40 percent.');
  });

  it('sets a zone volume through the zone port', async () => {
    const { ports, engine } = setup();
    const result = await engine.execute('volume 20 on the kitchen speakers');
    expect(ports.calls).toEqual([{ port: 'setZoneVolume', id: 'zone-kitchen', volume: 20 }]);
    expect(result.ok).toBe(true);
    expect(result.results).toEqual([{ target: { kind: 'device', id: 'kitchen-speaker', name: 'Kitchen speaker' }, ok: true }]);
    expect(result.speech).toBe('Set the Kitchen speakers volume to 20.');
  });

  it('steps a device volume down by the amount said', async () => {
    const { ports, engine } = setup();
    await engine.execute('turn the kitchen speaker down by 5');
    expect(ports.calls[0]?.action).toEqual({ action: 'volume_down', value: 5 });
  });

  it('sets the temperature of a space on its thermostats', async () => {
    const { ports, engine } = setup();
    const result = await engine.execute('set the temperature in the bedroom to 19');
    expect(ports.calls).toEqual([{ port: 'perform', id: 'bedroom-thermostat', action: { action: 'set_temperature', value: 19 } }]);
    expect(result.speech).toBe('Set the temperature in the Bedroom to 19 degrees.');
  });

  it('runs a program found by its semantics, a scene and a macro', async () => {
    const { ports, engine } = setup();
    const movie = await engine.execute('movie time');
    expect(movie).toMatchObject({ ok: true, speech: 'Started Movie night.', results: [{ target: { kind: 'program', id: 'movie-night' }, ok: true, detail: { runId: 'run-movie-night' } }] });
    const scene = await engine.execute('activate the reading scene');
    expect(scene.speech).toBe('Activated the Reading scene.');
    ports.failing.add('tv-on');
    const macro = await engine.execute('run the tv on macro');
    expect(macro).toMatchObject({ ok: false, speech: "Sorry, TV on didn't start: step 2 failed", results: [{ ok: false, error: { code: 'MACRO_FAILED' } }] });
    expect(ports.calls.map((c) => `${c.port}:${c.id}`)).toEqual(['runProgram:movie-night', 'runScene:hue-bridge:reading', 'runMacro:tv-on']);
  });

  it('answers state questions from the graph without acting', async () => {
    const { ports, engine } = setup();
    expect((await engine.execute('is the kitchen light on?')).speech).toBe('Yes, the Kitchen light is on.');
    expect((await engine.execute('is the bedroom light on')).speech).toBe('No, the Bedroom light is off.');
    expect((await engine.execute('is the coffee machine off')).speech).toBe('Yes, the Coffee machine is off.');
    const door = await engine.execute('Is the front door open?');
    expect(door).toMatchObject({ ok: true, speech: 'Yes, the Front door is open.', results: [{ detail: { state: 'open', matches: true } }] });
    expect((await engine.execute('is the front door closed')).speech).toBe('No, the Front door is open.');
    expect((await engine.execute('what is the temperature in the bedroom?')).speech).toBe('The temperature in the Bedroom is 19.5 degrees.');
    expect((await engine.execute("what's the volume of the living room tv")).speech).toBe('The volume of the Living room TV is 25.');
    expect((await engine.execute('is the bedroom thermostat on')).speech).toBe("I don't know whether the Bedroom thermostat is on.");
    expect((await engine.execute('what is the status of the front door')).speech).toBe('The Front door is open.');
    expect(ports.calls).toEqual([]);
  });

  it('explains what it could not do', async () => {
    const { ports, engine } = setup();
    expect(await engine.execute('order a pizza')).toMatchObject({ ok: false, results: [], speech: "Sorry, I didn't understand that." });
    expect((await engine.execute('turn on the garage heater')).speech).toBe("I couldn't find a device called garage heater.");
    expect((await engine.execute('turn off the lights in the garage')).speech).toBe("I couldn't find an area called garage.");
    expect((await engine.execute('turn on the lamp')).speech).toBe('Which one do you mean: Floor lamp, Bedside lamp or Desk lamp?');
    expect((await engine.execute('turn on the front door')).speech).toBe("The Front door can't do that.");
    expect((await engine.execute('turn on the lights in the hallway')).speech).toBe('There are no lights in the Hallway.');
    // Partial names without the capability asked for: too unsure to act.
    expect((await engine.execute('turn up the lights')).speech).toBe("Sorry, I'm not sure what you mean.");
    expect((await engine.execute('turn the tv on in the kitchen')).speech).toBe("Sorry, I'm not sure what you mean.");
    // Partial names of similar coverage tie: ask rather than pick one.
    expect((await engine.execute('open the blinds')).speech).toBe('Which one do you mean: Bedroom blinds or Living room blinds?');
    expect(ports.calls).toEqual([]);
  });

  it('answers an unknown intent with ok false', async () => {
    const { engine } = setup();
    const parse: ParseResult = { text: 'make me a sandwich', language: 'en', matched: true, intent: 'HassMakeSandwich', slots: {}, targets: [], confidence: 1 };
    const result = await engine.execute(parse);
    expect(result).toMatchObject({ ok: false, results: [], speech: "I understood that, but I can't do it yet." });
  });

  it('addresses all lights able to do it, skipping the others silently', async () => {
    const ports = new RecordingPorts();
    // A strip whose driver offers dimming but no on/off command.
    ports.data.devices.push(device('strip', 'LED strip', 'light', 'office', ['brightness'], {}, ['set_brightness']));
    const result = await new IntentEngine(ports).execute('switch all the lights off');
    expect(result.ok).toBe(true);
    expect(ports.calls.map((c) => c.id)).not.toContain('strip');
    expect(result.speech).toBe('Turned off 7 lights.');
  });

  it('executes a parse result it is given', async () => {
    const { ports, engine } = setup();
    const parse = engine.parse('turn on all lights');
    const result = await engine.execute(parse);
    expect(result.parse).toBe(parse);
    expect(ports.calls).toHaveLength(7);
    expect(result.speech).toBe('Turned on 7 lights.');
  });
});

// ---------------------------------------------------------------------------------------------

describe('templates and operations', () => {
  const normalizer = new Normalizer({
    numbers: { one: 1, five: 5, twenty: 20, hundred: 100, two: 2 },
    symbols: { '%': 'percent' },
    skipWords: ['please', 'can you'],
    articles: ['the'],
    pluralSuffixes: ['s', 'es'],
  });

  it('normalizes case, punctuation, symbols, decimals and number words', () => {
    expect(normalizer.sentence('Can you set the Lamp to 40%, please?')).toEqual(['set', 'the', 'lamp', 'to', '40', 'percent']);
    expect(normalizer.tokens("What's twenty-five, one hundred and 18.5?")).toEqual(['whats', '25', '100', 'and', '18.5']);
    expect(normalizer.tokens('two hundred twenty five')).toEqual(['225']);
    expect(normalizer.loosely('lights', 'light')).toBe(true);
    expect(normalizer.loosely('boxes', 'box')).toBe(true);
    expect(normalizer.loosely('light', 'lamp')).toBe(false);
  });

  it('compiles alternatives, optionals, permutations, rules and typed slots', () => {
    const lang = compileLanguage({
      language: 'xx',
      expansion_rules: { lights: '(light | lights)' },
      lists: { name: { entities: 'devices' }, level: { range: { from: 0, to: 10 } } },
      intents: {
        Test: [
          { sentences: ['(turn | switch) on [the] {name}', '(set [the] {name}; to {level})', 'all <lights> {n:number}'], slots: { fixed: 'yes' } },
        ],
      },
    });
    const index = new EntityIndex(home(), lang.normalizer);
    const read = (text: string) => matchSentence(lang, lang.normalizer.sentence(text), index).map((m) => m.captures.map((c) => `${c.slot}=${c.text}`).join(','));
    expect(read('switch on desk lamp')).toEqual(['name=desk lamp']);
    expect(read('to 7 set the desk lamp')).toEqual(['level=7,name=desk lamp']);
    expect(read('set desk lamp to 11')).toEqual([]);
    expect(read('all lights 12.5')).toEqual(['n=12.5']);
    expect(lang.templates[0]?.fixedSlots).toEqual({ fixed: 'yes' });
    expect(lang.templates[0]?.requiredWords).toEqual(['on']);
  });

  it('rejects broken template data with a clear error', () => {
    const bad = (doc: unknown) => () => compileLanguage(doc, 'bad.yaml');
    expect(bad({ language: 'xx', intents: { A: ['turn (on | off'] } })).toThrow(/missing "\)"/);
    expect(bad({ language: 'xx', intents: { A: ['turn on {thing}'] } })).toThrow(/no list "thing"/);
    expect(bad({ language: 'xx', intents: { A: ['<nope>'] } })).toThrow(/unknown expansion rule/);
    expect(bad({ language: 'xx', expansion_rules: { a: '<a>' }, intents: { A: ['<a>'] } })).toThrow(/refers to itself/);
    expect(bad({ language: 'xx', intents: {}, extra: 1 })).toThrow(/unknown key "extra"/);
    expect(bad({ language: 'xx', lists: { x: { range: { from: 5, to: 1 } } }, intents: {} })).toThrow(DomainError);
  });

  it('loads other languages from the data directory and refuses unknown ones', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'intents-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'de.yaml'),
        [
          'language: de',
          'lists: { name: { entities: devices } }',
          'intents:',
          '  HassTurnOn: ["schalte [die | den | das] {name} ein"]',
          'responses:',
          '  HassTurnOn: { device: "{name} ist an." }',
        ].join('\n'),
      );
      const ports = new RecordingPorts();
      const engine = new IntentEngine(ports, { dataDir: dir, language: 'de' });
      expect(engine.parse('Schalte die Desk lamp ein').targets[0]?.id).toBe('desk-lamp');
      expect(() => engine.parse('x', { language: 'fr' })).toThrow(/no sentence templates|No sentence templates/i);
      expect(() => engine.parse('x', { language: '../etc' })).toThrow(DomainError);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exposes intents.parse and intents.execute with schema-valid output', async () => {
    const { ports, engine } = setup();
    const ops = intentOperations(engine);
    expect(ops.parse.name).toBe('intents.parse');
    expect(ops.execute.name).toBe('intents.execute');
    const ctx = { clientAddress: '127.0.0.1', requestId: 'r1' };
    const parsed = await ops.parse.handler({ text: 'dim the bedside lamp to 30 percent' }, ctx);
    expect(Value.Check(ops.parse.output, parsed)).toBe(true);
    expect(parsed).toMatchObject({ intent: 'HassLightSet', slots: { brightness: 30 } });
    const executed = await ops.execute.handler({ text: 'turn off the whole house', language: 'en' }, ctx);
    expect(Value.Check(ops.execute.output, executed)).toBe(true);
    expect(executed.speech).toBe('Turned off 3 devices in the Whole house zone.');
    expect(ports.calls.map((c) => c.id).sort()).toEqual(['kitchen-speaker', 'office-speaker', 'tv']);
    expect(Value.Check(ops.parse.input, { text: '' })).toBe(false);
    expect(Value.Check(ops.parse.input, { text: 'x'.repeat(501) })).toBe(false);
  });

  it('parses fast', () => {
    const { engine } = setup();
    const start = performance.now();
    for (let i = 0; i < 20; i++) for (const [text] of CASES) engine.parse(text);
    const perSentence = (performance.now() - start) / (20 * CASES.length);
    expect(perSentence).toBeLessThan(5);
  });
});
