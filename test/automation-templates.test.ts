import { describe, expect, it } from 'vitest';
import { checkDeep, checkTemplate, isTemplate, renderDeep, renderTemplate, TemplateError } from '../src/domain/automations/templates.js';

/**
 * The templates in automation actions (`{{ trigger.to }}` in command params and variables): a
 * small language the hub parses itself, since whoever edits an automation writes them.
 */

const scope = {
  trigger: { deviceId: 'front-door', to: 42, from: 'closed', on: true, attributes: { 'color temp': 370, rgb: [255, 128, 0] } },
  minutes: 5,
  level: '21.46',
  name: 'Hall Light',
  empty: '',
  nothing: null,
  rooms: [{ name: 'kitchen' }, { name: 'hall' }],
};

const render = (text: string, values: Record<string, unknown> = scope) => renderTemplate(text, values);

/** The TemplateError a call throws (failing the test when it throws nothing or something else). */
function templateError(run: () => unknown): TemplateError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error('expected a TemplateError');
}

describe('whole-value templates', () => {
  it('return the value with its type', () => {
    expect(render('{{ trigger.to }}')).toBe(42);
    expect(render('{{trigger.on}}')).toBe(true);
    expect(render('{{ trigger.attributes }}')).toBe(scope.trigger.attributes);
    expect(render('{{ rooms }}')).toEqual([{ name: 'kitchen' }, { name: 'hall' }]);
    expect(render('{{ nothing }}')).toBeNull();
    expect(render('{{ 1 + 2 }}')).toBe(3);
    expect(render("{{ 'text' }}")).toBe('text');
    expect(render('{{ null }}')).toBeNull();
    expect(render('{{ false }}')).toBe(false);
  });

  it('leave strings without {{ as they are', () => {
    expect(isTemplate('plain }} text')).toBe(false);
    expect(isTemplate('a {{ b }}')).toBe(true);
    expect(render('plain }} text')).toBe('plain }} text');
    expect(render('x'.repeat(5_000))).toHaveLength(5_000);
  });
});

describe('text templates', () => {
  it('interpolate the parts as text', () => {
    expect(render('Door {{ trigger.deviceId }} open for {{ minutes }} min')).toBe('Door front-door open for 5 min');
    expect(render(' {{ trigger.to }}')).toBe(' 42');
    expect(render('{{ trigger.to }}{{ minutes }}')).toBe('425');
    expect(render('on={{ trigger.on }} rgb={{ trigger.attributes.rgb }}')).toBe('on=true rgb=[255,128,0]');
    expect(render('[{{ missing }}|{{ nothing }}]')).toBe('[|]');
    expect(render('{{ "}}" }} and {{ \'it\\\'s\' }}')).toBe('}} and it\'s');
  });
});

describe('filters', () => {
  it('default replaces a missing value, null and empty text only', () => {
    expect(render('{{ missing | default(7) }}')).toBe(7);
    expect(render("{{ nothing | default('none') }}")).toBe('none');
    expect(render('{{ empty | default(minutes) }}')).toBe(5);
    expect(render('{{ zero | default(1) }}', { zero: 0 })).toBe(0);
    expect(render('{{ off | default(true) }}', { off: false })).toBe(false);
  });

  it('round rounds as Python does, int truncates, float reads decimal text', () => {
    expect(render('{{ level | round(1) }}')).toBe(21.5);
    expect(render('{{ level | float | round }}')).toBe(21);
    expect(render('{{ 2.5 | round }}')).toBe(2);
    expect(render('{{ 3.5 | round }}')).toBe(4);
    expect(render('{{ 0.125 | round(2) }}')).toBe(0.12);
    expect(render('{{ 1.005 | round(2) }}')).toBe(1); // the double is a little under 1.005
    expect(render('{{ -1.26 | round(1) }}')).toBe(-1.3);
    expect(render("{{ '12.7' | int }}")).toBe(12);
    expect(render('{{ -3.9 | int }}')).toBe(-3);
    expect(render('{{ level | float }}')).toBe(21.46);
    expect(render('{{ trigger.on | int }}')).toBe(1);
    expect(templateError(() => render("{{ 'abc' | int }}")).message).toMatch(/'int' cannot read a string as a number/);
    expect(templateError(() => render('{{ missing | round }}')).message).toMatch(/'round' cannot read a missing value/);
  });

  it('lower, upper, string and json', () => {
    expect(render('{{ name | lower }}/{{ name | upper }}')).toBe('hall light/HALL LIGHT');
    expect(render('{{ minutes | string }}')).toBe('5');
    expect(render('{{ missing | string }}')).toBe('');
    expect(render('{{ trigger.attributes | json }}')).toBe('{"color temp":370,"rgb":[255,128,0]}');
    expect(render("{{ 'a' | json }}")).toBe('"a"');
    expect(render('{{ missing | json }}')).toBe('null');
    expect(render('{{ name | lower | upper | lower }}')).toBe('hall light');
  });

  it('are a fixed table: unknown filters and wrong arguments fail the check', () => {
    const unknown = templateError(() => checkTemplate('{{ name | capitalize }}'));
    expect(unknown.message).toMatch(/unknown filter 'capitalize'/);
    expect(unknown.position).toBe(10);
    expect(() => checkTemplate('{{ name | constructor }}')).toThrow(/unknown filter 'constructor'/);
    expect(() => checkTemplate('{{ name | toString }}')).toThrow(/unknown filter/);
    expect(() => checkTemplate('{{ name | default }}')).toThrow(/'default' takes one argument/);
    expect(() => checkTemplate('{{ name | default(1, 2) }}')).toThrow(/'default' takes one argument/);
    expect(() => checkTemplate('{{ name | int(10) }}')).toThrow(/'int' takes no arguments/);
    expect(() => checkTemplate("{{ name | round('a') }}")).toThrow(/'round' takes a whole number/);
    expect(() => checkTemplate('{{ name | round(1.5) }}')).toThrow(/'round' takes a whole number/);
    expect(() => checkTemplate('{{ name | round(11) }}')).toThrow(/'round' takes a whole number/);
    expect(() => checkTemplate('{{ name | }}')).toThrow(/a filter name/);
    expect(() => checkTemplate('{{ name | int() }}')).not.toThrow();
  });
});

describe('arithmetic and comparisons', () => {
  it('keep the usual precedence', () => {
    expect(render('{{ 1 + 2 * 3 }}')).toBe(7);
    expect(render('{{ (1 + 2) * 3 }}')).toBe(9);
    expect(render('{{ 10 - 4 - 3 }}')).toBe(3);
    expect(render('{{ 8 / 4 / 2 }}')).toBe(1);
    expect(render('{{ -2 * 3 }}')).toBe(-6);
    expect(render('{{ - -2 }}')).toBe(2);
    expect(render('{{ minutes * 60 + 1 }}')).toBe(301);
    expect(render('{{ 1 + 2 == 3 }}')).toBe(true);
    expect(render('{{ minutes * 2 > 9 }}')).toBe(true);
  });

  it('bind filters tightest, as Jinja does', () => {
    const values = { a: 0.4, b: 0.4 };
    expect(render('{{ a + b | round }}', values)).toBe(0.4);
    expect(render('{{ (a + b) | round }}', values)).toBe(1);
    expect(render('{{ -missing | default(1) }}')).toBe(-1);
    expect(render("{{ level | float * 2 }}")).toBe(42.92);
  });

  it('compare numbers, strings, booleans and null', () => {
    expect(render("{{ trigger.from == 'closed' }}")).toBe(true);
    expect(render("{{ trigger.from != 'closed' }}")).toBe(false);
    expect(render("{{ trigger.to == '42' }}")).toBe(false); // no coercion
    expect(render('{{ missing == null }}')).toBe(true);
    expect(render('{{ trigger.on == true }}')).toBe(true);
    expect(render("{{ 'abc' < 'abd' }}")).toBe(true);
    expect(render('{{ 3 <= 3 }}/{{ 3 >= 4 }}/{{ 2 < 1 }}')).toBe('true/false/false');
    expect(() => checkTemplate('{{ 1 < 2 < 3 }}')).toThrow(/comparisons do not chain/);
    expect(render('{{ (1 < 2) == true }}')).toBe(true);
    expect(() => render("{{ 1 < 'a' }}")).toThrow(/compares two numbers or two strings/);
    expect(() => render('{{ rooms == rooms }}')).toThrow(/compares numbers, strings, booleans and null/);
  });

  it('do arithmetic on numbers only, and fail on division by zero at render', () => {
    expect(() => render("{{ 'a' + 'b' }}")).toThrow(/'\+' needs two numbers, not a string and a string/);
    expect(() => render('{{ missing + 1 }}')).toThrow(/not a missing value and a number/);
    expect(() => render('{{ -name }}')).toThrow(/'-' needs a number/);
    expect(() => checkTemplate('{{ minutes / 0 }}')).not.toThrow();
    const division = templateError(() => render('{{ minutes / 0 }}'));
    expect(division.message).toMatch(/division by zero/);
    expect(division.position).toBe(11);
    expect(() => render('{{ 1e300 * 1e300 }}')).toThrow(/no finite number/);
  });
});

describe('paths', () => {
  it('read nested values through names, indexes and quoted keys', () => {
    expect(render("{{ trigger.attributes['color temp'] }}")).toBe(370);
    expect(render('{{ trigger["attributes"].rgb[1] }}')).toBe(128);
    expect(render('{{ rooms[1].name }}')).toBe('hall');
    expect(render('{{ rooms [ 0 ] . name }}')).toBe('kitchen');
    expect(() => checkTemplate('{{ rooms[-1] }}')).toThrow(/a whole number or a quoted key/);
    expect(() => checkTemplate('{{ rooms[1.5] }}')).toThrow(/a whole number or a quoted key/);
    expect(() => checkTemplate('{{ rooms[minutes] }}')).toThrow(/a whole number or a quoted key/);
  });

  it('give undefined for missing values, however deep', () => {
    expect(render('{{ missing }}')).toBeUndefined();
    expect(render('{{ missing.deeper["still"][3] }}')).toBeUndefined();
    expect(render('{{ trigger.to.deeper }}')).toBeUndefined();
    expect(render('{{ name.length }}')).toBeUndefined();
    expect(render('{{ rooms[9].name }}')).toBeUndefined();
  });

  it('read only own data properties of plain objects and arrays', () => {
    class Device {
      name = 'lamp';
    }
    const getterRan = { count: 0 };
    const values = {
      device: new Device(),
      map: new Map([['a', 1]]),
      date: new Date(0),
      bare: Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 }),
      lazy: Object.defineProperty({}, 'secret', { enumerable: true, get: () => ++getterRan.count }),
    };
    expect(render('{{ device.name }}', values)).toBeUndefined();
    expect(render('{{ map.size }}', values)).toBeUndefined();
    expect(render("{{ map['a'] }}", values)).toBeUndefined();
    expect(render('{{ date.getTime }}', values)).toBeUndefined();
    expect(render('{{ bare.a }}', values)).toBe(1);
    expect(render('{{ lazy.secret }}', values)).toBeUndefined();
    expect(getterRan.count).toBe(0);
    expect(render('{{ toString }}/{{ hasOwnProperty }}/{{ rooms.map }}/{{ name.toUpperCase }}')).toBe('///');
  });

  it('refuse __proto__, constructor and prototype at parse time', () => {
    for (const text of [
      '{{ __proto__ }}',
      '{{ constructor }}',
      '{{ trigger.constructor }}',
      '{{ trigger.__proto__.x }}',
      '{{ name.constructor.prototype }}',
      '{{ trigger["__proto__"] }}',
      "{{ trigger['constructor'] }}",
      "{{ trigger['prototype'] }}",
      '{{ missing | default(trigger.constructor) }}',
    ]) {
      expect(() => checkTemplate(text), text).toThrow(/may not be read/);
      expect(() => render(text), text).toThrow(TemplateError);
    }
    expect(templateError(() => checkTemplate('{{ trigger.constructor }}')).position).toBe(11);
  });

  it('leave Object.prototype untouched by a pollution attempt', () => {
    const attack = JSON.parse('{"__proto__": {"polluted": "{{ 1 }}"}, "ok": "{{ minutes }}"}') as unknown;
    const rendered = renderDeep(attack, scope) as Record<string, unknown>;
    expect(Object.hasOwn(rendered, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(rendered)).toBe(Object.prototype);
    expect(rendered.ok).toBe(5);
    expect(() => render('{{ __proto__.polluted }}', { polluted: 'yes' })).toThrow(TemplateError);
    expect(() => render("{{ x['__proto__']['polluted'] }}", { x: {} })).toThrow(TemplateError);
    expect(render('{{ x.__proto__x }}', { x: {} })).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
  });
});

describe('syntax errors', () => {
  it('name the problem and where it is', () => {
    const unclosed = templateError(() => checkTemplate('Door {{ trigger.to'));
    expect(unclosed.message).toMatch(/'\{\{' at 5 is not closed/);
    expect(unclosed.position).toBe(5);
    expect(() => checkTemplate('{{ }}')).toThrow(/empty/);
    expect(() => checkTemplate('{{ x = 1 }}')).toThrow(/compare with '=='/);
    expect(() => checkTemplate("{{ 'open }}")).toThrow(/string opened at 3 is not closed/);
    expect(() => checkTemplate('{{ "\\q" }}')).toThrow(/unknown escape/);
    expect(() => checkTemplate('{{ 1 + }}')).toThrow(/expected a value, a name or '\(' but found '\}\}'/);
    expect(() => checkTemplate('{{ (1 + 2 }}')).toThrow(/expected '\)'/);
    expect(() => checkTemplate('{{ a b }}')).toThrow(/expected '\}\}' but found 'b'/);
    expect(() => checkTemplate('{{ 12abc }}')).toThrow(/runs into a name/);
    expect(() => checkTemplate('{{ true.x }}')).toThrow(/expected '\}\}'/);
    expect(() => checkTemplate('{{ {{ x }} }}')).toThrow(/unexpected '\{'/);
    expect(() => checkTemplate('{{ a.1 }}')).toThrow(/a name after '\.'/);
    expect(() => checkTemplate('{{ 1e999 }}')).toThrow(/too large/);
    expect(() => checkTemplate('no template here {')).not.toThrow();
  });
});

describe('bounds', () => {
  it('a template of at most 2,000 characters', () => {
    const padding = (length: number) => `{{ 1 }}${' '.repeat(length - 7)}`;
    expect(() => checkTemplate(padding(2_000))).not.toThrow();
    expect(() => checkTemplate(padding(2_001))).toThrow(/at most 2000 characters/);
  });

  it('at most 64 {{ }} parts', () => {
    expect(render('{{ 1 }}'.repeat(64))).toBe('1'.repeat(64));
    const tooMany = templateError(() => checkTemplate('{{ 1 }}'.repeat(65)));
    expect(tooMany.message).toMatch(/at most 64/);
    expect(tooMany.position).toBe(64 * 7);
  });

  it('expression nesting at most 32', () => {
    expect(render(`{{ ${'('.repeat(32)}1${')'.repeat(32)} }}`)).toBe(1);
    expect(() => checkTemplate(`{{ ${'('.repeat(33)}1${')'.repeat(33)} }}`)).toThrow(/nested deeper than 32/);
    expect(() => checkTemplate(`{{ ${'-'.repeat(33)}1 }}`)).toThrow(/nested deeper than 32/);
    expect(render(`{{ ${'x | default('.repeat(32)}1${')'.repeat(32)} }}`)).toBe(1);
    expect(() => checkTemplate(`{{ ${'x | default('.repeat(33)}1${')'.repeat(33)} }}`)).toThrow(/nested deeper than 32/);
    // Long flat chains are not nesting.
    expect(render(`{{ 0${' + 1'.repeat(400)} }}`)).toBe(400);
  });

  it('rendered text of at most 10,000 characters', () => {
    const values = { long: 'x'.repeat(6_000) };
    expect(render('{{ long }}-', values)).toHaveLength(6_001);
    expect(() => render('{{ long }}{{ long }}', values)).toThrow(/longer than 10000/);
    expect(() => render('{{ long }}', { long: 'x'.repeat(10_001) })).toThrow(/longer than 10000/);
    expect(() => render('{{ rooms | json }}', { rooms: Array.from({ length: 2_000 }, (_, i) => ({ i })) })).toThrow(/longer than 10000/);
  });

  it('rendering throws nothing but TemplateError', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const trap = new Proxy(
      {},
      {
        getOwnPropertyDescriptor() {
          throw new RangeError('trap');
        },
      },
    );
    expect(templateError(() => render('{{ cycle | json }}', { cycle })).message).toMatch(/cannot be written as JSON/);
    expect(templateError(() => render('x {{ big }}', { big: { n: 1n } })).message).toMatch(/cannot be written as JSON/);
    expect(templateError(() => render('{{ trap.x }}', { trap })).message).toMatch(/the template failed: trap/);
    expect(templateError(() => renderDeep({ a: '{{ trap.x }}' }, { trap })).message).toMatch(/^a: the template failed: trap/);
  });

  it('cached templates render each scope afresh, and many distinct ones still render', () => {
    expect(render('{{ n * 2 }}', { n: 1 })).toBe(2);
    expect(render('{{ n * 2 }}', { n: 4 })).toBe(8);
    for (let i = 0; i < 1_100; i += 1) expect(render(`{{ n + ${i} }}`, { n: 1 })).toBe(i + 1);
    expect(render('{{ n + 0 }}', { n: 2 })).toBe(2);
  });
});

describe('renderDeep and checkDeep', () => {
  it('render every template string in objects and arrays and keep the rest', () => {
    const params = {
      brightness: '{{ minutes * 10 }}',
      message: 'Door {{ trigger.deviceId }}',
      plain: 'as is',
      count: 3,
      on: true,
      none: null,
      colors: ['{{ trigger.attributes.rgb[0] }}', 'red'],
      nested: { deeper: { value: '{{ trigger.on }}' } },
    };
    const rendered = renderDeep(params, scope);
    expect(rendered).toEqual({
      brightness: 50,
      message: 'Door front-door',
      plain: 'as is',
      count: 3,
      on: true,
      none: null,
      colors: [255, 'red'],
      nested: { deeper: { value: true } },
    });
    expect(params.brightness).toBe('{{ minutes * 10 }}');
    expect(renderDeep('{{ minutes }}', scope)).toBe(5);
    expect(renderDeep(7, scope)).toBe(7);
    const date = new Date(0);
    expect(renderDeep(date, scope)).toBe(date);
  });

  it('walk at most 16 levels', () => {
    const nest = (levels: number): unknown => (levels === 0 ? '{{ minutes }}' : [nest(levels - 1)]);
    expect(JSON.stringify(renderDeep(nest(16), scope))).toBe(`${'['.repeat(16)}5${']'.repeat(16)}`);
    expect(() => renderDeep(nest(17), scope)).toThrow(/nested deeper than 16 levels/);
    expect(() => checkDeep(nest(17), 'params')).toThrow(/^params(\[0\]){16}: nested deeper than 16 levels/);
    const cycle: Record<string, unknown> = { a: '{{ minutes }}' };
    cycle.self = cycle;
    expect(() => renderDeep(cycle, scope)).toThrow(TemplateError);
  });

  it('name the path of the failing string', () => {
    expect(() => checkDeep({ brightness: '{{ level | bogus }}' }, 'params')).toThrow(/^params\.brightness: unknown filter 'bogus'/);
    expect(() => checkDeep({ colors: ['ok', '{{ x'] }, 'params')).toThrow(/^params\.colors\[1\]: the '\{\{' at 0 is not closed/);
    expect(() => checkDeep({ 'my key': '{{ 1 +' }, 'variables')).toThrow(/^variables\["my key"\]: /);
    expect(() => checkDeep('{{ }}', '')).toThrow(/^empty/);
    expect(() => checkDeep({ a: { b: '{{ }}' } }, '')).toThrow(/^a\.b: empty/);
    const error = templateError(() => checkDeep({ brightness: '{{ level | bogus }}' }, 'params'));
    expect(error.position).toBe(11);
    expect(() => checkDeep({ fine: '{{ trigger.to | default(0) }}', n: 1, list: [null, 'text'] }, 'params')).not.toThrow();
    expect(() => renderDeep({ level: { x: '{{ minutes / 0 }}' } }, scope)).toThrow(/^level\.x: division by zero/);
  });
});
