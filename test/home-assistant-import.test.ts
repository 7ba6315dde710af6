import { describe, expect, it } from 'vitest';
import { DomainError } from '../src/platform/errors.js';
import {
  importHomeAssistantAutomation,
  looksLikeHomeAssistant,
  type EntityResolver,
  type EntityTarget,
} from '../src/domain/programs/home-assistant.js';
import { PROGRAM_LIMITS } from '../src/domain/programs/limits.js';

const ENTITIES: Record<string, EntityTarget & { sceneId?: string }> = {
  'binary_sensor.hall_motion': { deviceId: 'motion-1', domain: 'binary_sensor', deviceClass: 'binary_sensor' },
  'light.hall': { deviceId: 'lamp-1', domain: 'light', deviceClass: 'light' },
  'light.porch': { deviceId: 'lamp-2', domain: 'light', deviceClass: 'light' },
  'switch.kettle': { deviceId: 'kettle', domain: 'switch', deviceClass: 'switch' },
  'sensor.outdoor_temperature': { deviceId: 'temp-1', domain: 'sensor', deviceClass: 'sensor' },
  'sensor.thermostat_current_temperature': { deviceId: 'thermostat', domain: 'sensor', deviceClass: 'climate' },
  'climate.living_room': { deviceId: 'thermostat', domain: 'climate', deviceClass: 'climate' },
  'cover.bedroom_blind': { deviceId: 'blind', domain: 'cover', deviceClass: 'cover' },
  'lock.front_door': { deviceId: 'front-lock', domain: 'lock', deviceClass: 'lock' },
  'media_player.tv': { deviceId: 'tv', domain: 'media_player', deviceClass: 'media_player' },
  'scene.movie_time': { deviceId: 'hue-bridge', domain: 'scene', sceneId: 'hue-bridge:movie' },
};
const resolve: EntityResolver = (entityId) => ENTITIES[entityId];
const load = (yaml: string) => importHomeAssistantAutomation(yaml, resolve);

/** The failure an import raises: its code and details (`path`, `problem` or `line`, `column`). */
function failure(yaml: string): { code: string; message: string; path?: string; problem?: string; line?: number; column?: number } {
  try {
    load(yaml);
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, message: err.message, ...(err.details as object) };
    throw err;
  }
  throw new Error('the automation was imported');
}

const NEW_SYNTAX = `
alias: Hall motion light
description: Light the hall on motion after sunset
mode: restart
triggers:
  - trigger: state
    entity_id: binary_sensor.hall_motion
    to: "on"
conditions:
  - condition: sun
    after: sunset
actions:
  - action: light.turn_on
    metadata: {}
    target:
      entity_id: light.hall
    data:
      brightness_pct: 40
  - wait_for_trigger:
      - trigger: state
        entity_id: binary_sensor.hall_motion
        to: "off"
        for:
          minutes: 2
  - action: light.turn_off
    target:
      entity_id: light.hall
`;

const OLD_SYNTAX = `
- id: "1700000000000"
  alias: Hall motion light
  description: Light the hall on motion after sunset
  mode: restart
  trigger:
    platform: state
    entity_id: binary_sensor.hall_motion
    to: "on"
  condition:
    condition: sun
    after: sunset
  action:
    - service: light.turn_on
      entity_id: light.hall
      data:
        brightness: 102
    - wait_for_trigger:
        platform: state
        entity_id: [binary_sensor.hall_motion]
        to: "off"
        for: "00:02:00"
    - service: light.turn_off
      data:
        entity_id: light.hall
`;

const MOTION_LIGHT = {
  name: 'Hall motion light',
  description: 'Light the hall on motion after sunset',
  mode: 'restart',
  triggers: [{ type: 'state', deviceIds: ['motion-1'], field: 'detected', to: true }],
  conditions: [{ type: 'sun', after: { event: 'sunset' } }],
  steps: [
    { type: 'command', deviceId: 'lamp-1', command: 'set_brightness', params: { brightness: 40 } },
    {
      type: 'wait_for_trigger',
      triggers: [{ type: 'state', deviceIds: ['motion-1'], field: 'detected', to: false, forMs: 120_000 }],
      // No timeout in Home Assistant: the hub's longest wait, and the run stops past it.
      timeoutMs: PROGRAM_LIMITS.maxTimeoutMs,
      continueOnTimeout: false,
    },
    { type: 'command', deviceId: 'lamp-1', command: 'turn_off' },
  ],
};

/** An automation around one changed part, the others plain. */
function automation(parts: { triggers?: string; conditions?: string; actions?: string; top?: string }): string {
  const triggers = parts.triggers ?? 'triggers:\n  - trigger: state\n    entity_id: binary_sensor.hall_motion\n    to: "on"\n';
  const actions = parts.actions ?? 'actions:\n  - action: light.turn_off\n    target: { entity_id: light.hall }\n';
  return `${parts.top ?? 'alias: Test\n'}${triggers}${parts.conditions ?? ''}${actions}`;
}

describe('Home Assistant import: the two syntaxes', () => {
  it('maps a motion light in the current syntax', () => {
    expect(load(NEW_SYNTAX)).toEqual(MOTION_LIGHT);
  });

  it('maps the same automation in the older syntax (one items for lists, service:, brightness 0–255) to the same result', () => {
    expect(load(OLD_SYNTAX)).toEqual(load(NEW_SYNTAX));
  });

  it('tells a Home Assistant document from a hub program', () => {
    expect(looksLikeHomeAssistant({ triggers: [], actions: [] })).toBe(true);
    expect(looksLikeHomeAssistant({ trigger: {}, action: [] })).toBe(true);
    expect(looksLikeHomeAssistant({ action: [] })).toBe(true);
    expect(looksLikeHomeAssistant([{ alias: 'x', trigger: [] }])).toBe(true);
    expect(looksLikeHomeAssistant({ name: 'x', steps: [], action: [] })).toBe(false);
    expect(looksLikeHomeAssistant({ name: 'x', steps: [] })).toBe(false);
    expect(looksLikeHomeAssistant('text')).toBe(false);
    expect(looksLikeHomeAssistant(null)).toBe(false);
  });
});

describe('Home Assistant import: triggers', () => {
  it('maps numeric_state with for, an attribute in the hub unit, and mode queued with max', () => {
    const out = load(
      automation({
        top: 'alias: Cold\nmode: queued\nmax: 3\n',
        triggers: `triggers:
  - trigger: numeric_state
    entity_id: sensor.outdoor_temperature
    below: 5
    for: "00:10:00"
  - platform: numeric_state
    entity_id: light.hall
    attribute: brightness
    above: 127.5
  - trigger: numeric_state
    entity_id: climate.living_room
    attribute: current_temperature
    above: "25"
    for: 90
`,
      }),
    );
    expect(out.mode).toBe('queued');
    expect(out.max).toBe(3);
    expect(out.triggers).toEqual([
      { type: 'numeric', deviceIds: ['temp-1'], field: 'value', below: 5, forMs: 600_000 },
      { type: 'numeric', deviceIds: ['lamp-1'], field: 'brightness', above: 50 },
      { type: 'numeric', deviceIds: ['thermostat'], field: 'currentTemperature', above: 25, forMs: 90_000 },
    ]);
  });

  it('maps state words of each domain, availability, and entities of different kinds into one trigger each', () => {
    const out = load(
      automation({
        triggers: `triggers:
  - trigger: state
    entity_id: [light.hall, switch.kettle, binary_sensor.hall_motion]
    from: "off"
    to: "on"
    for: { seconds: 5, milliseconds: 500 }
  - trigger: state
    entity_id: lock.front_door
    to: unlocked
  - trigger: state
    entity_id: cover.bedroom_blind
    to: [opening, open]
  - trigger: state
    entity_id: media_player.tv
    to: idle
  - trigger: state
    entity_id: climate.living_room
    attribute: temperature
    to: 21
  - trigger: state
    entity_id: sensor.outdoor_temperature
    to: "20.5"
  - trigger: state
    entity_id: light.porch
    to: unavailable
    for: "00:01"
`,
      }),
    );
    expect(out.triggers).toEqual([
      { type: 'state', deviceIds: ['lamp-1', 'kettle'], field: 'on', from: false, to: true, forMs: 5500 },
      { type: 'state', deviceIds: ['motion-1'], field: 'detected', from: false, to: true, forMs: 5500 },
      { type: 'state', deviceIds: ['front-lock'], field: 'locked', to: false },
      { type: 'state', deviceIds: ['blind'], field: 'coverState', to: ['opening', 'open'] },
      { type: 'state', deviceIds: ['tv'], field: 'playback', to: ['idle', 'stopped'] },
      { type: 'state', deviceIds: ['thermostat'], field: 'targetTemperature', to: 21 },
      { type: 'state', deviceIds: ['temp-1'], field: 'value', to: 20.5 },
      { type: 'availability', deviceIds: ['lamp-2'], to: 'offline', forMs: 60_000 },
    ]);
  });

  it('maps time triggers (a list makes several) and sun triggers with offsets in each form', () => {
    const out = load(
      automation({
        triggers: `triggers:
  - trigger: time
    at: "07:30"
  - platform: time
    at: ["06:05:00", "22:00"]
    weekday: [sat, sun]
  - trigger: sun
    event: sunset
    offset: "-00:30:00"
  - trigger: sun
    event: sunrise
    offset: { minutes: 45 }
  - platform: sun
    event: sunrise
    offset: -90
  - trigger: time_pattern
    minutes: "/15"
`,
      }),
    );
    expect(out.triggers).toEqual([
      { type: 'time', timer: { kind: 'daily', time: '07:30', enabled: true } },
      { type: 'time', timer: { kind: 'daily', time: '06:05', weekdays: [0, 6], enabled: true } },
      { type: 'time', timer: { kind: 'daily', time: '22:00', weekdays: [0, 6], enabled: true } },
      { type: 'sun', event: 'sunset', offsetMs: -1_800_000 },
      { type: 'sun', event: 'sunrise', offsetMs: 2_700_000 },
      { type: 'sun', event: 'sunrise', offsetMs: -90_000 },
      { type: 'time', timer: { kind: 'cron', expression: '*/15 * * * *', enabled: true } },
    ]);
  });

  it("maps Home Assistant's start (both spellings), mqtt and webhook triggers, and skips disabled ones", () => {
    const out = load(
      automation({
        triggers: `triggers:
  - trigger: homeassistant
    event: start
  - platform: event
    event_type: homeassistant_start
  - trigger: mqtt
    topic: home/doorbell
    payload: pressed
    qos: 1
  - trigger: webhook
    webhook_id: "-secret-id-from-home-assistant"
    allowed_methods: [POST, PUT]
    local_only: true
  - trigger: template
    enabled: false
    value_template: "{{ true }}"
`,
      }),
    );
    expect(out.triggers).toEqual([
      { type: 'hub', event: 'started' },
      { type: 'hub', event: 'started' },
      { type: 'mqtt', topic: 'home/doorbell', payload: 'pressed' },
      { type: 'webhook' },
    ]);
  });

  it('keeps trigger ids, makes repeated ones unique and points trigger conditions at all of them', () => {
    const out = load(
      automation({
        triggers: `triggers:
  - trigger: state
    entity_id: binary_sensor.hall_motion
    to: "on"
    id: motion
  - trigger: time
    at: ["07:00", "08:00"]
    id: morning
  - trigger: state
    entity_id: light.porch
    to: "on"
    id: motion
`,
        conditions: `conditions:
  - condition: trigger
    id: [motion]
  - condition: trigger
    id: morning
`,
      }),
    );
    expect(out.triggers.map((t) => (t as { id?: string }).id)).toEqual(['motion', 'morning', 'morning_2', 'motion_2']);
    expect(out.conditions).toEqual([
      { type: 'or', conditions: [{ type: 'trigger', id: 'motion' }, { type: 'trigger', id: 'motion_2' }] },
      { type: 'or', conditions: [{ type: 'trigger', id: 'morning' }, { type: 'trigger', id: 'morning_2' }] },
    ]);
  });
});

describe('Home Assistant import: conditions', () => {
  it('maps state, numeric_state, time, sun, and/or/not and their shorthands', () => {
    const out = load(
      automation({
        conditions: `conditions:
  - condition: state
    entity_id: [light.hall, light.porch]
    state: "off"
    match: any
  - condition: state
    entity_id: lock.front_door
    state: unavailable
  - condition: numeric_state
    entity_id: sensor.outdoor_temperature
    above: 0
    below: 30
  - condition: time
    after: "22:00:00"
    before: "06:30"
    weekday: mon
  - condition: sun
    after: sunset
    after_offset: "-01:00:00"
    before: sunrise
  - condition: or
    conditions:
      - condition: state
        entity_id: cover.bedroom_blind
        state: closed
        for: { hours: 1 }
      - not:
          - condition: state
            entity_id: climate.living_room
            state: [heat, cool]
  - condition: state
    entity_id: switch.kettle
    state: "on"
    enabled: false
`,
      }),
    );
    expect(out.conditions).toEqual([
      {
        type: 'or',
        conditions: [
          { type: 'state', deviceId: 'lamp-1', field: 'on', is: false },
          { type: 'state', deviceId: 'lamp-2', field: 'on', is: false },
        ],
      },
      { type: 'state', deviceId: 'front-lock', field: 'online', is: false },
      { type: 'numeric', deviceId: 'temp-1', field: 'value', above: 0, below: 30 },
      { type: 'time', after: '22:00', before: '06:30', weekdays: [1] },
      { type: 'sun', after: { event: 'sunset', offsetMs: -3_600_000 }, before: { event: 'sunrise' } },
      {
        type: 'or',
        conditions: [
          { type: 'state', deviceId: 'blind', field: 'coverState', is: 'closed', forMs: 3_600_000 },
          { type: 'not', conditions: [{ type: 'state', deviceId: 'thermostat', field: 'hvacMode', is: ['heat', 'cool'] }] },
        ],
      },
    ]);
  });
});

describe('Home Assistant import: actions', () => {
  it('maps service calls: several entities in parallel, data to standard commands, homeassistant.*, scenes, notifications', () => {
    const out = load(
      automation({
        actions: `actions:
  - action: light.turn_on
    target:
      entity_id: [light.hall, light.porch]
    data:
      brightness_pct: 30
      color_temp_kelvin: 2700
  - action: light.turn_on
    target: { entity_id: light.hall }
  - action: light.turn_on
    target: { entity_id: light.hall }
    data: { hs_color: [30, 80] }
  - service: homeassistant.turn_off
    entity_id: switch.kettle, cover.bedroom_blind
  - action: climate.set_temperature
    target: { entity_id: climate.living_room }
    data: { temperature: "21.5" }
  - action: climate.set_hvac_mode
    target: { entity_id: climate.living_room }
    data: { hvac_mode: heat }
  - action: media_player.volume_set
    target: { entity_id: media_player.tv }
    data: { volume_level: 0.25 }
  - action: lock.lock
    alias: Lock up
    target: { entity_id: lock.front_door }
  - action: scene.turn_on
    target: { entity_id: scene.movie_time }
  - scene: scene.movie_time
  - action: notify.mobile_app_phone
    data: { title: Door, message: The front door is open }
  - service: persistent_notification.create
    data: { message: Done, notification_id: done }
`,
      }),
    );
    expect(out.steps).toEqual([
      {
        type: 'parallel',
        branches: [
          [
            { type: 'command', deviceId: 'lamp-1', command: 'set_brightness', params: { brightness: 30 } },
            { type: 'command', deviceId: 'lamp-1', command: 'set_color_temp', params: { kelvin: 2700 } },
          ],
          [
            { type: 'command', deviceId: 'lamp-2', command: 'set_brightness', params: { brightness: 30 } },
            { type: 'command', deviceId: 'lamp-2', command: 'set_color_temp', params: { kelvin: 2700 } },
          ],
        ],
      },
      { type: 'command', deviceId: 'lamp-1', command: 'turn_on' },
      { type: 'command', deviceId: 'lamp-1', command: 'set_hs_color', params: { hue: 30, saturation: 80 } },
      {
        type: 'parallel',
        branches: [[{ type: 'command', deviceId: 'kettle', command: 'turn_off' }], [{ type: 'command', deviceId: 'blind', command: 'close' }]],
      },
      { type: 'command', deviceId: 'thermostat', command: 'set_temperature', params: { temperature: 21.5 } },
      { type: 'command', deviceId: 'thermostat', command: 'set_hvac_mode', params: { mode: 'heat' } },
      { type: 'command', deviceId: 'tv', command: 'set_volume', params: { volume: 25 } },
      { type: 'command', deviceId: 'front-lock', command: 'lock', label: 'Lock up' },
      { type: 'scene', sceneId: 'hue-bridge:movie' },
      { type: 'scene', sceneId: 'hue-bridge:movie' },
      { type: 'alert', message: 'Door: The front door is open', severity: 'info' },
      { type: 'alert', message: 'Done', severity: 'info' },
    ]);
  });

  it('maps choose, if/then/else, repeat, variables, stop, delay and wait_for_trigger with a timeout', () => {
    const out = load(
      automation({
        top: 'alias: Flow\nvariables:\n  level: 40\n',
        actions: `actions:
  - variables:
      who: "{{ trigger.entity_id }}"
      new: "{{ trigger.to_state.state }}"
      plain: [1, two]
  - choose:
      - conditions:
          - condition: state
            entity_id: light.hall
            state: "on"
        sequence:
          - action: light.turn_off
            target: { entity_id: light.hall }
    default:
      - delay: "00:00:05"
  - if:
      - condition: numeric_state
        entity_id: sensor.outdoor_temperature
        below: 0
    then:
      - delay: 2
    else:
      - delay: { minutes: 1 }
  - repeat:
      count: 3
      sequence:
        - action: light.toggle
          target: { entity_id: light.porch }
  - repeat:
      until:
        - condition: state
          entity_id: lock.front_door
          state: locked
      sequence:
        - action: lock.lock
          target: { entity_id: lock.front_door }
  - repeat:
      while: { condition: state, entity_id: switch.kettle, state: "on" }
      sequence: { delay: 10 }
  - wait_for_trigger:
      platform: state
      entity_id: cover.bedroom_blind
      to: closed
    timeout: { minutes: 5 }
    continue_on_timeout: false
  - delay: { seconds: 1 }
    enabled: false
  - stop: Too cold
    error: true
`,
      }),
    );
    expect(out.variables).toEqual({ level: 40 });
    expect(out.steps).toEqual([
      { type: 'variables', variables: { who: '{{ trigger.deviceId }}', new: '{{ trigger.to }}', plain: [1, 'two'] } },
      {
        type: 'choose',
        choices: [{ conditions: [{ type: 'state', deviceId: 'lamp-1', field: 'on', is: true }], steps: [{ type: 'command', deviceId: 'lamp-1', command: 'turn_off' }] }],
        default: [{ type: 'delay', ms: 5000 }],
      },
      {
        type: 'choose',
        choices: [{ conditions: [{ type: 'numeric', deviceId: 'temp-1', field: 'value', below: 0 }], steps: [{ type: 'delay', ms: 2000 }] }],
        default: [{ type: 'delay', ms: 60_000 }],
      },
      { type: 'repeat', count: 3, steps: [{ type: 'command', deviceId: 'lamp-2', command: 'toggle' }] },
      {
        type: 'repeat',
        until: [{ type: 'state', deviceId: 'front-lock', field: 'locked', is: true }],
        steps: [{ type: 'command', deviceId: 'front-lock', command: 'lock' }],
      },
      { type: 'repeat', while: [{ type: 'state', deviceId: 'kettle', field: 'on', is: true }], steps: [{ type: 'delay', ms: 10_000 }] },
      {
        type: 'wait_for_trigger',
        triggers: [{ type: 'state', deviceIds: ['blind'], field: 'coverState', to: 'closed' }],
        timeoutMs: 300_000,
        continueOnTimeout: false,
      },
      { type: 'stop', reason: 'Too cold', error: true },
    ]);
  });

  it('maps a condition inside actions to a choose holding the rest of its list (Home Assistant ends the sequence there)', () => {
    const out = load(
      automation({
        actions: `actions:
  - action: light.turn_on
    target: { entity_id: light.hall }
  - condition: state
    entity_id: binary_sensor.hall_motion
    state: "on"
  - condition: time
    after: "20:00"
  - action: light.turn_on
    target: { entity_id: light.porch }
  - if: { condition: state, entity_id: switch.kettle, state: "off" }
    then:
      - condition: state
        entity_id: light.porch
        state: "on"
      - delay: 1
  - action: light.turn_off
    target: { entity_id: light.hall }
`,
      }),
    );
    expect(out.steps).toEqual([
      { type: 'command', deviceId: 'lamp-1', command: 'turn_on' },
      {
        type: 'choose',
        choices: [
          {
            conditions: [
              { type: 'state', deviceId: 'motion-1', field: 'detected', is: true },
              { type: 'time', after: '20:00' },
            ],
            steps: [
              { type: 'command', deviceId: 'lamp-2', command: 'turn_on' },
              {
                type: 'choose',
                choices: [
                  {
                    conditions: [{ type: 'state', deviceId: 'kettle', field: 'on', is: false }],
                    steps: [
                      {
                        type: 'choose',
                        choices: [{ conditions: [{ type: 'state', deviceId: 'lamp-2', field: 'on', is: true }], steps: [{ type: 'delay', ms: 1000 }] }],
                      },
                    ],
                  },
                ],
              },
              { type: 'command', deviceId: 'lamp-1', command: 'turn_off' },
            ],
          },
        ],
      },
    ]);
  });
});

describe('Home Assistant import: refusals name the path', () => {
  const refusals: Array<[string, string, string, RegExp]> = [
    ['a trigger platform the hub has no trigger for', automation({ triggers: 'triggers:\n  - trigger: state\n    entity_id: light.hall\n    to: "on"\n  - platform: template\n    value_template: "{{ true }}"\n' }), 'triggers[1].platform', /"template" triggers do not map/],
    ['a device trigger', automation({ triggers: 'trigger:\n  - platform: device\n    device_id: abc\n    domain: light\n    type: turned_on\n' }), 'trigger[0].platform', /"device" triggers do not map/],
    ['light data the hub would drop', automation({ actions: 'actions:\n  - action: light.turn_on\n    target: { entity_id: light.hall }\n    data: { rgb_color: [255, 0, 0] }\n' }), 'actions[0].data.rgb_color', /"rgb_color" does not map.*brightness_pct/],
    ['a transition', automation({ actions: 'actions:\n  - action: light.turn_on\n    target: { entity_id: light.hall }\n    data: { brightness_pct: 50, transition: 2 }\n' }), 'actions[0].data.transition', /transitions do not map/],
    ['a time from an entity', automation({ triggers: 'triggers:\n  - trigger: time\n    at: input_datetime.wake_up\n' }), 'triggers[0].at', /input_datetime\.wake_up/],
    ['a time with seconds', automation({ triggers: 'triggers:\n  - trigger: time\n    at: ["07:00", "07:30:15"]\n' }), 'triggers[0].at[1]', /seconds/],
    ['an event other than the start', automation({ triggers: 'triggers:\n  - trigger: event\n    event_type: call_service\n' }), 'triggers[0].event_type', /homeassistant_start/],
    ['event data', automation({ triggers: 'triggers:\n  - trigger: event\n    event_type: homeassistant_start\n    event_data: { a: 1 }\n' }), 'triggers[0].event_data', /event data/],
    ['the shutdown', automation({ triggers: 'triggers:\n  - trigger: homeassistant\n    event: shutdown\n' }), 'triggers[0].event', /shutdown/],
    ['a value_template', automation({ triggers: 'triggers:\n  - trigger: numeric_state\n    entity_id: sensor.outdoor_temperature\n    value_template: "{{ state.state | float }}"\n    above: 3\n' }), 'triggers[0].value_template', /template/],
    ['another attribute', automation({ triggers: 'triggers:\n  - trigger: state\n    entity_id: light.hall\n    attribute: rgb_color\n' }), 'triggers[0].attribute', /attribute "rgb_color" of light entities does not map/],
    ['not_to', automation({ triggers: 'triggers:\n  - trigger: state\n    entity_id: light.hall\n    not_to: unavailable\n' }), 'triggers[0].not_to', /not_to/],
    ['a threshold from an entity', automation({ triggers: 'triggers:\n  - trigger: numeric_state\n    entity_id: sensor.outdoor_temperature\n    above: input_number.limit\n' }), 'triggers[0].above', /input_number\.limit/],
    ['a reading entity of another device', automation({ triggers: 'triggers:\n  - trigger: numeric_state\n    entity_id: sensor.thermostat_current_temperature\n    above: 3\n' }), 'triggers[0].entity_id', /reading of a climate device/],
    ['a state word of no reading', automation({ triggers: 'triggers:\n  - trigger: state\n    entity_id: lock.front_door\n    to: "on"\n' }), 'triggers[0].to', /"on" is not a state of lock entities/],
    ['a time_pattern that is no cron', automation({ triggers: 'triggers:\n  - trigger: time_pattern\n    minutes: "/75"\n' }), 'triggers[0].minutes', /0 to 59|1 to 59/],
    ['a template condition', automation({ conditions: 'conditions:\n  - condition: template\n    value_template: "{{ is_state(\'light.hall\', \'on\') }}"\n' }), 'conditions[0].condition', /template conditions do not map/],
    ['a template shorthand condition', automation({ conditions: 'conditions: "{{ now().hour > 6 }}"\n' }), 'conditions', /template conditions do not map/],
    ['a time condition on an entity', automation({ conditions: 'conditions:\n  - condition: time\n    after: input_datetime.start\n' }), 'conditions[0].after', /input_datetime\.start/],
    ['a device target', automation({ actions: 'actions:\n  - action: light.turn_on\n    target:\n      device_id: 0123abcd\n' }), 'actions[0].target.device_id', /device ids are Home Assistant's own/],
    ['an area target', automation({ actions: 'actions:\n  - action: light.turn_on\n    target:\n      entity_id: light.hall\n      area_id: kitchen\n' }), 'actions[0].target.area_id', /areas do not map/],
    ['a device action', automation({ actions: 'actions:\n  - device_id: abc\n    domain: light\n    type: turn_on\n' }), 'actions[0].device_id', /device actions do not map/],
    ['continue_on_error', automation({ actions: 'actions:\n  - action: light.turn_on\n    target: { entity_id: light.hall }\n    continue_on_error: true\n' }), 'actions[0].continue_on_error', /continue_on_error/],
    ['repeat for_each', automation({ actions: 'actions:\n  - repeat:\n      for_each: [a, b]\n      sequence: []\n' }), 'actions[0].repeat.for_each', /for_each/],
    ['a template in service data', automation({ actions: 'actions:\n  - action: light.turn_on\n    target: { entity_id: light.hall }\n    data:\n      brightness_pct: "{{ states(\'sensor.level\') }}"\n' }), 'actions[0].data.brightness_pct', /template/],
    ['a template in variables', automation({ actions: 'actions:\n  - variables:\n      level: "{{ states(\'sensor.level\') | int }}"\n' }), 'actions[0].variables.level', /trigger\.id/],
    ['a wait_template', automation({ actions: 'actions:\n  - wait_template: "{{ true }}"\n' }), 'actions[0].wait_template', /template/],
    ['an event action', automation({ actions: 'actions:\n  - event: my_event\n' }), 'actions[0].event', /events does not map/],
    ['a service the hub does not perform', automation({ actions: 'actions:\n  - action: media_player.select_source\n    target: { entity_id: media_player.tv }\n    data: { source: HDMI 1 }\n' }), 'actions[0].action', /media_player\.select_source does not map/],
    ['a service on an entity of another domain', automation({ actions: 'actions:\n  - action: light.turn_on\n    target: { entity_id: switch.kettle }\n' }), 'actions[0].target.entity_id', /does not act on switch\.kettle/],
    ['a service without a target', automation({ actions: 'actions:\n  - action: light.turn_on\n' }), 'actions[0]', /needs target\.entity_id/],
    ['a notify target', automation({ actions: 'actions:\n  - action: notify.notify\n    data: { message: hi, target: [phone] }\n' }), 'actions[0].data.target', /notify targets/],
    ['a wait for a time', automation({ actions: 'actions:\n  - wait_for_trigger:\n      - trigger: state\n        entity_id: light.hall\n        to: "off"\n      - trigger: time\n        at: "07:00"\n' }), 'actions[0].wait_for_trigger[1].trigger', /not time ones/],
    ['a wait longer than the hub waits', automation({ actions: 'actions:\n  - wait_for_trigger: { trigger: state, entity_id: light.hall, to: "off" }\n    timeout: "02:00:00"\n' }), 'actions[0].timeout', /longer than the hub allows \(1 h\)/],
    ['a variable name the hub keeps', automation({ actions: 'actions:\n  - variables: { now: 1 }\n' }), 'actions[0].variables.now', /hub's own name/],
    ['a response variable', automation({ actions: 'actions:\n  - stop: done\n    response_variable: result\n' }), 'actions[0].response_variable', /responses/],
    ['no alias and no id', automation({ top: 'description: nameless\n' }), 'alias', /alias \(or an id\)/],
    ['max without queued or parallel', automation({ top: 'alias: Test\nmax: 5\n' }), 'max', /queued or parallel/],
    ['a blueprint', 'use_blueprint:\n  path: motion_light.yaml\n  input: {}\n', 'use_blueprint', /blueprints do not map/],
    ['a secret', automation({ triggers: 'triggers:\n  - trigger: mqtt\n    topic: !secret door_topic\n' }), 'triggers[0].topic', /!secret door_topic reads secrets\.yaml/],
    ['no triggers', 'alias: Test\nactions: []\n', 'triggers', /at least one trigger/],
    ['{{ trigger.id }} when the hub ids differ', automation({ triggers: 'triggers:\n  - trigger: time\n    at: ["07:00", "08:00"]\n    id: wake\n', actions: 'actions:\n  - variables: { which: "{{ trigger.id }}" }\n' }), 'actions[0].variables.which', /other ids in the hub/],
  ];

  it.each(refusals)('refuses %s', (_what, yaml, path, problem) => {
    const error = failure(yaml);
    expect(error.code).toBe('AUTOMATION_NOT_MAPPED');
    expect(error.path).toBe(path);
    expect(error.problem).toMatch(problem);
    expect(error.message).toBe(`${path}: ${error.problem}`);
  });

  it('refuses an unknown entity at its path, naming it and where entity ids come from', () => {
    const error = failure(automation({ triggers: 'triggers:\n  - trigger: state\n    entity_id: binary_sensor.garage_motion\n    to: "on"\n' }));
    expect(error).toMatchObject({ code: 'AUTOMATION_NOT_MAPPED', path: 'triggers[0].entity_id' });
    expect(error.problem).toBe("unknown entity binary_sensor.garage_motion: entity ids are the hub's own, as the hub protocol's LIST_ENTITIES lists them");
    expect(failure(automation({ actions: 'actions:\n  - action: light.turn_off\n    target:\n      entity_id: [light.hall, light.attic]\n' }))).toMatchObject({
      path: 'actions[0].target.entity_id[1]',
      problem: expect.stringContaining('light.attic'),
    });
  });
});

describe('Home Assistant import: YAML', () => {
  it('refuses a billion-laughs document fast', () => {
    let bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    for (const [previous, name] of ['ab', 'bc', 'cd', 'de', 'ef', 'fg', 'gh', 'hi'].map((pair) => pair.split(''))) {
      bomb += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]\n`;
    }
    bomb += 'alias: laughs\ntriggers: *i\nactions: *i\n';
    const started = performance.now();
    const error = failure(bomb);
    expect(performance.now() - started).toBeLessThan(500);
    expect(error.code).toBe('YAML_ERROR');
    expect(error.message).toMatch(/alias/);
  });

  it('reports syntax errors, duplicate keys, unknown tags and too long documents as YAML errors', () => {
    expect(failure('alias: x\ntriggers: [\n')).toMatchObject({ code: 'YAML_ERROR' });
    expect(failure('alias: x\nalias: y\n')).toMatchObject({ code: 'YAML_ERROR', line: 2 });
    expect(failure('alias: !weird x\n')).toMatchObject({ code: 'YAML_ERROR', line: 1 });
    expect(failure(`alias: x\ndescription: "${'x'.repeat(PROGRAM_LIMITS.maxYamlLength)}"\n`)).toMatchObject({ code: 'YAML_ERROR' });
  });

  it('refuses deep nesting before the parser sees it (twice: a second deep parse could abort the process)', () => {
    for (let round = 0; round < 2; round++) {
      expect(failure('['.repeat(50_000) + ']'.repeat(50_000))).toMatchObject({ code: 'YAML_ERROR', line: 1, column: 65 });
      expect(failure('- '.repeat(5000) + 'x')).toMatchObject({ code: 'YAML_ERROR', line: 1, column: 201 });
      expect(failure(`alias: x\nquoted: "${'{'.repeat(100)}"\n`).message).toMatch(/nests too deeply/);
    }
  });

  it('refuses a list of several automations and reads anchors and merge keys', () => {
    expect(failure(`${OLD_SYNTAX}- alias: second\n  triggers: []\n  actions: []\n`)).toMatchObject({ path: '(document)' });
    const out = load(`
alias: Anchors
triggers:
  - &motion
    trigger: state
    entity_id: binary_sensor.hall_motion
    to: "on"
  - <<: *motion
    to: "off"
actions:
  - action: light.turn_off
    target: { entity_id: light.hall }
`);
    expect(out.triggers).toEqual([
      { type: 'state', deviceIds: ['motion-1'], field: 'detected', to: true },
      { type: 'state', deviceIds: ['motion-1'], field: 'detected', to: false },
    ]);
  });
});
