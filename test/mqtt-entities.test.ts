import { describe, expect, it } from 'vitest';
import { expandDiscoveryConfig } from '../src/adapters/mqtt/abbreviations.js';
import { DiscoveryError, parseConfigTopic, planDiscovery, pressOf, type EntityPlan } from '../src/adapters/mqtt/entities.js';

/**
 * The components the device simulator does not cover, from the examples in Home Assistant's MQTT
 * documentation (climate, fan, lock, the default-schema light, a cover with tilt): what the hub
 * reads from each topic and what each standard command publishes.
 */
function plan(component: string, config: Record<string, unknown>): EntityPlan {
  const p = planDiscovery({ component, objectId: 'x' }, expandDiscoveryConfig(config));
  if (!p || p.kind !== 'entity') throw new Error('not an entity');
  return p;
}

function read(p: EntityPlan, topic: string, payload: string) {
  const state: Record<string, unknown> = {};
  for (const l of p.listeners.filter((l) => l.topic === topic)) Object.assign(state, l.read(payload)?.state);
  return state;
}

describe('discovery plans', () => {
  it('parses config topics with and without a node id, and nothing else', () => {
    expect(parseConfigTopic('homeassistant', 'homeassistant/light/0x1/light/config')).toEqual({ component: 'light', nodeId: '0x1', objectId: 'light' });
    expect(parseConfigTopic('homeassistant', 'homeassistant/switch/plug/config')).toEqual({ component: 'switch', objectId: 'plug' });
    expect(parseConfigTopic('homeassistant', 'homeassistant/status')).toBeUndefined();
    expect(parseConfigTopic('homeassistant', 'other/light/a/config')).toBeUndefined();
  });

  it('a climate device: temperatures and mode read from their topics, setpoint and mode published', () => {
    const p = plan('climate', {
      name: 'Study',
      unique_id: 'study_hvac',
      modes: ['off', 'heat', 'auto'],
      min_temp: 10,
      max_temp: 30,
      temp_step: 0.5,
      current_temperature_topic: 'study/hvac/current',
      temperature_state_topic: 'study/hvac/target',
      temperature_command_topic: 'study/hvac/target/set',
      mode_state_topic: 'study/hvac/mode',
      mode_command_topic: 'study/hvac/mode/set',
      current_temperature_template: '{{ value_json.t }}',
    });
    expect(p).toMatchObject({ deviceClass: 'climate', attributes: { minTemperature: 10, maxTemperature: 30, temperatureStep: 0.5, hvacModes: ['off', 'heat', 'auto'] } });
    expect(p.commands).toEqual(['set_target_temperature', 'set_mode']);
    expect(read(p, 'study/hvac/current', '{"t": 19.5}')).toEqual({ current_temperature: 19.5 });
    expect(read(p, 'study/hvac/target', '21')).toEqual({ target_temperature: 21 });
    expect(read(p, 'study/hvac/mode', 'heat')).toEqual({ hvac_mode: 'heat' });
    expect(p.command('set_target_temperature', { temperature: 22.5 }, {})).toEqual([{ topic: 'study/hvac/target/set', payload: '22.5' }]);
    expect(p.command('set_mode', { mode: 'auto' }, {})).toEqual([{ topic: 'study/hvac/mode/set', payload: 'auto' }]);
    expect(() => p.command('set_mode', { mode: 'cool' }, {})).toThrow(/mode must be one of/);
  });

  it('a fan: on/off, percentage over its speed range, oscillation and direction', () => {
    const p = plan('fan', {
      name: 'Bedroom fan',
      state_topic: 'fan/on/state',
      command_topic: 'fan/on/set',
      percentage_state_topic: 'fan/speed/state',
      percentage_command_topic: 'fan/speed/set',
      speed_range_min: 1,
      speed_range_max: 3,
      oscillation_state_topic: 'fan/osc/state',
      oscillation_command_topic: 'fan/osc/set',
      direction_command_topic: 'fan/dir/set',
      payload_on: 'true',
      payload_off: 'false',
    });
    expect(p.deviceClass).toBe('fan');
    expect(p.attributes).toEqual({ oscillate: true, direction: true });
    expect(read(p, 'fan/on/state', 'true')).toEqual({ on: true });
    expect(read(p, 'fan/speed/state', '2')).toEqual({ percentage: 67 });
    expect(read(p, 'fan/osc/state', 'oscillate_on')).toEqual({ oscillating: true });
    expect(p.command('set_percentage', { percentage: 50 }, {})).toEqual([{ topic: 'fan/speed/set', payload: '2' }]);
    expect(p.command('set_percentage', { percentage: 100 }, {})).toEqual([{ topic: 'fan/speed/set', payload: '3' }]);
    expect(p.command('set_percentage', { percentage: 0 }, {})).toEqual([{ topic: 'fan/on/set', payload: 'false' }]);
    expect(p.command('oscillate', { oscillating: false }, {})).toEqual([{ topic: 'fan/osc/set', payload: 'oscillate_off' }]);
    expect(p.command('set_direction', { direction: 'reverse' }, {})).toEqual([{ topic: 'fan/dir/set', payload: 'reverse' }]);
  });

  it('a lock: LOCKED, UNLOCKED and JAMMED read; LOCK and UNLOCK published', () => {
    const p = plan('lock', { name: 'Front door', state_topic: 'door/lock', command_topic: 'door/lock/set', value_template: '{{ value_json.state }}' });
    expect(p.commands).toEqual(['lock', 'unlock']);
    expect(read(p, 'door/lock', '{"state": "LOCKED"}')).toEqual({ locked: true, jammed: false });
    expect(read(p, 'door/lock', '{"state": "JAMMED"}')).toEqual({ jammed: true });
    expect(p.command('unlock', {}, {})).toEqual([{ topic: 'door/lock/set', payload: 'UNLOCK' }]);
  });

  it('a default-schema light: brightness scaled, mireds, hs as "h,s", and ON sent after the value (on_command_type last)', () => {
    const p = plan('light', {
      name: 'Hall',
      command_topic: 'hall/set',
      state_topic: 'hall/state',
      brightness_command_topic: 'hall/brightness/set',
      brightness_state_topic: 'hall/brightness',
      brightness_scale: 100,
      color_temp_command_topic: 'hall/ct/set',
      hs_command_topic: 'hall/hs/set',
      hs_state_topic: 'hall/hs',
    });
    expect(p.attributes.colorModes).toEqual(['onoff', 'brightness', 'color_temp', 'hs']);
    expect(read(p, 'hall/brightness', '40')).toEqual({ brightness: 40 });
    expect(read(p, 'hall/hs', '200.5,80')).toEqual({ hue: 200.5, saturation: 80 });
    expect(p.command('set_brightness', { brightness: 40 }, {})).toEqual([
      { topic: 'hall/brightness/set', payload: '40' },
      { topic: 'hall/set', payload: 'ON' },
    ]);
    expect(p.command('set_color_temp', { kelvin: 4000 }, {})[0]).toEqual({ topic: 'hall/ct/set', payload: '250' });
    expect(p.command('set_hs_color', { hue: 10, saturation: 50 }, {})[0]).toEqual({ topic: 'hall/hs/set', payload: '10,50' });
  });

  it('an optimistic switch (no state topic) assumes what a command did', () => {
    const p = plan('switch', { name: 'Heater', command_topic: 'heater/set' });
    expect(p.optimistic).toBe(true);
    expect(p.assumed?.('turn_on', {})).toEqual({ on: true });
  });

  it('a cover with tilt and inverted positions', () => {
    const p = plan('cover', { name: 'Awning', command_topic: 'a/set', position_topic: 'a/pos', set_position_topic: 'a/pos/set', position_open: 0, position_closed: 100, tilt_command_topic: 'a/tilt/set' });
    expect(p.attributes).toEqual({ tilt: true });
    expect(read(p, 'a/pos', '25')).toEqual({ position: 75 });
    expect(p.command('set_position', { position: 75 }, {})).toEqual([{ topic: 'a/pos/set', payload: '25' }]);
    expect(p.command('set_tilt_position', { tilt: 30 }, {})).toEqual([{ topic: 'a/tilt/set', payload: '30' }]);
  });

  it('availability: every topic in mode all, with its own words and template', () => {
    const p = plan('switch', {
      name: 'Plug',
      command_topic: 'p/set',
      availability: [{ topic: 'bridge/state', value_template: '{{ value_json.state }}' }, { topic: 'p/availability', payload_available: 'Online', payload_not_available: 'Offline' }],
      availability_mode: 'all',
    });
    expect(p.availability?.mode).toBe('all');
    expect(p.availability?.topics.map((t) => t.read(t.topic === 'bridge/state' ? '{"state":"online"}' : 'Offline'))).toEqual([true, false]);
  });

  it("reads presses from Home Assistant's standard trigger types and Zigbee2MQTT's action names", () => {
    expect(pressOf('button_short_press', 'button_1')).toEqual({ button: 'button_1', press: 'single' });
    expect(pressOf('button_long_press', 'button_2')).toEqual({ button: 'button_2', press: 'long' });
    expect(pressOf('button_long_release', 'button_2')).toBeUndefined();
    expect(pressOf('button_double_press', 'turn_on')).toEqual({ button: 'turn_on', press: 'double' });
    expect(pressOf('action', 'on_press')).toEqual({ button: 'on', press: 'single' });
    expect(pressOf('action', 'brightness_up_hold')).toEqual({ button: 'brightness_up', press: 'long' });
    expect(pressOf('action', 'arrow_left_click')).toEqual({ button: 'arrow_left', press: 'single' });
    expect(pressOf('action', 'on_press_release')).toBeUndefined();
    expect(pressOf('action', 'toggle')).toEqual({ button: 'toggle', press: 'single' });
  });

  it('refuses what it cannot use, with the reason', () => {
    const refuse = (component: string, config: Record<string, unknown>) => () => planDiscovery({ component, objectId: 'x' }, config);
    expect(refuse('vacuum', { command_topic: 'v' })).toThrow(DiscoveryError);
    expect(refuse('light', { schema: 'template', command_topic: 'l' })).toThrow(/schema template/);
    expect(refuse('sensor', { name: 'no topic' })).toThrow(/state_topic/);
    expect(refuse('switch', { command_topic: 'a/+/b' })).toThrow(/wildcards/);
    expect(refuse('switch', { command_topic: 'x'.repeat(600) })).toThrow(/longer than/);
    expect(refuse('sensor', { state_topic: 's', value_template: '{% for %}' })).toThrow(/value_template/);
    // Left out, not refused: a disabled entity.
    expect(planDiscovery({ component: 'sensor', objectId: 'lq' }, { state_topic: 's', enabled_by_default: false })).toBeNull();
  });
});
