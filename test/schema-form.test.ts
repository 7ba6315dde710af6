import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromFields, fieldErrorsFromAjv, renderSchemaForm, type PluginSchemaFile } from '../src/surfaces/http/web/schema-form.js';

const unescape = (s: string) => s.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
const attributesOf = (tag: string) => Object.fromEntries([...tag.matchAll(/\s([\w-]+)(?:="([^"]*)")?/g)].map((m) => [m[1]!, m[2] === undefined ? true : unescape(m[2])]));

/** What a browser posts for the markup, as @fastify/formbody parses it (a repeated name gives an array). */
function post(markup: string, change: (fields: Array<[string, string]>) => Array<[string, string]> = (f) => f): Record<string, unknown> {
  const pairs: Array<[string, string]> = [];
  for (const [control] of markup.matchAll(/<input[^>]*>|<select[^>]*>[\s\S]*?<\/select>|<textarea[^>]*>[\s\S]*?<\/textarea>/g)) {
    const attrs = attributesOf(/^<\w+[^>]*>/.exec(control)![0]);
    const name = attrs.name as string;
    if (control.startsWith('<input')) {
      if (attrs.type !== 'checkbox' || attrs.checked) pairs.push([name, (attrs.value as string | undefined) ?? '']);
    } else if (control.startsWith('<select')) {
      const options = [...control.matchAll(/<option[^>]*>/g)].map((o) => attributesOf(o[0]));
      pairs.push([name, ((options.find((o) => o.selected) ?? options[0])!.value as string) ?? '']);
    } else pairs.push([name, unescape(/>([\s\S]*)<\/textarea>$/.exec(control)![1]!)]);
  }
  const fields: Record<string, unknown> = {};
  for (const [name, value] of change(pairs)) {
    const before = fields[name];
    fields[name] = before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
  }
  return fields;
}

const file: PluginSchemaFile = {
  pluginAlias: 'Demo',
  pluginType: 'platform',
  headerDisplay: 'Intro <script>alert(1)</script>\n\nSecond **paragraph**',
  footerDisplay: 'Footer <script>bye()</script>',
  schema: {
    type: 'object',
    properties: {
      name: { title: 'Name', type: 'string', required: true, default: '<script>evil()</script>' },
      email: { type: 'string', format: 'email', description: 'Where alerts go' },
      site: { type: 'string', format: 'uri' },
      password: { type: 'string', 'x-schema-form': { type: 'password' } },
      port: { title: 'Port', type: 'integer', minimum: 1, maximum: 65535 },
      ratio: { type: 'number', placeholder: '0.5' },
      debug: { title: 'Debug', type: 'boolean' },
      mode: { type: 'string', enum: ['auto', 'manual'], default: 'auto' },
      level: { type: 'integer', oneOf: [{ title: 'Low', enum: [1] }, { title: 'High', const: 2 }] },
      options: { type: 'object', title: 'Options', properties: { host: { type: 'string' }, secure: { type: 'boolean' } } },
      devices: {
        type: 'array',
        title: 'Devices',
        maxItems: 3,
        items: { type: 'object', properties: { name: { type: 'string', title: 'Device name', required: true }, port: { type: 'integer' }, enabled: { type: 'boolean' } } },
      },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['port'],
  },
};

const config = {
  name: 'Hall & <b>',
  email: 'a@example.com',
  site: 'http://x.test/?a=1&b="2"',
  password: 's3cret',
  port: 8080,
  ratio: 0.25,
  debug: true,
  mode: 'manual',
  level: 2,
  options: { host: 'h.local', secure: false },
  devices: [
    { name: 'A', port: 1, enabled: true },
    { name: 'B', enabled: false },
  ],
  tags: ['x', 'y'],
};

const tagOf = (markup: string, name: string) => new RegExp(`<(?:input|select|textarea)(?![^>]*type="hidden")[^>]*name="${name.replace(/[.[\]]/g, '\\$&')}"[^>]*>`).exec(markup)?.[0];

describe('renderSchemaForm', () => {
  const markup = renderSchemaForm(file, config, {}).text;

  it('renders each schema type as its control', () => {
    expect(tagOf(markup, 'cfg.name:string')).toMatch(/type="text".*required/);
    expect(tagOf(markup, 'cfg.email:string')).toContain('type="email"');
    expect(tagOf(markup, 'cfg.site:string')).toContain('type="url"');
    expect(tagOf(markup, 'cfg.password:string')).toContain('type="password"');
    expect(tagOf(markup, 'cfg.port:integer')).toMatch(/type="number".*value="8080".*min="1" max="65535" step="1" required/);
    expect(tagOf(markup, 'cfg.ratio:number')).toMatch(/step="any".*placeholder="0.5"/);
    expect(tagOf(markup, 'cfg.ratio:number')).not.toContain('required');
    expect(markup).toMatch(/<input type="hidden" name="cfg.debug:boolean" value="false"><label class="inline" for="cfg-debug"><input type="checkbox" id="cfg-debug" name="cfg.debug:boolean" value="true" checked> Debug<\/label>/);
    expect(markup).toMatch(/<select id="cfg-mode" name="cfg.mode:string"><option value=""><\/option><option value="auto">auto<\/option><option value="manual" selected>manual<\/option><\/select>/);
    expect(markup).toMatch(/<select id="cfg-level" name="cfg.level:integer"><option value=""><\/option><option value="1">Low<\/option><option value="2" selected>High<\/option><\/select>/);
    expect(markup).toMatch(/<fieldset id="cfg-options"><legend>Options<\/legend>.*name="cfg.options.host:string"/);
    expect(markup).toContain('aria-describedby="cfg-email--help"');
    expect(markup).toContain('<p class="help muted" id="cfg-email--help">Where alerts go</p>');
  });

  it('shows array items with a Remove box, plus one blank row until maxItems', () => {
    expect(markup).toContain('<legend>Devices 1</legend>');
    expect(markup).toContain('name="cfg.devices.1:remove"');
    expect(markup).toContain('<legend>Add to Devices</legend>');
    expect(tagOf(markup, 'cfg.devices.0.name:string')).toContain('required');
    // The blank row neither blocks the submit nor defaults its box to false.
    expect(tagOf(markup, 'cfg.devices.2.name:string')).not.toContain('required');
    expect(markup).not.toContain('type="hidden" name="cfg.devices.2.enabled:boolean"');
    expect(markup).not.toContain('cfg.devices.2:remove');
    expect(markup).toContain('name="cfg.tags.2:string"');

    const full = renderSchemaForm(file, { ...config, devices: [{ name: 'A' }, { name: 'B' }, { name: 'C' }] }, {}).text;
    expect(full).toContain('cfg.devices.2.name:string');
    expect(full).not.toContain('cfg.devices.3');
  });

  it('labels every control and keeps ids unique', () => {
    const ids = [...markup.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [tag] of markup.matchAll(/<(?:input|select|textarea)[^>]*>/g)) {
      if (tag.includes('type="hidden"')) continue;
      const id = /\sid="([^"]+)"/.exec(tag)?.[1];
      expect(id, tag).toBeDefined();
      expect(markup).toMatch(new RegExp(`<label[^>]* for="${id}">`));
    }
  });

  it('escapes the header, the footer and every value, and keeps header blocks as paragraphs', () => {
    const fresh = renderSchemaForm(file, {}, {}).text;
    expect(fresh).not.toContain('<script>');
    expect(fresh).toContain('<p class="schema-header">Intro &#60;script&#62;alert(1)&#60;/script&#62;</p><p class="schema-header">Second **paragraph**</p>');
    expect(fresh).toContain('<p class="schema-footer">Footer &#60;script&#62;bye()&#60;/script&#62;</p>');
    expect(tagOf(fresh, 'cfg.name:string')).toContain('value="&#60;script&#62;evil()&#60;/script&#62;"');
    expect(tagOf(markup, 'cfg.site:string')).toContain('value="http://x.test/?a=1&#38;b=&#34;2&#34;"');
  });

  it('shows an error beside its field, and errors no field shows at the top', () => {
    const errors = { name: 'must NOT have fewer than 1 characters', 'devices.0.port': 'must be <= 65535', '': 'must NOT have additional properties' };
    const withErrors = renderSchemaForm(file, config, { errors, idPrefix: 'p1' }).text;
    expect(tagOf(withErrors, 'cfg.name:string')).toMatch(/id="p1-name".*aria-describedby="p1-name--error" aria-invalid="true"/);
    expect(withErrors).toMatch(/name="cfg.name:string"[^>]*>(<p[^>]*>[^<]*<\/p>)?<span class="field-error" id="p1-name--error">must NOT have fewer than 1 characters<\/span>/);
    expect(tagOf(withErrors, 'cfg.devices.0.port:integer')).toContain('aria-invalid="true"');
    expect(withErrors).toContain('<span class="field-error" id="p1-devices-0-port--error">must be &#60;= 65535</span>');
    expect(withErrors).toContain('<ul class="field-error"><li>must NOT have additional properties</li></ul>');
    expect(tagOf(withErrors, 'cfg.email:string')).not.toContain('aria-invalid');
  });
});

describe('configFromFields', () => {
  const markup = renderSchemaForm(file, config, {}).text;

  it('gives back the configuration the form was rendered with', () => {
    expect(configFromFields(file, post(markup))).toEqual(config);
  });

  it('keeps a value the enum no longer lists', () => {
    const legacy = { ...config, mode: 'legacy' };
    expect(configFromFields(file, post(renderSchemaForm(file, legacy, {}).text))).toEqual(legacy);
  });

  it('adds a filled blank row, drops an untouched one and drops a removed row', () => {
    expect(configFromFields(file, post(markup)).devices).toHaveLength(2);
    const added = post(markup, (f) => f.map(([n, v]) => [n, n === 'cfg.devices.2.name:string' ? 'C' : n === 'cfg.tags.2:string' ? 'z' : v]));
    expect(configFromFields(file, added)).toMatchObject({ devices: [{ name: 'A' }, { name: 'B' }, { name: 'C' }], tags: ['x', 'y', 'z'] });
    const removed = post(markup, (f) => [...f, ['cfg.devices.0:remove', 'true'], ['cfg.tags.1:remove', 'true']]);
    expect(configFromFields(file, removed)).toMatchObject({ devices: [{ name: 'B', enabled: false }], tags: ['x'] });
  });

  it('reads an unchecked box as false and lets the last of repeated values win', () => {
    const unchecked = post(markup, (f) => f.filter(([n, v]) => !(n === 'cfg.debug:boolean' && v === 'true')));
    expect(unchecked['cfg.debug:boolean']).toBe('false');
    expect(configFromFields(file, unchecked).debug).toBe(false);
    expect(configFromFields(file, { 'cfg.debug:boolean': ['false', 'true'] }).debug).toBe(true);
  });

  it('leaves out empty numbers and optional strings, keeps required ones, ignores other fields', () => {
    const fields = { 'cfg.port:integer': '', 'cfg.ratio:number': '1.5', 'cfg.name:string': '', 'cfg.email:string': '', _csrf: 'x', other: 'y', 'cfg.__proto__.polluted:string': 'yes' };
    expect(configFromFields(file, fields)).toEqual({ ratio: 1.5, name: '' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('layout', () => {
  const layoutFile: PluginSchemaFile = {
    pluginAlias: 'Layout',
    pluginType: 'platform',
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name', required: true },
        options: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer' }, timeout: { type: 'number' } } },
        devices: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, ip: { type: 'string', title: 'IP' } } } },
        extra: { type: 'string' },
      },
    },
    layout: [
      { type: 'fieldset', title: 'Connection', items: ['options.port', { type: 'flex', items: ['options.host', 'name'] }] },
      { type: 'help', helpvalue: '<b>Tip</b>: set the port' },
      { key: 'devices', type: 'array', title: 'Lights', items: ['devices[].ip'] },
    ],
  };
  const layoutConfig = { name: 'n', options: { host: 'h', port: 1, timeout: 2 }, devices: [{ name: 'a', ip: '10.0.0.1' }], extra: 'e' };
  const markup = renderSchemaForm(layoutFile, layoutConfig, {}).text;
  const at = (needle: string) => {
    const index = markup.indexOf(needle);
    expect(index, needle).toBeGreaterThanOrEqual(0);
    return index;
  };

  it('renders in the layout order and grouping, then the properties it leaves out', () => {
    expect(markup).toMatch(/^<div class="schema-form"><fieldset><legend>Connection<\/legend><div class="field"><label for="cfg-options-port">port<\/label>/);
    expect(markup).toMatch(/<div class="row"><div class="field"><label for="cfg-options-host">/);
    const order = ['cfg.options.port:', 'cfg.options.host:', 'cfg.name:', '<p class="help">&#60;b&#62;Tip&#60;/b&#62;: set the port</p>', '<legend>Lights</legend>', 'cfg.devices.0.ip:', 'cfg.devices.0.name:', 'cfg.devices.1.ip:', 'cfg.options.timeout:', 'cfg.extra:'];
    const positions = order.map(at);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(markup.match(/name="cfg.options.port:integer"/g)).toHaveLength(1);
    expect(markup.match(/name="cfg.devices.0.ip:string"/g)).toHaveLength(1);
  });

  it('round-trips through the laid-out form', () => {
    expect(configFromFields(layoutFile, post(markup))).toEqual(layoutConfig);
  });

  it('shows a whole array where a layout names one of its item keys outside a row', () => {
    const outside = renderSchemaForm({ ...layoutFile, layout: ['devices[].ip'] }, layoutConfig, {}).text;
    expect(outside.indexOf('cfg.devices.0.name:')).toBeGreaterThan(-1);
    expect(outside.indexOf('cfg.devices.0.name:')).toBeLessThan(outside.indexOf('cfg.name:'));
  });
});

describe('fieldErrorsFromAjv', () => {
  it('maps each of the three styles to a field path', () => {
    expect(fieldErrorsFromAjv('body.name must NOT have fewer than 1 characters')).toEqual({ name: 'must NOT have fewer than 1 characters' });
    expect(fieldErrorsFromAjv('body/devices/0/port must be <= 65535')).toEqual({ 'devices.0.port': 'must be <= 65535' });
    expect(fieldErrorsFromAjv("body must have required property 'name'")).toEqual({ name: "must have required property 'name'" });
  });

  it('reads several joined errors, with or without the body prefix, inside the hub sentence', () => {
    expect(fieldErrorsFromAjv("body.devices.1 must have required property 'name', /options/port must be integer; mode must be equal to one of the allowed values")).toEqual({
      'devices.1.name': "must have required property 'name'",
      'options.port': 'must be integer',
      mode: 'must be equal to one of the allowed values',
    });
    expect(fieldErrorsFromAjv('The configuration does not fit the schema of homebridge-x: body.devices.0.port must be <= 65535.')).toEqual({ 'devices.0.port': 'must be <= 65535' });
    expect(fieldErrorsFromAjv("The configuration does not fit the schema of homebridge-x: body.name must have required property 'name'.")).toEqual({ name: "must have required property 'name'" });
  });
});

describe('the real fixture plugin', () => {
  const fixture = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, 'fixtures/homebridge-hcs-test/config.schema.json'), 'utf8')) as PluginSchemaFile;

  it('renders its required name and reads it back', () => {
    const markup = renderSchemaForm(fixture, { name: 'Switch' }, {}).text;
    expect(markup).toContain('<label for="cfg-name">Name <span aria-hidden="true">*</span></label><input type="text" id="cfg-name" name="cfg.name:string" value="Switch" minlength="1" required>');
    expect(configFromFields(fixture, post(markup))).toEqual({ name: 'Switch' });
    const error = fieldErrorsFromAjv('The configuration does not fit the schema of homebridge-hcs-test: body.name must NOT have fewer than 1 characters.');
    expect(renderSchemaForm(fixture, { name: '' }, { errors: error }).text).toContain('aria-describedby="cfg-name--error" aria-invalid="true"');
  });
});
