import { describe, expect, it } from 'vitest';
import { DISCOVERY_KEY_LIMIT, expandDiscoveryConfig } from '../src/adapters/mqtt/abbreviations.js';
import { compileTemplate, TEMPLATE_OUTPUT_LIMIT, TEMPLATE_SOURCE_LIMIT, TemplateError, type TemplateVariables } from '../src/adapters/mqtt/templates.js';

/**
 * Home Assistant MQTT discovery as devices send it: abbreviated keys and the `~` base topic
 * (expandDiscoveryConfig), and the value templates (Jinja) in it, which come from whoever can
 * publish to the broker (compileTemplate).
 */

const render = (source: string, vars: Partial<TemplateVariables> = {}) => compileTemplate(source).render({ value: '', ...vars });
const json = (payload: string): TemplateVariables => ({ value: payload, value_json: JSON.parse(payload) as unknown });

describe('HA value templates', () => {
  it('renders the templates Zigbee2MQTT, Tasmota and ESPHome send', () => {
    expect(render('{{ value_json.temperature }}', json('{"temperature":21.5}'))).toBe('21.5');
    expect(render('{{ value_json.state }}', json('{"state":"ON"}'))).toBe('ON');
    expect(render('{{ value_json.brightness | int }}', json('{"brightness":"12.7"}'))).toBe('12');
    expect(render('{{ value | float | round(1) }}', { value: '21.46' })).toBe('21.5');
    expect(render('{{ value_json.ENERGY.Power }}', json('{"ENERGY":{"Power":42,"Voltage":230}}'))).toBe('42');
    expect(render("{{ value_json['POWER'] }}", json('{"POWER":"OFF"}'))).toBe('OFF');
    expect(render('{% if value_json.contact %}OFF{% else %}ON{% endif %}', json('{"contact":true}'))).toBe('OFF');
    expect(render('{% if value_json.contact %}OFF{% else %}ON{% endif %}', json('{"contact":false}'))).toBe('ON');
    expect(render('{{ value_json.color_temp | default(0) }}', json('{"state":"ON"}'))).toBe('0');
    expect(render('{{ value_json.color_temp | default(0) }}', json('{"color_temp":370}'))).toBe('370');
    expect(render("{{ 'online' if value == 'Online' else 'offline' }}", { value: 'Online' })).toBe('online');
    expect(render("{{ 'online' if value == 'Online' else 'offline' }}", { value: 'Offline' })).toBe('offline');
    expect(render('{{ value | upper }}|{{ value | lower }}|{{ 12 | lower }}', { value: 'Auto' })).toBe('AUTO|auto|12');
  });

  it('renders an empty string for a payload that is no JSON', () => {
    expect(render('{{ value_json.x }}', { value: 'ON' })).toBe('');
    expect(render('{{ value_json.ENERGY.Power }}|{{ value_json["POWER"] }}', { value: 'ON' })).toBe('|');
    expect(render("{{ value_json.x | default('y') }}", { value: 'ON' })).toBe('y');
  });

  it('tells defined from undefined, and is_defined fails on undefined', () => {
    expect(render('{{ value_json.x is defined }}|{{ value_json.y is defined }}|{{ value_json.y is undefined }}', json('{"x":null}'))).toBe('True|False|True');
    expect(render('{{ value_json.x | is_defined }}', json('{"x":3}'))).toBe('3');
    expect(() => render('{{ value_json.missing | is_defined }}', json('{}'))).toThrow(TemplateError);
    expect(() => render('{{ value_json.missing | is_defined }}', json('{}'))).toThrow(/is_defined/);
  });

  it("has HA's filters", () => {
    expect(render('{{ "12.7" | int }}|{{ "abc" | int }}|{{ "abc" | int(5) }}|{{ "ff" | int(base=16) }}|{{ "0x1A" | int(0, 16) }}')).toBe('12|0|5|255|26');
    expect(render('{{ "3.25" | float }}|{{ "x" | float }}|{{ "x" | float(1.5) }}')).toBe('3.25|0|1.5');
    // Python's round: exact halves to even, and from the exact binary value (2.675 is 2.67499...).
    expect(render('{{ 2.5 | round }} {{ 3.5 | round }} {{ 0.125 | round(2) }} {{ 2.675 | round(2) }} {{ -2.5 | round }}')).toBe('2 4 0.12 2.67 -2');
    expect(render('{{ 2.26 | round(1, "floor") }} {{ 2.21 | round(1, "ceil") }} {{ 2.3 | round(method="half") }} {{ "n/a" | round }}')).toBe('2.2 2.3 2.5 n/a');
    expect(render('{{ "on" | bool }} {{ "No" | bool }} {{ 1 | bool }} {{ "maybe" | bool(false) }}')).toBe('True False True False');
    expect(() => render('{{ "maybe" | bool }}')).toThrow(TemplateError);
    expect(render('{{ value | multiply(10) }}|{{ "x" | multiply(2) }}', { value: '2.5' })).toBe('25|x');
    expect(render('{{ value | replace(",", ".") | float }}|{{ "abcb" | replace("b", "X", 1) }}', { value: '1,5' })).toBe('1.5|aXcb');
    expect(render('{{ value_json | tojson }}|{{ value_json.a | to_json }}', json('{"a":[1,"b"]}'))).toBe('{"a":[1,"b"]}|[1,"b"]');
    expect(render('{{ (value | from_json).b }}', { value: '{"b":7}' })).toBe('7');
    expect(() => render('{{ value_json.a | from_json }}', json('{"a":"{bad"}'))).toThrow(TemplateError);
  });

  it('fails to compile a syntax error, with TemplateError', () => {
    expect(() => compileTemplate('{{ value_json. }}')).toThrow(TemplateError);
    expect(() => compileTemplate('{% if value %}')).toThrow(TemplateError);
    // What the hub lacks is refused when the config is read, not on every payload.
    expect(() => compileTemplate('{{ value | regex_findall("x") }}')).toThrow(/filter not available: regex_findall/);
    expect(() => compileTemplate('{{ now() }}')).toThrow(/function not available: now/);
  });

  it('keeps templates away from Node', () => {
    const reach = [
      '{{ range.constructor("return process")() }}',
      '{{ value.constructor.constructor("return process")() }}',
      // nunjucks 3.2.4 pastes names into the code it generates: these would run their code.
      '{{ x"&&Function`globalThis\\x2epwned\\x3d1```&&" }}',
      String.raw`{{ x["\\\"+(globalThis.pwned=1), context, [])), env.opts.autoescape);//"]() }}`,
      '{% macro m() %}{% endmacro %}',
      '{% include "secrets.yaml" %}',
    ];
    for (const source of reach) expect(() => compileTemplate(source), source).toThrow(TemplateError);
    expect((globalThis as { pwned?: unknown }).pwned).toBeUndefined();

    // A lookup sees data only: no methods, nothing inherited.
    expect(render('{% set f = value["constr" ~ "uctor"] %}{{ f }}|{{ constructor }}|{{ value.toUpperCase }}|{{ value.length }}', { value: 'abc' })).toBe('|||3');
    expect(() => render('{{ value | attr("constructor") }}', { value: 'abc' })).toThrow(/filter not available/);
  });

  it('bounds the work and the output', () => {
    expect(() => compileTemplate(`{{ value }}${' '.repeat(TEMPLATE_SOURCE_LIMIT)}`)).toThrow(TemplateError);
    const nested = '{% for i in range(100) %}{% for j in range(100) %}{% for k in range(100) %}x{% endfor %}{% endfor %}{% endfor %}';
    expect(() => render(nested)).toThrow(/loops over more than/);
    expect(() => render('{% for i in range(1000000000) %}{% endfor %}')).toThrow(TemplateError);
    expect(() => render('{{ value | indent(1000000000) }}', { value: 'x' })).toThrow(/filter not available/);
    expect(() => render('{% set s = value %}{% for i in range(60) %}{% set s = s ~ s %}{% endfor %}{{ s }}', { value: 'ab' })).toThrow(TemplateError);
    expect(render('{{ value }}{{ value }}', { value: 'x'.repeat(40_000) })).toHaveLength(TEMPLATE_OUTPUT_LIMIT);
    expect(render('{% for i in range(3) %}{{ loop.index }}{% endfor %}')).toBe('123');
  });
});

describe('HA discovery abbreviations', () => {
  it('expands a Tasmota relay and puts its base topic in', () => {
    const tasmota = {
      name: 'Tasmota POWER', cmd_t: '~cmnd/POWER', stat_t: '~tele/STATE', val_tpl: '{{value_json.POWER}}',
      pl_off: 'OFF', pl_on: 'ON', avty_t: '~tele/LWT', pl_avail: 'Online', pl_not_avail: 'Offline',
      uniq_id: 'A1B2C3_RL_1', dev: { ids: ['A1B2C3'] }, '~': 'tasmota_A1B2C3/',
    };
    expect(expandDiscoveryConfig(tasmota)).toEqual({
      name: 'Tasmota POWER',
      command_topic: 'tasmota_A1B2C3/cmnd/POWER',
      state_topic: 'tasmota_A1B2C3/tele/STATE',
      value_template: '{{value_json.POWER}}',
      payload_off: 'OFF',
      payload_on: 'ON',
      availability_topic: 'tasmota_A1B2C3/tele/LWT',
      payload_available: 'Online',
      payload_not_available: 'Offline',
      unique_id: 'A1B2C3_RL_1',
      device: { identifiers: ['A1B2C3'] },
    });
  });

  it('expands an ESPHome sensor: its device, origin and availability entries', () => {
    const esphome = {
      '~': 'livingroom', dev_cla: 'temperature', unit_of_meas: '°C', stat_cla: 'measurement', name: 'Temperature',
      stat_t: '~/sensor/temperature/state', uniq_id: 'livingroomsensortemperature',
      avty: [{ t: '~/status', pl_avail: 'online', pl_not_avail: 'offline' }, { t: 'bridge/state', val_tpl: '{{ value_json.state }}' }],
      avty_mode: 'all',
      dev: { ids: 'e8db84aabbcc', name: 'livingroom', sw: 'esphome v2024.6.1', mdl: 'esp32dev', mf: 'Espressif', cns: [['mac', 'e8:db:84:aa:bb:cc']] },
      o: { name: 'esphome', sw: '2024.6.1', url: 'https://esphome.io' },
    };
    expect(expandDiscoveryConfig(esphome)).toEqual({
      device_class: 'temperature',
      unit_of_measurement: '°C',
      state_class: 'measurement',
      name: 'Temperature',
      state_topic: 'livingroom/sensor/temperature/state',
      unique_id: 'livingroomsensortemperature',
      availability: [
        { topic: 'livingroom/status', payload_available: 'online', payload_not_available: 'offline' },
        { topic: 'bridge/state', value_template: '{{ value_json.state }}' },
      ],
      availability_mode: 'all',
      device: { identifiers: 'e8db84aabbcc', name: 'livingroom', sw_version: 'esphome v2024.6.1', model: 'esp32dev', manufacturer: 'Espressif', connections: [['mac', 'e8:db:84:aa:bb:cc']] },
      origin: { name: 'esphome', sw_version: '2024.6.1', support_url: 'https://esphome.io' },
    });
  });

  it('keeps unknown keys and spelled-out ones, puts a trailing ~ in, and leaves odd shapes alone', () => {
    expect(expandDiscoveryConfig({ stat_t: 'a/b', my_key: 1, json_attr_t: 'tele/~', '~': 'dev1', command_topic: 'x' })).toEqual({
      state_topic: 'a/b', my_key: 1, json_attributes_topic: 'tele/dev1', command_topic: 'x',
    });
    // Keys HA has retired still expand, and an abbreviation wins over the same key spelled out (as in HA).
    expect(expandDiscoveryConfig({ pow_stat_t: 'p', whit_val_cmd_t: 'w', state_topic: 'full', stat_t: 'short' })).toEqual({
      power_state_topic: 'p', white_value_command_topic: 'w', state_topic: 'short',
    });
    expect(expandDiscoveryConfig({ dev: 'not a block', avty: 'nor a list', o: [1], stat_t: 5, '~': 7 })).toEqual({
      device: 'not a block', availability: 'nor a list', origin: [1], state_topic: 5,
    });
    expect(expandDiscoveryConfig({ avty: [null, 3, { t: '~x' }], constructor: 1, ['__proto__']: { stat_t: 1 } })).toEqual(
      JSON.parse('{"availability":[null,3,{"topic":"~x"}],"constructor":1,"__proto__":{"stat_t":1}}'),
    );
    expect(expandDiscoveryConfig(null as unknown as Record<string, unknown>)).toEqual({});
  });

  it('reads no more than DISCOVERY_KEY_LIMIT keys of a payload', () => {
    const huge = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`key_${i}`, i]));
    const expanded = expandDiscoveryConfig({ stat_t: 'first', ...huge, cmd_t: 'last' });
    expect(Object.keys(expanded)).toHaveLength(DISCOVERY_KEY_LIMIT);
    expect(expanded.state_topic).toBe('first');
    expect(expanded).not.toHaveProperty('command_topic');
    const manyEntries = expandDiscoveryConfig({ avty: Array.from({ length: 1000 }, () => ({ t: 'a' })) });
    expect(manyEntries.availability).toHaveLength(DISCOVERY_KEY_LIMIT);
  });
});
