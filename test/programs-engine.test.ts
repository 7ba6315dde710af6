import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { ProgramExecutor, evaluateCondition } from '../src/domain/programs/executor.js';
import type { Step, StepEnvironment, Timer } from '../src/domain/programs/model.js';
import { findCycle, lightingDevices, referencesOf } from '../src/domain/programs/references.js';
import { ProgramScheduler, type FireStore } from '../src/domain/programs/scheduler.js';
import { ProgramInputSchema, StepSchema, TimerSchema, countSteps, parseProgramInput, validateSteps, validateTimer } from '../src/domain/programs/steps.js';
import { compileProgramYaml, parseDuration } from '../src/domain/programs/yaml.js';
import { ManualClock, type TimerHandle, type Timers } from '../src/platform/clock.js';
import { DomainError } from '../src/platform/errors.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const utc = (iso: string) => Date.parse(iso);

function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError');
}

/** Line, column and path of the YAML error the text produces. */
function yamlError(text: string): { line: number; column: number; path?: string } {
  const e = thrown(() => compileProgramYaml(text));
  expect(e.kind).toBe('invalid');
  expect(e.code).toBe('YAML_ERROR');
  return e.details as { line: number; column: number; path?: string };
}

const stepCheck = Compile(StepSchema);
const timerCheck = Compile(TimerSchema);

// -------------------------------------------------------------------------------------------------
// YAML compiler
// -------------------------------------------------------------------------------------------------

describe('YAML compiler: valid documents', () => {
  it('compiles the reference example (every step kind, off path, daily timer)', () => {
    const program = compileProgramYaml(`
name: Movie night
description: Dim the lights and start the projector
concurrency: restart
semantics: [movie, cinema]
timer: { daily: "20:30", weekdays: [fri, sat], timezone: Europe/Berlin }
steps:
  - device: living-lamp          # deviceId
    command: set_brightness
    params: { brightness: 20 }
  - delay: 2s
  - wait: { device: projector, key: power, is: "on", timeout: 30s }
  - parallel:
      - - device: a
          command: turn_off
      - - device: b
          command: turn_off
  - if: { device: sensor, key: lux, below: 100 }
    then:
      - device: lamp
        command: turn_on
    else: []
  - program: other-program-id
  - macro: some-macro-id
  - zone: living-zone
    volume: 30
off:
  - device: living-lamp
    command: turn_off
`);
    expect(program).toEqual({
      name: 'Movie night',
      description: 'Dim the lights and start the projector',
      concurrency: 'restart',
      semantics: ['movie', 'cinema'],
      timer: { kind: 'daily', time: '20:30', weekdays: [5, 6], timezone: 'Europe/Berlin', enabled: true },
      steps: [
        { type: 'command', deviceId: 'living-lamp', command: 'set_brightness', params: { brightness: 20 } },
        { type: 'delay', ms: 2000 },
        { type: 'wait_until', condition: { deviceId: 'projector', key: 'power', op: 'eq', value: 'on' }, timeoutMs: 30_000 },
        {
          type: 'parallel',
          branches: [[{ type: 'command', deviceId: 'a', command: 'turn_off' }], [{ type: 'command', deviceId: 'b', command: 'turn_off' }]],
        },
        {
          type: 'condition',
          condition: { deviceId: 'sensor', key: 'lux', op: 'lt', value: 100 },
          then: [{ type: 'command', deviceId: 'lamp', command: 'turn_on' }],
          else: [],
        },
        { type: 'run_program', programId: 'other-program-id' },
        { type: 'run_macro', macroId: 'some-macro-id' },
        { type: 'zone_volume', zoneId: 'living-zone', volume: 30 },
      ],
      offSteps: [{ type: 'command', deviceId: 'living-lamp', command: 'turn_off' }],
    });
    for (const step of [...program.steps, ...(program.offSteps ?? [])]) expect(stepCheck.Check(step)).toBe(true);
    expect(timerCheck.Check(program.timer)).toBe(true);
  });

  it('reads durations as milliseconds or with units', () => {
    const { steps } = compileProgramYaml(`
steps:
  - delay: 500
  - delay: 500ms
  - delay: 2s
  - delay: 1m
  - delay: 1h
  - delay: 1m30s
  - delay: "1.5s"
  - delay: 0
  - device: tv
    command: power_on
    timeout: 45s
  - wait: { device: tv, key: power, is: true }
`);
    expect(steps).toEqual([
      { type: 'delay', ms: 500 },
      { type: 'delay', ms: 500 },
      { type: 'delay', ms: 2000 },
      { type: 'delay', ms: 60_000 },
      { type: 'delay', ms: 3_600_000 },
      { type: 'delay', ms: 90_000 },
      { type: 'delay', ms: 1500 },
      { type: 'delay', ms: 0 },
      { type: 'command', deviceId: 'tv', command: 'power_on', timeoutMs: 45_000 },
      { type: 'wait_until', condition: { deviceId: 'tv', key: 'power', op: 'eq', value: true }, timeoutMs: 60_000 },
    ]);
    expect(parseDuration('2h 15m')).toBe(8_100_000);
    expect(parseDuration('5 minutes')).toBeUndefined();
    expect(parseDuration(-1)).toBeUndefined();
  });

  it('maps every comparison word', () => {
    const { steps } = compileProgramYaml(`
steps:
  - if: { device: d, key: k, is: "x" }
    then: []
  - if: { device: d, key: k, equals: 3 }
    then: []
  - if: { device: d, key: k, not: off }
    then: []
  - if: { device: d, key: k, above: 1 }
    then: []
  - if: { device: d, key: k, at_least: 2 }
    then: []
  - if: { device: d, key: k, below: 3.5 }
    then: []
  - if: { device: d, key: k, at_most: -4 }
    then: []
  - if: { device: d, key: k, on: true }
    then: []
  - if: { device: d, key: k, on: false }
    then: []
`);
    expect(steps.map((s) => (s.type === 'condition' ? s.condition : undefined))).toEqual([
      { deviceId: 'd', key: 'k', op: 'eq', value: 'x' },
      { deviceId: 'd', key: 'k', op: 'eq', value: 3 },
      { deviceId: 'd', key: 'k', op: 'ne', value: 'off' },
      { deviceId: 'd', key: 'k', op: 'gt', value: 1 },
      { deviceId: 'd', key: 'k', op: 'gte', value: 2 },
      { deviceId: 'd', key: 'k', op: 'lt', value: 3.5 },
      { deviceId: 'd', key: 'k', op: 'lte', value: -4 },
      { deviceId: 'd', key: 'k', op: 'truthy' },
      { deviceId: 'd', key: 'k', op: 'falsy' },
    ]);
  });

  it('compiles cron and interval timers, enabled and catch_up', () => {
    expect(compileProgramYaml('timer: { cron: "0 7 * * 1-5", timezone: America/New_York, catch_up: true }\nsteps: []').timer).toEqual({
      kind: 'cron',
      expression: '0 7 * * 1-5',
      timezone: 'America/New_York',
      enabled: true,
      catchUp: true,
    });
    expect(compileProgramYaml('timer: { cron: "*/30 * * * * *" }\nsteps: []').timer).toEqual({ kind: 'cron', expression: '*/30 * * * * *', enabled: true });
    expect(compileProgramYaml('timer:\n  every: 15m\n  enabled: false\nsteps: []').timer).toEqual({ kind: 'interval', everyMs: 900_000, enabled: false });
    expect(compileProgramYaml('timer: { daily: 7:05, weekdays: [0, Monday, SAT, mon] }\nsteps: []').timer).toEqual({
      kind: 'daily',
      time: '07:05',
      weekdays: [0, 1, 6],
      enabled: true,
    });
    expect(compileProgramYaml('timer: { daily: "23:59", weekdays: sun }\nsteps: []').timer).toEqual({ kind: 'daily', time: '23:59', weekdays: [0], enabled: true });
    expect(compileProgramYaml('timer: ~\nsteps: []').timer).toBeUndefined();
  });

  it('accepts nested containers, single-step branches, labels, zone delta and aliases', () => {
    const program = compileProgramYaml(`
semantics: bedtime
steps:
  - parallel:
      - device: a
        command: turn_off
        label: A off
      - - if: { device: door, key: open, on: true }
          then: &alarm
            - device: siren
              command: beep
          else:
            - parallel:
                - - delay: 1s
                  - zone: kitchen
                    delta: -5
    label: Everything
  - if: { device: door, key: open, is: yes }
    then: *alarm
`);
    expect(program).toEqual({
      semantics: ['bedtime'],
      steps: [
        {
          type: 'parallel',
          label: 'Everything',
          branches: [
            [{ type: 'command', deviceId: 'a', command: 'turn_off', label: 'A off' }],
            [
              {
                type: 'condition',
                condition: { deviceId: 'door', key: 'open', op: 'truthy' },
                then: [{ type: 'command', deviceId: 'siren', command: 'beep' }],
                else: [{ type: 'parallel', branches: [[{ type: 'delay', ms: 1000 }, { type: 'zone_volume', zoneId: 'kitchen', delta: -5 }]] }],
              },
            ],
          ],
        },
        {
          type: 'condition',
          condition: { deviceId: 'door', key: 'open', op: 'eq', value: 'yes' },
          then: [{ type: 'command', deviceId: 'siren', command: 'beep' }],
        },
      ],
    });
    expect(countSteps(program.steps)).toBe(9);
    for (const step of program.steps) expect(stepCheck.Check(step)).toBe(true);
  });

  it('compiles a minimal document', () => {
    expect(compileProgramYaml('steps: []')).toEqual({ steps: [] });
    expect(compileProgramYaml('# just one\nsteps:\n  - program: "42"\n')).toEqual({ steps: [{ type: 'run_program', programId: '42' }] });
  });
});

describe('YAML compiler: errors carry line and column', () => {
  it('syntax errors', () => {
    expect(yamlError('steps:\n  - device: a\n    command: [on\n')).toMatchObject({ line: 4, column: 1 });
    expect(yamlError('steps:\n  - delay: 1s\n   - delay: 2s\n')).toMatchObject({ line: 3, column: 4 });
    expect(yamlError('name: a\nname: b\nsteps: []\n')).toMatchObject({ line: 2, column: 1 });
    expect(yamlError('steps:\n\t- delay: 1s\n')).toMatchObject({ line: 2, column: 1 });
  });

  it('an unknown key', () => {
    expect(yamlError('steps:\n  - device: lamp\n    command: turn_on\n    colour: red\n')).toEqual({ line: 4, column: 5, path: 'steps[0].colour' });
    expect(yamlError('steps:\n  - delay: 1s\n  - frobnicate: 3\n')).toEqual({ line: 3, column: 5, path: 'steps[1].frobnicate' });
    expect(yamlError('name: x\nsteps: []\nowner: me\n')).toEqual({ line: 3, column: 1, path: '.owner' });
    expect(yamlError('steps:\n  - wait: { device: a, key: b, is: 1, within: 3s }\n')).toEqual({ line: 2, column: 39, path: 'steps[0].wait.within' });
  });

  it('a bad duration', () => {
    expect(yamlError('steps:\n  - delay: 5 minutes\n')).toEqual({ line: 2, column: 12, path: 'steps[0].delay' });
    expect(yamlError('steps:\n  - delay: 25h\n')).toEqual({ line: 2, column: 12, path: 'steps[0].delay' });
    expect(yamlError('steps:\n  - device: a\n    command: b\n    timeout: 2h\n')).toEqual({ line: 4, column: 14, path: 'steps[0].timeout' });
    expect(yamlError('timer: { every: 500ms }\nsteps: []\n')).toEqual({ line: 1, column: 17, path: 'timer.every' });
  });

  it('a missing command (and other missing keys)', () => {
    expect(yamlError('steps:\n  - device: lamp\n    params: { a: 1 }\n')).toEqual({ line: 2, column: 5, path: 'steps[0].command' });
    expect(yamlError('steps:\n  - command: turn_on\n')).toEqual({ line: 2, column: 5, path: 'steps[0]' });
    expect(yamlError('name: x\n')).toEqual({ line: 1, column: 1, path: 'steps' });
    expect(yamlError('steps:\n  - if: { device: a, key: b, is: 1 }\n')).toEqual({ line: 2, column: 5, path: 'steps[0].then' });
    expect(yamlError('steps:\n  - zone: z\n')).toEqual({ line: 2, column: 5, path: 'steps[0]' });
    expect(yamlError('# nothing\n')).toEqual({ line: 1, column: 1 });
  });

  it('a bad weekday', () => {
    expect(yamlError('timer: { daily: "07:00", weekdays: [mon, funday] }\nsteps: []\n')).toEqual({ line: 1, column: 42, path: 'timer.weekdays[1]' });
    expect(yamlError('timer:\n  daily: "07:00"\n  weekdays:\n    - 7\n')).toEqual({ line: 4, column: 7, path: 'timer.weekdays[0]' });
  });

  it('a bad cron expression', () => {
    expect(yamlError('timer:\n  cron: "61 * * * *"\nsteps: []\n')).toEqual({ line: 2, column: 9, path: 'timer.cron' });
    expect(yamlError('timer:\n  cron: "0 7 * *"\nsteps: []\n')).toEqual({ line: 2, column: 9, path: 'timer.cron' });
    expect(yamlError('timer: { cron: "0 0 30 2 *" }\nsteps: []\n')).toEqual({ line: 1, column: 16, path: 'timer.cron' });
  });

  it('a bad time zone and a bad time', () => {
    expect(yamlError('timer:\n  daily: "07:00"\n  timezone: Mars/Olympus\nsteps: []\n')).toEqual({ line: 3, column: 13, path: 'timer.timezone' });
    expect(yamlError('timer:\n  daily: "24:00"\nsteps: []\n')).toEqual({ line: 2, column: 10, path: 'timer.daily' });
  });

  it('a value of the wrong type', () => {
    expect(yamlError('steps:\n  - device: lamp\n    command: set\n    params: 5\n')).toEqual({ line: 4, column: 13, path: 'steps[0].params' });
    expect(yamlError('steps: { device: a }\n')).toEqual({ line: 1, column: 8, path: 'steps' });
    expect(yamlError('name: [a]\nsteps: []\n')).toEqual({ line: 1, column: 7, path: 'name' });
    expect(yamlError('steps:\n  - device: 42\n    command: on\n')).toEqual({ line: 2, column: 13, path: 'steps[0].device' });
    expect(yamlError('steps:\n  - zone: z\n    volume: loud\n')).toEqual({ line: 3, column: 13, path: 'steps[0].volume' });
    expect(yamlError('steps:\n  - if: { device: d, key: k, above: high }\n    then: []\n')).toEqual({ line: 2, column: 37, path: 'steps[0].if.above' });
    expect(yamlError('concurrency: sometimes\nsteps: []\n')).toEqual({ line: 1, column: 14, path: 'concurrency' });
    expect(yamlError('steps:\n  - 3\n')).toEqual({ line: 2, column: 5, path: 'steps[0]' });
  });

  it('two step kinds in one step, two comparisons, volume and delta', () => {
    expect(yamlError('steps:\n  - device: a\n    delay: 1s\n')).toEqual({ line: 3, column: 5, path: 'steps[0].delay' });
    expect(yamlError('steps:\n  - wait: { device: a, key: b, is: 1, not: 2 }\n')).toEqual({ line: 2, column: 39, path: 'steps[0].wait.not' });
    expect(yamlError('steps:\n  - zone: z\n    volume: 3\n    delta: 1\n')).toEqual({ line: 4, column: 5, path: 'steps[0].delta' });
  });

  it('messages name the position too', () => {
    const e = thrown(() => compileProgramYaml('steps:\n  - delay: soon\n'));
    expect(e.message).toContain('line 2, column 12');
    expect(e.message).toContain('steps[0].delay');
  });
});

// -------------------------------------------------------------------------------------------------
// Canonical validation (steps.ts)
// -------------------------------------------------------------------------------------------------

describe('canonical steps and program input', () => {
  it('reports the first structural problem with its path', () => {
    expect(thrown(() => validateSteps([{ type: 'parallel', branches: [[{ type: 'command', deviceId: 'a' }]] }])).details).toMatchObject({
      path: 'steps[0].branches[0][0]',
      problem: 'missing "command"',
    });
    expect(thrown(() => validateSteps([{ type: 'delay', ms: DAY + 1 }])).details).toMatchObject({ path: 'steps[0].ms' });
    expect(thrown(() => validateSteps([{ type: 'command', deviceId: 'a', command: 'b', timeoutMs: HOUR + 1 }])).details).toMatchObject({ path: 'steps[0].timeoutMs' });
    expect(thrown(() => validateSteps([{ type: 'zone_volume', zoneId: 'z' }])).details).toMatchObject({ path: 'steps[0]' });
    expect(thrown(() => validateSteps([{ type: 'teleport' }])).details).toMatchObject({ path: 'steps[0].type' });
    expect(thrown(() => validateSteps([{ type: 'delay', ms: 1, extra: true }])).details).toMatchObject({ path: 'steps[0].extra' });
    const e = thrown(() => validateSteps(Array.from({ length: 501 }, () => ({ type: 'delay', ms: 1 }))));
    expect(e.code).toBe('INVALID_PROGRAM');
    expect(validateSteps(Array.from({ length: 500 }, () => ({ type: 'delay', ms: 1 })))).toHaveLength(500);
  });

  it('checks timers beyond the schema: zones, cron, intervals', () => {
    expect(validateTimer({ kind: 'daily', time: '06:00', weekdays: [1, 2], timezone: 'Asia/Tokyo', enabled: true })).toBeTruthy();
    expect(thrown(() => validateTimer({ kind: 'daily', time: '06:00', timezone: 'Nowhere/City', enabled: true })).details).toMatchObject({ path: 'timer.timezone' });
    expect(thrown(() => validateTimer({ kind: 'daily', time: '6:00', enabled: true })).details).toMatchObject({ path: 'timer.time' });
    expect(thrown(() => validateTimer({ kind: 'daily', time: '06:00', weekdays: [7], enabled: true })).details).toMatchObject({ path: 'timer.weekdays[0]' });
    expect(thrown(() => validateTimer({ kind: 'cron', expression: 'every day', enabled: true })).details).toMatchObject({ path: 'timer.expression' });
    expect(thrown(() => validateTimer({ kind: 'interval', everyMs: 999, enabled: true })).details).toMatchObject({ path: 'timer.everyMs' });
    expect(validateTimer(null)).toBeNull();
  });

  it('/programs/save: exactly one of steps and yaml', () => {
    expect(thrown(() => parseProgramInput({ name: 'x' })).code).toBe('INVALID_PROGRAM');
    expect(thrown(() => parseProgramInput({ name: 'x', steps: [], yaml: 'steps: []' })).code).toBe('INVALID_PROGRAM');
    expect(parseProgramInput({ name: 'x', steps: [{ type: 'delay', ms: 5 }], concurrency: 'queue', semantics: ['a', 'a'] })).toEqual({
      name: 'x',
      steps: [{ type: 'delay', ms: 5 }],
      concurrency: 'queue',
      semantics: ['a'],
    });
    const yaml = 'name: From YAML\ntimer: { every: 1h }\nsteps:\n  - delay: 1s\n';
    expect(parseProgramInput({ id: 'p1', yaml })).toEqual({
      id: 'p1',
      name: 'From YAML',
      steps: [{ type: 'delay', ms: 1000 }],
      timer: { kind: 'interval', everyMs: HOUR, enabled: true },
      yaml,
    });
    expect(parseProgramInput({ name: 'Given', yaml: 'steps: []' })).toMatchObject({ name: 'Given', timer: null });
    expect(thrown(() => parseProgramInput({ yaml: 'steps: []' })).details).toMatchObject({ path: 'body.name' });
    expect(thrown(() => parseProgramInput({ yaml: 'steps: []', timer: null })).details).toMatchObject({ path: 'body.timer' });
    expect(thrown(() => parseProgramInput({ yaml: 'steps: [' })).code).toBe('YAML_ERROR');
    expect(thrown(() => parseProgramInput({ name: 'x', steps: [], colour: 'red' })).details).toMatchObject({ path: 'body.colour' });
    expect(Compile(ProgramInputSchema).Check({ name: 'x', steps: [{ type: 'parallel', branches: [[{ type: 'delay', ms: 1 }]] }], timer: null })).toBe(true);
  });
});

// -------------------------------------------------------------------------------------------------
// Executor
// -------------------------------------------------------------------------------------------------

class FakeEnv implements StepEnvironment {
  readonly calls: string[] = [];
  readonly timeouts: Array<number | undefined> = [];
  readonly states = new Map<string, Record<string, unknown>>();
  private waiters: Array<{ deviceId: string; check: (s: Record<string, unknown>) => boolean; resolve: () => void }> = [];
  /** Per device: what a command does (default: answers { ok: true } at once). */
  readonly behaviour = new Map<string, () => Promise<unknown>>();

  async command(deviceId: string, command: string, _params: Record<string, unknown>, timeoutMs: number | undefined): Promise<unknown> {
    this.calls.push(`${deviceId}.${command}`);
    this.timeouts.push(timeoutMs);
    const behave = this.behaviour.get(deviceId);
    return behave ? behave() : { ok: true };
  }

  deviceState(deviceId: string): Record<string, unknown> | undefined {
    return this.states.get(deviceId);
  }

  setState(deviceId: string, patch: Record<string, unknown>): void {
    const state = { ...this.states.get(deviceId), ...patch };
    this.states.set(deviceId, state);
    for (const w of [...this.waiters]) {
      if (w.deviceId === deviceId && w.check(state)) {
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve();
      }
    }
  }

  waitForState(deviceId: string, check: (state: Record<string, unknown>) => boolean, _timeoutMs: number): Promise<void> {
    const state = this.states.get(deviceId);
    if (state && check(state)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ deviceId, check, resolve }));
  }

  async runProgram(programId: string, trigger: string): Promise<unknown> {
    this.calls.push(`program:${programId}:${trigger}`);
    return { status: 'succeeded' };
  }

  async runMacro(macroId: string): Promise<unknown> {
    this.calls.push(`macro:${macroId}`);
    return undefined;
  }

  conditions(): boolean {
    return true;
  }
  async waitForTrigger(): Promise<undefined> {
    return undefined;
  }
  async alert(): Promise<unknown> {
    return {};
  }
  async scene(): Promise<unknown> {
    return {};
  }
  async zoneVolume(zoneId: string, change: { volume?: number; delta?: number }): Promise<unknown> {
    this.calls.push(`zone:${zoneId}:${JSON.stringify(change)}`);
    return undefined;
  }
}

/** Lets pending promise callbacks run (no time passes). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const never = () => new Promise<unknown>(() => undefined);

function setup(options?: { defaultStepTimeoutMs?: number }) {
  const clock = new ManualClock(utc('2026-01-05T10:00:00Z'));
  const env = new FakeEnv();
  const executor = new ProgramExecutor(env, clock, clock, options);
  return { clock, env, executor };
}

const cmd = (deviceId: string, command = 'on', extra: Partial<Extract<Step, { type: 'command' }>> = {}): Step => ({ type: 'command', deviceId, command, ...extra });

describe('executor', () => {
  it('runs steps in order and reports each with its path', async () => {
    const { env, executor, clock } = setup();
    const seen: string[] = [];
    const outcome = await executor.run(
      [cmd('a'), { type: 'run_program', programId: 'p' }, { type: 'run_macro', macroId: 'm' }, { type: 'zone_volume', zoneId: 'z', delta: -5 }, cmd('b', 'off', { label: 'B' })],
      { onStep: (r) => seen.push(r.path) },
    );
    expect(outcome.ok).toBe(true);
    expect(env.calls).toEqual(['a.on', 'program:p:program', 'macro:m', 'zone:z:{"delta":-5}', 'b.off']);
    expect(outcome.steps.map((s) => [s.path, s.type, s.status])).toEqual([
      ['0', 'command', 'succeeded'],
      ['1', 'run_program', 'succeeded'],
      ['2', 'run_macro', 'succeeded'],
      ['3', 'zone_volume', 'succeeded'],
      ['4', 'command', 'succeeded'],
    ]);
    expect(outcome.steps[4]?.label).toBe('B');
    expect(outcome.steps[0]?.result).toEqual({ ok: true });
    expect(seen).toEqual(['0', '1', '2', '3', '4']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('delays on the manual clock', async () => {
    const { env, executor, clock } = setup();
    const run = executor.run([cmd('a'), { type: 'delay', ms: 5000 }, cmd('b')], {});
    await settle();
    expect(env.calls).toEqual(['a.on']);
    await clock.advanceAsync(4999);
    expect(env.calls).toEqual(['a.on']);
    await clock.advanceAsync(1);
    const outcome = await run;
    expect(outcome.ok).toBe(true);
    expect(env.calls).toEqual(['a.on', 'b.on']);
    const delay = outcome.steps[1];
    expect(delay ? delay.finishedAt - delay.startedAt : undefined).toBe(5000);
    expect(clock.pendingTimers).toBe(0);
  });

  it('wait_until is satisfied by a later state change', async () => {
    const { env, executor, clock } = setup();
    env.setState('projector', { power: 'off' });
    const run = executor.run([{ type: 'wait_until', condition: { deviceId: 'projector', key: 'power', op: 'eq', value: 'on' }, timeoutMs: 30_000 }, cmd('screen', 'down')], {});
    await clock.advanceAsync(10_000, 1000);
    expect(env.calls).toEqual([]);
    env.setState('projector', { power: 'on' });
    const outcome = await run;
    expect(outcome.ok).toBe(true);
    expect(env.calls).toEqual(['screen.down']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('wait_until times out', async () => {
    const { env, executor, clock } = setup();
    const run = executor.run([{ type: 'wait_until', condition: { deviceId: 'projector', key: 'power', op: 'eq', value: 'on' }, timeoutMs: 30_000 }, cmd('screen', 'down')], {});
    await clock.advanceAsync(29_999);
    env.setState('projector', { power: 'standby' });
    await clock.advanceAsync(1);
    const outcome = await run;
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatchObject({ code: 'STEP_TIMEOUT', step: '0' });
    expect(env.calls).toEqual([]);
    expect(outcome.steps).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('times out a command (its own timeout, else the default) and tells the environment', async () => {
    const { env, executor, clock } = setup({ defaultStepTimeoutMs: 5000 });
    env.behaviour.set('slow', never);
    const run = executor.run([cmd('fast'), cmd('slow', 'on', { timeoutMs: 2000 })], {});
    await settle(); // the second step starts once the first has answered
    await clock.advanceAsync(1999);
    expect(env.calls).toEqual(['fast.on', 'slow.on']);
    await clock.advanceAsync(1);
    const outcome = await run;
    expect(outcome.error).toMatchObject({ code: 'STEP_TIMEOUT', step: '1' });
    expect(env.timeouts).toEqual([5000, 2000]);
    expect(outcome.steps[1]).toMatchObject({ status: 'failed', error: { code: 'STEP_TIMEOUT' } });
    expect(clock.pendingTimers).toBe(0);

    const { env: env2, executor: ex2, clock: clock2 } = setup();
    env2.behaviour.set('slow', never);
    const run2 = ex2.run([cmd('slow')], {});
    await clock2.advanceAsync(30_000, 10_000);
    expect((await run2).error?.code).toBe('STEP_TIMEOUT');
    expect(env2.timeouts).toEqual([30_000]);
  });

  it('a failing step stops the run', async () => {
    const { env, executor } = setup();
    env.behaviour.set('b', () => Promise.reject(new DomainError('upstream_failed', 'DEVICE_OFFLINE', 'b is offline')));
    const outcome = await executor.run([cmd('a'), cmd('b'), cmd('c')], {});
    expect(outcome).toMatchObject({ ok: false, error: { code: 'DEVICE_OFFLINE', message: 'b is offline', step: '1' } });
    expect(env.calls).toEqual(['a.on', 'b.on']);
    expect(outcome.steps.map((s) => s.status)).toEqual(['succeeded', 'failed']);

    env.behaviour.set('a', () => Promise.reject(new Error('boom')));
    expect((await executor.run([cmd('a')], {})).error).toEqual({ code: 'STEP_FAILED', message: 'boom', step: '0' });
  });

  it('parallel runs branches together and cancels the others when one fails', async () => {
    const ok = setup();
    const both = ok.executor.run([{ type: 'parallel', branches: [[{ type: 'delay', ms: 1000 }, cmd('x')], [{ type: 'delay', ms: 1000 }, cmd('y')]] }], {});
    await ok.clock.advanceAsync(1000);
    const bothOutcome = await both;
    expect(bothOutcome.ok).toBe(true);
    expect(ok.env.calls.sort()).toEqual(['x.on', 'y.on']);
    expect(bothOutcome.steps.at(-1)).toMatchObject({ path: '0', type: 'parallel', status: 'succeeded', finishedAt: utc('2026-01-05T10:00:01Z') });

    const { env, executor, clock } = setup();
    env.behaviour.set('bad', async () => {
      throw new DomainError('upstream_failed', 'COMMAND_FAILED', 'bad failed');
    });
    const run = executor.run([{ type: 'parallel', branches: [[{ type: 'delay', ms: 10_000 }, cmd('x')], [cmd('ok'), cmd('bad')]] }, cmd('after')], {});
    const outcome = await run;
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatchObject({ code: 'COMMAND_FAILED', step: '0.branch1.1' });
    const byPath = Object.fromEntries(outcome.steps.map((s) => [s.path, [s.status, s.error?.code]]));
    expect(byPath).toEqual({
      '0.branch1.0': ['succeeded', undefined],
      '0.branch1.1': ['failed', 'COMMAND_FAILED'],
      '0.branch0.0': ['failed', 'CANCELLED'],
      '0': ['failed', 'COMMAND_FAILED'],
    });
    await clock.advanceAsync(20_000);
    expect(env.calls).toEqual(['ok.on', 'bad.on']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('condition runs then or else (no state: false)', async () => {
    const steps: Step[] = [{ type: 'condition', condition: { deviceId: 'sensor', key: 'lux', op: 'lt', value: 100 }, then: [cmd('lamp', 'on')], else: [cmd('lamp', 'off')] }];
    const dark = setup();
    dark.env.setState('sensor', { lux: 50 });
    const darkOutcome = await dark.executor.run(steps, {});
    expect(dark.env.calls).toEqual(['lamp.on']);
    expect(darkOutcome.steps.map((s) => s.path)).toEqual(['0.then.0', '0']);
    expect(darkOutcome.steps[1]?.result).toEqual({ matched: true, branch: 'then' });

    const bright = setup();
    bright.env.setState('sensor', { lux: '150' });
    expect((await bright.executor.run(steps, {})).steps.map((s) => s.path)).toEqual(['0.else.0', '0']);
    expect(bright.env.calls).toEqual(['lamp.off']);

    const unknown = setup();
    await unknown.executor.run(steps, {});
    expect(unknown.env.calls).toEqual(['lamp.off']);
    const noElse = setup();
    const outcome = await noElse.executor.run([{ type: 'condition', condition: { deviceId: 's', key: 'k', op: 'truthy' }, then: [cmd('x')] }], {});
    expect(outcome.ok).toBe(true);
    expect(noElse.env.calls).toEqual([]);
  });

  it('evaluates comparisons', () => {
    const c = (op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'truthy' | 'falsy', value?: unknown) => ({ deviceId: 'd', key: 'k', op, value });
    expect(evaluateCondition(c('eq', 'on'), { k: 'on' })).toBe(true);
    expect(evaluateCondition(c('eq', 20), { k: '20' })).toBe(true);
    expect(evaluateCondition(c('ne', 'on'), { k: 'off' })).toBe(true);
    expect(evaluateCondition(c('ne', 'on'), {})).toBe(false);
    expect(evaluateCondition(c('gt', 10), { k: 11 })).toBe(true);
    expect(evaluateCondition(c('gte', 10), { k: 10 })).toBe(true);
    expect(evaluateCondition(c('lte', 10), { k: 'ten' })).toBe(false);
    expect(evaluateCondition(c('truthy'), { k: 1 })).toBe(true);
    expect(evaluateCondition(c('falsy'), { k: false })).toBe(true);
    expect(evaluateCondition(c('falsy'), undefined)).toBe(false);
  });

  it('cancellation ends a delay or a wait promptly and leaves no timers', async () => {
    const { env, executor, clock } = setup();
    const controller = new AbortController();
    const run = executor.run([cmd('a'), { type: 'delay', ms: 60_000 }, cmd('b')], { signal: controller.signal });
    await clock.advanceAsync(1000);
    controller.abort();
    const outcome = await run;
    expect(outcome).toMatchObject({ ok: false, error: { code: 'CANCELLED', step: '1' } });
    expect(outcome.steps[1]).toMatchObject({ status: 'failed', error: { code: 'CANCELLED' } });
    expect(env.calls).toEqual(['a.on']);
    expect(clock.pendingTimers).toBe(0);

    const waitController = new AbortController();
    const waiting = executor.run(
      [{ type: 'parallel', branches: [[{ type: 'wait_until', condition: { deviceId: 'x', key: 'y', op: 'truthy' }, timeoutMs: HOUR }], [{ type: 'delay', ms: HOUR }]] }],
      { signal: waitController.signal },
    );
    await settle();
    waitController.abort();
    expect((await waiting).error).toMatchObject({ code: 'CANCELLED', step: '0.branch0.0' });
    expect(clock.pendingTimers).toBe(0);

    const before = new AbortController();
    before.abort();
    expect((await executor.run([cmd('z')], { signal: before.signal })).error?.code).toBe('CANCELLED');
    expect(env.calls).toEqual(['a.on']);
  });
});

// -------------------------------------------------------------------------------------------------
// References
// -------------------------------------------------------------------------------------------------

describe('references', () => {
  const nested: Step[] = [
    cmd('lamp'),
    { type: 'parallel', branches: [[{ type: 'run_program', programId: 'b' }], [{ type: 'zone_volume', zoneId: 'z', volume: 5 }]] },
    { type: 'condition', condition: { deviceId: 'sensor', key: 'lux', op: 'lt', value: 1 }, then: [{ type: 'run_macro', macroId: 'm' }], else: [cmd('tv')] },
    { type: 'wait_until', condition: { deviceId: 'door', key: 'open', op: 'falsy' }, timeoutMs: 1000 },
  ];

  it('collects devices, programs, macros and zones from both paths', () => {
    const refs = referencesOf({ steps: nested, offSteps: [cmd('heater'), { type: 'run_program', programId: 'c' }] });
    expect([...refs.devices].sort()).toEqual(['door', 'heater', 'lamp', 'sensor', 'tv']);
    expect([...refs.programs].sort()).toEqual(['b', 'c']);
    expect([...refs.macros]).toEqual(['m']);
    expect([...refs.zones]).toEqual(['z']);
    expect([...referencesOf(nested).programs]).toEqual(['b']);
    expect(lightingDevices(nested, (id) => id === 'lamp' || id === 'tv' || id === 'sensor')).toEqual(['lamp', 'tv']);
  });

  const run = (id: string): Step => ({ type: 'run_program', programId: id });
  const macro = (id: string): Step => ({ type: 'run_macro', macroId: id });

  it('finds a cycle through programs', () => {
    const programs: Record<string, Step[]> = {
      a: [cmd('x'), { type: 'condition', condition: { deviceId: 's', key: 'k', op: 'truthy' }, then: [run('b')] }],
      b: [{ type: 'parallel', branches: [[cmd('y')], [run('c')]] }],
      c: [run('a')],
    };
    expect(findCycle('a', (id) => programs[id], () => [])).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle('a', (id) => (id === 'a' ? [run('a')] : undefined), () => [])).toEqual(['a', 'a']);
    expect(findCycle('a', (id) => ({ a: [run('b')], b: [] })[id], () => [])).toBeUndefined();
  });

  it('finds a cycle through macros', () => {
    const programs: Record<string, Step[]> = { a: [macro('m1')], b: [run('a')] };
    const macros: Record<string, string[]> = { m1: ['b'] };
    expect(findCycle('a', (id) => programs[id], (id) => macros[id] ?? [])).toEqual(['a', 'macro:m1', 'b', 'a']);
    expect(findCycle('a', (id) => programs[id], () => [])).toBeUndefined();
  });

  it('a diamond is not a cycle', () => {
    const programs: Record<string, Step[]> = { a: [run('b'), run('c')], b: [run('d')], c: [run('d'), macro('m')], d: [cmd('lamp')] };
    let visits = 0;
    expect(
      findCycle(
        'a',
        (id) => {
          visits++;
          return programs[id];
        },
        () => ['d'],
      ),
    ).toBeUndefined();
    expect(visits).toBe(4);
  });
});

// -------------------------------------------------------------------------------------------------
// Scheduler
// -------------------------------------------------------------------------------------------------

class MemoryFireStore implements FireStore {
  readonly fires = new Map<string, number>();
  constructor(readonly log: string[] = []) {}
  async lastFire(programId: string): Promise<number | undefined> {
    return this.fires.get(programId);
  }
  async recordFire(programId: string, at: number): Promise<void> {
    this.log.push(`record ${programId} ${new Date(at).toISOString()}`);
    this.fires.set(programId, at);
  }
}

function schedulerSetup(startIso: string, store = new MemoryFireStore(), timers?: Timers) {
  const clock = new ManualClock(utc(startIso));
  const fired: Array<{ id: string; scheduledAt: string; at: string }> = [];
  const scheduler = new ProgramScheduler({
    clock,
    timers: timers ?? clock,
    store,
    fire: (id, scheduledAt) => {
      store.log.push(`fire ${id}`);
      fired.push({ id, scheduledAt: new Date(scheduledAt).toISOString(), at: new Date(clock.now()).toISOString() });
    },
  });
  return { clock, store, scheduler, fired };
}

const daily = (time: string, extra: Partial<Extract<Timer, { kind: 'daily' }>> = {}): Timer => ({ kind: 'daily', time, enabled: true, ...extra });
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

describe('scheduler', () => {
  it('daily fires at the local time of a non-UTC zone', async () => {
    const { clock, scheduler, fired } = schedulerSetup('2026-01-05T00:00:00Z');
    const berlin = daily('07:30', { timezone: 'Europe/Berlin' });
    expect(iso(scheduler.nextFireAt(berlin, clock.now()))).toBe('2026-01-05T06:30:00.000Z');
    expect(iso(scheduler.nextFireAt(daily('07:30', { timezone: 'America/New_York' }), clock.now()))).toBe('2026-01-05T12:30:00.000Z');
    expect(iso(scheduler.nextFireAt(daily('07:30', { timezone: 'Europe/Berlin' }), utc('2026-07-01T00:00:00Z')))).toBe('2026-07-01T05:30:00.000Z');

    await scheduler.schedule('wake', berlin);
    expect(iso(scheduler.nextFire('wake'))).toBe('2026-01-05T06:30:00.000Z');
    await clock.advanceAsync(6 * HOUR + 29 * MIN, HOUR);
    expect(fired).toEqual([]);
    await clock.advanceAsync(MIN);
    expect(fired).toEqual([{ id: 'wake', scheduledAt: '2026-01-05T06:30:00.000Z', at: '2026-01-05T06:30:00.000Z' }]);
    expect(iso(scheduler.nextFire('wake'))).toBe('2026-01-06T06:30:00.000Z');
    await clock.advanceAsync(DAY, HOUR);
    expect(fired.map((f) => f.scheduledAt)).toEqual(['2026-01-05T06:30:00.000Z', '2026-01-06T06:30:00.000Z']);
    scheduler.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it('respects weekdays (0 = Sunday)', async () => {
    // 2026-01-05 is a Monday.
    const { clock, scheduler, fired } = schedulerSetup('2026-01-05T00:00:00Z');
    const weekend = daily('08:00', { weekdays: [6, 0], timezone: 'Europe/Berlin' });
    expect(iso(scheduler.nextFireAt(weekend, clock.now()))).toBe('2026-01-10T07:00:00.000Z');
    await scheduler.schedule('brunch', weekend);
    await clock.advanceAsync(14 * DAY, 2 * HOUR);
    expect(fired.map((f) => f.scheduledAt)).toEqual(['2026-01-10T07:00:00.000Z', '2026-01-11T07:00:00.000Z', '2026-01-17T07:00:00.000Z', '2026-01-18T07:00:00.000Z']);
    expect(iso(scheduler.nextFire('brunch'))).toBe('2026-01-24T07:00:00.000Z');
    scheduler.stop();
  });

  it('cron expressions (5 and 6 fields) in a zone', async () => {
    const { clock, scheduler, fired } = schedulerSetup('2026-01-09T17:50:00Z'); // a Friday
    const office: Timer = { kind: 'cron', expression: '*/15 9-17 * * 1-5', timezone: 'UTC', enabled: true };
    expect(iso(scheduler.nextFireAt(office, clock.now()))).toBe('2026-01-12T09:00:00.000Z');
    const tokyo: Timer = { kind: 'cron', expression: '0 0 7 * * *', timezone: 'Asia/Tokyo', enabled: true };
    expect(iso(scheduler.nextFireAt(tokyo, clock.now()))).toBe('2026-01-09T22:00:00.000Z');
    await scheduler.schedule('office', office);
    await clock.advanceAsync(2 * DAY + 15 * HOUR + 9 * MIN, HOUR); // to Monday 08:59
    expect(fired).toEqual([]);
    await clock.advanceAsync(17 * MIN, MIN);
    expect(fired.map((f) => f.scheduledAt)).toEqual(['2026-01-12T09:00:00.000Z', '2026-01-12T09:15:00.000Z']);
    scheduler.stop();
  });

  it('interval timers: from now when never fired, keeping the phase of the last fire', async () => {
    const store = new MemoryFireStore();
    const { clock, scheduler, fired } = schedulerSetup('2026-01-05T10:00:00Z', store);
    const every15: Timer = { kind: 'interval', everyMs: 15 * MIN, enabled: true };
    await scheduler.schedule('poll', every15);
    expect(iso(scheduler.nextFire('poll'))).toBe('2026-01-05T10:15:00.000Z');
    await clock.advanceAsync(HOUR, 5 * MIN);
    expect(fired.map((f) => f.scheduledAt)).toEqual(['2026-01-05T10:15:00.000Z', '2026-01-05T10:30:00.000Z', '2026-01-05T10:45:00.000Z', '2026-01-05T11:00:00.000Z']);
    expect(store.fires.get('poll')).toBe(utc('2026-01-05T11:00:00Z'));

    store.fires.set('other', utc('2026-01-05T10:50:00Z'));
    await scheduler.schedule('other', every15);
    expect(iso(scheduler.nextFire('other'))).toBe('2026-01-05T11:05:00.000Z');
    expect(iso(scheduler.nextFireAt(every15, utc('2026-01-05T12:00:00Z'), utc('2026-01-05T10:50:00Z')))).toBe('2026-01-05T12:05:00.000Z');
    scheduler.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it('waits longer than 2^31-1 ms in chunks of at most an hour', async () => {
    const clock = new ManualClock(utc('2026-01-05T00:00:00Z'));
    const requested: number[] = [];
    const timers: Timers = {
      setTimeout: (fn: () => void, ms: number): TimerHandle => {
        requested.push(ms);
        return clock.setTimeout(fn, ms);
      },
      clearTimeout: (h) => clock.clearTimeout(h),
      setInterval: (fn, ms) => clock.setInterval(fn, ms),
      clearInterval: (h) => clock.clearInterval(h),
    };
    const fired: number[] = [];
    const scheduler = new ProgramScheduler({ clock, timers, store: new MemoryFireStore(), fire: (_id, at) => fired.push(at) });
    await scheduler.schedule('monthly', { kind: 'interval', everyMs: 30 * DAY, enabled: true });
    await clock.advanceAsync(30 * DAY - HOUR, 12 * HOUR);
    expect(fired).toEqual([]);
    await clock.advanceAsync(HOUR);
    expect(fired).toEqual([utc('2026-02-04T00:00:00Z')]);
    expect(Math.max(...requested)).toBeLessThanOrEqual(HOUR);
    scheduler.stop();
  });

  it('disabled timers and no timer do not fire', async () => {
    const { clock, scheduler, fired } = schedulerSetup('2026-01-05T00:00:00Z');
    const off = daily('07:30', { enabled: false });
    expect(scheduler.nextFireAt(off, clock.now())).toBeUndefined();
    expect(scheduler.nextFireAt({ kind: 'interval', everyMs: 1000, enabled: false }, clock.now())).toBeUndefined();
    await scheduler.start([
      { id: 'a', timer: off },
      { id: 'b', timer: null },
      { id: 'c', timer: undefined },
    ]);
    expect(clock.pendingTimers).toBe(0);
    await clock.advanceAsync(2 * DAY, 6 * HOUR);
    expect(fired).toEqual([]);
    expect(scheduler.nextFire('a')).toBeUndefined();
  });

  it('records a fire before firing; a restart at the same instant does not fire again', async () => {
    const store = new MemoryFireStore();
    const first = schedulerSetup('2026-01-05T06:00:00Z', store);
    const timer = daily('07:30', { timezone: 'Europe/Berlin' });
    await first.scheduler.start([{ id: 'wake', timer }]);
    await first.clock.advanceAsync(30 * MIN, 10 * MIN);
    expect(store.log).toEqual(['record wake 2026-01-05T06:30:00.000Z', 'fire wake']);

    // "Crash": the old process and its timers are gone; a new one starts at the same instant.
    const second = schedulerSetup('2026-01-05T06:30:00Z', store);
    await second.scheduler.start([{ id: 'wake', timer }]);
    await second.clock.advanceAsync(10 * MIN, MIN);
    expect(second.fired).toEqual([]);
    expect(iso(second.scheduler.nextFire('wake'))).toBe('2026-01-06T06:30:00.000Z');

    // Crash between recording and firing: the slot is not fired again either.
    const crashing = new MemoryFireStore();
    crashing.fires.set('wake', utc('2026-01-05T06:30:00Z')); // recorded, then the process died
    const third = schedulerSetup('2026-01-05T06:30:00Z', crashing);
    await third.scheduler.start([{ id: 'wake', timer: { ...timer, catchUp: true } }]);
    await third.clock.advanceAsync(MIN);
    expect(third.fired).toEqual([]);
    first.scheduler.stop();
    second.scheduler.stop();
    third.scheduler.stop();
  });

  it('a start exactly at a slot that has not fired fires it', async () => {
    const { clock, scheduler, fired } = schedulerSetup('2026-01-05T06:30:00Z');
    await scheduler.start([{ id: 'wake', timer: daily('07:30', { timezone: 'Europe/Berlin' }) }]);
    await clock.advanceAsync(1);
    expect(fired.map((f) => f.scheduledAt)).toEqual(['2026-01-05T06:30:00.000Z']);
    scheduler.stop();
  });

  it('does not replay fires missed while down', async () => {
    const store = new MemoryFireStore();
    store.fires.set('wake', utc('2026-01-05T06:30:00Z'));
    const { clock, scheduler, fired } = schedulerSetup('2026-01-08T12:00:00Z', store);
    await scheduler.start([{ id: 'wake', timer: daily('07:30', { timezone: 'Europe/Berlin' }) }]);
    await clock.advanceAsync(MIN);
    expect(fired).toEqual([]);
    expect(iso(scheduler.nextFire('wake'))).toBe('2026-01-09T06:30:00.000Z');
    await clock.advanceAsync(DAY, HOUR);
    expect(fired.map((f) => f.scheduledAt)).toEqual(['2026-01-09T06:30:00.000Z']);
    scheduler.stop();
  });

  it('catch-up replays one missed fire at start', async () => {
    const store = new MemoryFireStore();
    store.fires.set('wake', utc('2026-01-05T06:30:00Z'));
    store.fires.set('fresh', utc('2026-01-08T06:30:00Z'));
    const { clock, scheduler, fired } = schedulerSetup('2026-01-08T12:00:00Z', store);
    const timer = daily('07:30', { timezone: 'Europe/Berlin', catchUp: true });
    await scheduler.start([
      { id: 'wake', timer },
      { id: 'fresh', timer }, // fired today already: nothing missed
      { id: 'new', timer, since: utc('2026-01-07T12:00:00Z') }, // never fired; saved before this morning's slot
      { id: 'newer', timer, since: utc('2026-01-08T07:00:00Z') }, // saved after it
    ]);
    expect(fired).toEqual([
      { id: 'wake', scheduledAt: '2026-01-08T06:30:00.000Z', at: '2026-01-08T12:00:00.000Z' },
      { id: 'new', scheduledAt: '2026-01-08T06:30:00.000Z', at: '2026-01-08T12:00:00.000Z' },
    ]);
    expect(store.fires.get('wake')).toBe(utc('2026-01-08T12:00:00Z'));
    expect(iso(scheduler.nextFire('wake'))).toBe('2026-01-09T06:30:00.000Z');
    await clock.advanceAsync(DAY, HOUR);
    expect(fired.filter((f) => f.id === 'wake').map((f) => f.scheduledAt)).toEqual(['2026-01-08T06:30:00.000Z', '2026-01-09T06:30:00.000Z']);
    expect(fired).toHaveLength(6);
    scheduler.stop();
  });

  it('nextFire for the program list; unschedule and stop clear timers', async () => {
    const { clock, scheduler } = schedulerSetup('2026-01-05T00:00:00Z');
    await scheduler.start([
      { id: 'a', timer: daily('07:30', { timezone: 'UTC' }) },
      { id: 'b', timer: { kind: 'interval', everyMs: 10 * MIN, enabled: true } },
      { id: 'c', timer: { kind: 'cron', expression: '0 12 1 * *', timezone: 'UTC', enabled: true } },
    ]);
    expect(['a', 'b', 'c', 'd'].map((id) => iso(scheduler.nextFire(id)))).toEqual([
      '2026-01-05T07:30:00.000Z',
      '2026-01-05T00:10:00.000Z',
      '2026-02-01T12:00:00.000Z',
      undefined,
    ]);
    expect(clock.pendingTimers).toBe(3);
    await scheduler.schedule('a', daily('08:00', { timezone: 'UTC' }));
    expect(iso(scheduler.nextFire('a'))).toBe('2026-01-05T08:00:00.000Z');
    expect(clock.pendingTimers).toBe(3);
    scheduler.unschedule('b');
    expect(scheduler.nextFire('b')).toBeUndefined();
    expect(clock.pendingTimers).toBe(2);
    scheduler.stop();
    expect(scheduler.nextFire('a')).toBeUndefined();
    expect(clock.pendingTimers).toBe(0);
  });

  it('DST: a skipped local time fires once that day, a repeated one once', async () => {
    // Europe/Berlin: 2026-03-29 02:00 → 03:00 (02:30 does not exist); 2026-10-25 03:00 → 02:00.
    const spring = schedulerSetup('2026-03-27T12:00:00Z');
    await spring.scheduler.schedule('night', daily('02:30', { timezone: 'Europe/Berlin' }));
    await spring.clock.advanceAsync(4 * DAY, HOUR);
    expect(spring.fired.map((f) => f.scheduledAt)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:30:00.000Z', // 03:30 CEST: the first valid time after the gap, once
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
    spring.scheduler.stop();

    const autumn = schedulerSetup('2026-10-23T12:00:00Z');
    await autumn.scheduler.schedule('night', daily('02:30', { timezone: 'Europe/Berlin' }));
    await autumn.clock.advanceAsync(4 * DAY, 30 * MIN);
    const localDays = autumn.fired.map((f) => new Date(f.scheduledAt).toLocaleDateString('en-CA', { timeZone: 'Europe/Berlin' }));
    expect(localDays).toEqual(['2026-10-24', '2026-10-25', '2026-10-26', '2026-10-27']);
    autumn.scheduler.stop();
  });
});
