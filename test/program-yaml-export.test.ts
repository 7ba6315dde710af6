import { describe, expect, it } from 'vitest';
import type { Step, Timer } from '../src/domain/programs/model.js';
import { compileProgramYaml } from '../src/domain/programs/yaml.js';
import { programAsYaml } from '../src/domain/programs/yaml-export.js';

const STEPS: Step[] = [
  { type: 'command', deviceId: 'lamp', command: 'set_brightness', params: { brightness: 20 }, timeoutMs: 10_000, label: 'dim' },
  { type: 'delay', ms: 1500 },
  { type: 'wait_until', condition: { deviceId: 'projector', key: 'power', op: 'eq', value: 'on' }, timeoutMs: 30_000 },
  { type: 'parallel', branches: [[{ type: 'command', deviceId: 'a', command: 'turn_off' }], [{ type: 'run_macro', macroId: 'm1' }]] },
  { type: 'condition', condition: { deviceId: 'sensor', key: 'lux', op: 'lt', value: 100 }, then: [{ type: 'zone_volume', zoneId: 'z1', volume: 30 }], else: [{ type: 'zone_volume', zoneId: 'z1', delta: -5 }] },
  { type: 'condition', condition: { deviceId: 'door', key: 'open', op: 'falsy' }, then: [{ type: 'run_program', programId: 'p2' }] },
];

describe('programs as YAML', () => {
  it('writes canonical steps, the off path and each kind of timer as YAML that compiles back to them', () => {
    const timers: Timer[] = [
      { kind: 'daily', time: '07:30', weekdays: [1, 2, 3, 4, 5], timezone: 'Europe/Berlin', enabled: true },
      { kind: 'cron', expression: '0 7 * * 1-5', timezone: 'UTC', enabled: false, catchUp: true },
      { kind: 'interval', everyMs: 900_000, enabled: true },
    ];
    for (const timer of timers) {
      const yaml = programAsYaml({ name: 'Movie night', description: 'Dim', steps: STEPS, offSteps: [{ type: 'delay', ms: 60_000 }], timer, concurrency: 'restart', semantics: ['movie'] });
      const compiled = compileProgramYaml(yaml!);
      expect(compiled).toMatchObject({ name: 'Movie night', description: 'Dim', steps: STEPS, offSteps: [{ type: 'delay', ms: 60_000 }], timer, concurrency: 'restart', semantics: ['movie'] });
    }
  });

  it('gives back the YAML a program was written in, as it was', () => {
    expect(programAsYaml({ name: 'x', steps: [], concurrency: 'reject', yaml: '# mine\nname: x\nsteps: []\n' })).toBe('# mine\nname: x\nsteps: []\n');
  });
});
