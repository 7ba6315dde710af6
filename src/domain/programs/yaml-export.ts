import { stringify } from 'yaml';
import type { Program, StateCondition, Step, Timer } from './model.js';

const COMPARISON_WORDS: Record<string, string> = { eq: 'is', ne: 'not', gt: 'above', gte: 'at_least', lt: 'below', lte: 'at_most' };

const duration = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

function condition(c: StateCondition, timeoutMs?: number): Record<string, unknown> {
  const out: Record<string, unknown> = { device: c.deviceId, key: c.key };
  if (c.op === 'truthy' || c.op === 'falsy') out.on = c.op === 'truthy';
  else out[COMPARISON_WORDS[c.op] ?? 'is'] = c.value;
  if (timeoutMs !== undefined) out.timeout = duration(timeoutMs);
  return out;
}

/** Thrown inside the export when a program uses what the hub's YAML format has no words for. */
class NotExpressible extends Error {}

function step(s: Step): Record<string, unknown> {
  const label = s.label === undefined ? {} : { label: s.label };
  switch (s.type) {
    case 'command':
      return { device: s.deviceId, command: s.command, ...(s.params ? { params: s.params } : {}), ...(s.timeoutMs !== undefined ? { timeout: duration(s.timeoutMs) } : {}), ...label };
    case 'delay':
      return { delay: duration(s.ms), ...label };
    case 'wait_until':
      return { wait: condition(s.condition, s.timeoutMs), ...label };
    case 'run_program':
      return { program: s.programId, ...label };
    case 'run_macro':
      return { macro: s.macroId, ...label };
    case 'zone_volume':
      return { zone: s.zoneId, ...(s.volume !== undefined ? { volume: s.volume } : { delta: s.delta }), ...label };
    case 'parallel':
      return { parallel: s.branches.map((b) => b.map(step)), ...label };
    case 'condition':
      return { if: condition(s.condition), then: s.then.map(step), ...(s.else ? { else: s.else.map(step) } : {}), ...label };
    default:
      throw new NotExpressible(s.type);
  }
}

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

function timer(t: Timer): Record<string, unknown> {
  const common = { ...(t.enabled ? {} : { enabled: false }), ...(t.catchUp !== undefined ? { catch_up: t.catchUp } : {}) };
  if (t.kind === 'daily') return { daily: t.time, ...(t.weekdays ? { weekdays: t.weekdays.map((d) => DAYS[d]) } : {}), ...(t.timezone ? { timezone: t.timezone } : {}), ...common };
  if (t.kind === 'cron') return { cron: t.expression, ...(t.timezone ? { timezone: t.timezone } : {}), ...common };
  if (t.kind === 'interval') return { every: duration(t.everyMs), ...common };
  throw new NotExpressible(t.kind);
}

/**
 * A program in the YAML authoring format (the inverse of `compileProgramYaml`): the YAML it was
 * written in when there is one, else one made from its canonical steps, so any program can be
 * edited as YAML and saved back to the same program. Undefined for an automation with more than a
 * timer, or steps the format has no words for (choose, repeat…): those are edited as automations.
 */
export function programAsYaml(program: Pick<Program, 'name' | 'description' | 'steps' | 'offSteps' | 'timer' | 'triggers' | 'conditions' | 'concurrency' | 'semantics' | 'yaml'>): string | undefined {
  if (program.yaml) return program.yaml;
  const onlyTimer = (program.triggers ?? []).every((t) => t.type === 'time' && t.id === 'timer');
  if (!onlyTimer || (program.conditions ?? []).length > 0 || (program.concurrency && !['reject', 'restart', 'queue'].includes(program.concurrency))) return undefined;
  try {
    return asYaml(program);
  } catch (e) {
    if (e instanceof NotExpressible) return undefined;
    throw e;
  }
}

function asYaml(program: Pick<Program, 'name' | 'description' | 'steps' | 'offSteps' | 'timer' | 'concurrency' | 'semantics'>): string {
  const doc: Record<string, unknown> = { name: program.name };
  if (program.description) doc.description = program.description;
  if (program.concurrency && program.concurrency !== 'reject') doc.concurrency = program.concurrency;
  if (program.semantics?.length) doc.semantics = program.semantics;
  if (program.timer) doc.timer = timer(program.timer);
  doc.steps = program.steps.map(step);
  if (program.offSteps) doc.off = program.offSteps.map(step);
  return stringify(doc, { lineWidth: 0 });
}
