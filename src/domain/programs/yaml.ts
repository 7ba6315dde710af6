/**
 * The YAML authoring format of programs, compiled into the canonical step array.
 *
 * ```yaml
 * name: Movie night                        # optional when the save request gives `name`
 * description: Dim the lights and start the projector
 * concurrency: restart                     # reject | restart | queue
 * semantics: [movie, cinema]               # intent tags (a list, or one word)
 * timer: { daily: "20:30", weekdays: [fri, sat], timezone: Europe/Berlin }
 * steps:
 *   - device: living-lamp                  # command step: device + command
 *     command: set_brightness
 *     params: { brightness: 20 }           # optional
 *     timeout: 10s                         # optional, at most 1h (default 30s)
 *   - delay: 2s                            # at most 24h
 *   - wait: { device: projector, key: power, is: "on", timeout: 30s }
 *   - parallel:                            # a list of branches, each a list of steps
 *       - - device: a                      #   (a branch may also be one step, unwrapped)
 *           command: turn_off
 *       - - device: b
 *           command: turn_off
 *   - if: { device: sensor, key: lux, below: 100 }
 *     then:
 *       - device: lamp
 *         command: turn_on
 *     else: []                             # optional
 *   - program: other-program-id            # runs another program and waits for it
 *   - macro: some-macro-id                 # runs a macro and waits for it
 *   - zone: living-zone
 *     volume: 30                           # 0–100, or `delta: -5` (exactly one)
 *     label: Quiet please                  # any step may have a label
 * off:                                     # optional: the "off" path
 *   - device: living-lamp
 *     command: turn_off
 * ```
 *
 * Keys
 * - Top level: `name`, `description`, `concurrency`, `semantics`, `timer`, `steps` (required),
 *   `off`. Nothing else.
 * - A step is a map identified by exactly one of `device`, `delay`, `wait`, `parallel`, `if`,
 *   `program`, `macro`, `zone`; each kind accepts only the keys shown above (plus `label`).
 *   They compile to the canonical types command, delay, wait_until, parallel, condition,
 *   run_program, run_macro and zone_volume.
 * - Ids (device, program, macro, zone) are text; quote ids that look like numbers ("42").
 * - Durations: a number of milliseconds (`500`) or text with units ms, s, m, h, d (`"500ms"`,
 *   `2s`, `1m30s`, `1.5h`).
 * - Conditions (`if`, `wait`): `device`, `key` and exactly one comparison:
 *   `is`/`equals` (eq), `not` (ne), `above` (gt), `at_least` (gte), `below` (lt), `at_most`
 *   (lte) — the last four take numbers — or `on: true` / `on: false` (the key's value is truthy /
 *   falsy). `wait` also takes `timeout` (default 1m, at most 1h). A device without state, or a
 *   state without the key, makes a condition false.
 * - Timers: `{ daily: "HH:MM", weekdays: [mon, …] , timezone }` (weekdays: mon…sun, full names or
 *   0–6 with 0 = Sunday; every day when absent; time zone: IANA name, the hub's zone when absent),
 *   `{ cron: "0 7 * * 1-5", timezone }` (5 fields, or 6 with seconds first), or
 *   `{ every: 15m }` (at least 1s). All take `enabled` (default true) and `catch_up` (fire once at
 *   start-up when a run was missed while the hub was down; default false).
 *   Note: write times in quotes ("07:30") — the format also accepts them bare (YAML 1.2 reads
 *   `07:30` as text).
 * - YAML anchors and aliases work (`&lights` … `*lights`).
 *
 * Every error is a DomainError `invalid` / `YAML_ERROR` with details `{ line, column, path? }`:
 * 1-based position of the offending node (a syntax error, an unknown key, a bad value; for a
 * missing key, the map that lacks it) and a readable path such as `steps[3].wait.timeout`.
 */
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseDocument,
  type Document,
  type Node,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { programErrors } from './errors.js';
import { checkYamlNesting } from './yaml-guard.js';
import type { Comparison, ConcurrencyPolicy, StateCondition, Step, Timer } from './model.js';
import { cronProblem, isValidTimezone, PROGRAM_LIMITS } from './limits.js';

export interface CompiledProgram {
  name?: string;
  description?: string;
  steps: Step[];
  offSteps?: Step[];
  timer?: Timer;
  concurrency?: ConcurrencyPolicy;
  semantics?: string[];
}

/** Default `timeout` of a YAML `wait` step. */
export const DEFAULT_WAIT_TIMEOUT_MS = 60_000;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Milliseconds of a duration: a non-negative integer (ms) or text like "500ms", "2s", "1m30s",
 * "1.5h". Undefined when it is not one.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  if (!text) return undefined;
  const re = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*/y;
  let total = 0;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * (UNITS[m[2] as string] ?? NaN);
    at = re.lastIndex;
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

const WEEKDAYS: Record<string, number> = {
  sun: 0, sunday: 0, mon: 1, monday: 1, tue: 2, tues: 2, tuesday: 2, wed: 3, wednesday: 3,
  thu: 4, thur: 4, thurs: 4, thursday: 4, fri: 5, friday: 5, sat: 6, saturday: 6,
};

const COMPARISONS: Record<string, Comparison> = {
  is: 'eq', equals: 'eq', not: 'ne', above: 'gt', at_least: 'gte', below: 'lt', at_most: 'lte', on: 'truthy',
};
const NUMERIC_COMPARISONS = new Set(['above', 'at_least', 'below', 'at_most']);

const STEP_KINDS = {
  device: ['device', 'command', 'params', 'timeout', 'label'],
  delay: ['delay', 'label'],
  wait: ['wait', 'label'],
  parallel: ['parallel', 'label'],
  if: ['if', 'then', 'else', 'label'],
  program: ['program', 'label'],
  macro: ['macro', 'label'],
  zone: ['zone', 'volume', 'delta', 'label'],
} as const;
type StepKind = keyof typeof STEP_KINDS;
const STEP_HEADS = Object.keys(STEP_KINDS) as StepKind[];
const ALL_STEP_KEYS = new Set<string>(Object.values(STEP_KINDS).flat());

const TOP_KEYS = ['name', 'description', 'concurrency', 'semantics', 'timer', 'steps', 'off'];
const TIMER_KINDS = {
  daily: ['daily', 'weekdays', 'timezone', 'enabled', 'catch_up'],
  cron: ['cron', 'timezone', 'enabled', 'catch_up'],
  every: ['every', 'enabled', 'catch_up'],
} as const;
type TimerHead = keyof typeof TIMER_KINDS;

type YNode = Node | null | undefined;

interface Entry {
  key: string;
  keyNode: Node;
  value: YNode;
}

class Compiler {
  private readonly lineStarts: number[] = [0];
  private stepCount = 0;

  constructor(
    private readonly text: string,
    private readonly doc: Document,
  ) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  // ----- positions and errors -----

  position(offset: number): { line: number; column: number } {
    const at = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] as number) <= at) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: at - (this.lineStarts[lo] as number) + 1 };
  }

  fail(where: YNode | number, path: string | undefined, message: string): never {
    const offset = typeof where === 'number' ? where : (where?.range?.[0] ?? 0);
    const { line, column } = this.position(offset);
    const details: { line: number; column: number; path?: string } = { line, column };
    if (path) details.path = path;
    throw programErrors.YAML_ERROR({ where: path ? `${path}: ` : '', problem: message, line, column }, { details });
  }

  // ----- node access -----

  /** Follows aliases to the anchored node. */
  deref(node: YNode, path: string): YNode {
    if (isAlias(node)) {
      const target = node.resolve(this.doc);
      if (!target) this.fail(node, path, `unknown alias *${node.source}`);
      return target as Node;
    }
    return node;
  }

  /** True for an absent value (`key:` with nothing, `~`, `null`). */
  isNull(node: YNode): boolean {
    return node === null || node === undefined || (isScalar(node) && node.value === null);
  }

  /** The node to point at for a value: the value itself, or its key when the value is empty. */
  at(entry: Entry): Node {
    return entry.value && !(isScalar(entry.value) && entry.value.value === null && entry.value.range?.[0] === entry.value.range?.[1]) ? entry.value : entry.keyNode;
  }

  entries(node: YNode, path: string, what: string, fallback?: Node): { map: YAMLMap; entries: Entry[]; get(key: string): Entry | undefined } {
    const n = this.deref(node, path);
    if (!isMap(n)) this.fail(n ?? fallback, path, `${what} must be a map (key: value lines)`);
    const entries: Entry[] = [];
    for (const pair of n.items) {
      const keyNode = this.deref(pair.key as YNode, path);
      if (!isScalar(keyNode) || typeof keyNode.value !== 'string') this.fail(keyNode ?? n, path, 'keys must be plain words');
      entries.push({ key: keyNode.value, keyNode, value: pair.value as YNode });
    }
    return { map: n, entries, get: (key) => entries.find((e) => e.key === key) };
  }

  items(entry: Entry, path: string, what: string): { seq: YAMLSeq; items: YNode[] } {
    const n = this.deref(entry.value, path);
    if (!isSeq(n)) this.fail(this.at(entry), path, `${what} must be a list`);
    return { seq: n, items: n.items as YNode[] };
  }

  onlyKeys(entries: Entry[], allowed: readonly string[], path: string, what: string): void {
    for (const e of entries) {
      if (!allowed.includes(e.key)) this.fail(e.keyNode, `${path}.${e.key}`, `unknown key "${e.key}" in ${what} (allowed: ${allowed.join(', ')})`);
    }
  }

  scalar(entry: Entry, path: string): unknown {
    const n = this.deref(entry.value, path);
    if (n === null || n === undefined) return null;
    if (!isScalar(n)) this.fail(this.at(entry), path, 'must be a single value, not a list or map');
    return n.value;
  }

  str(entry: Entry, path: string, what = 'text', maxLength = 2000): string {
    const v = this.scalar(entry, path);
    if (typeof v !== 'string') this.fail(this.at(entry), path, `must be ${what}${typeof v === 'number' ? ' (quote it)' : ''}`);
    if (!v.trim()) this.fail(this.at(entry), path, 'must not be empty');
    if (v.length > maxLength) this.fail(this.at(entry), path, `is longer than ${maxLength} characters`);
    return v;
  }

  id(entry: Entry, path: string): string {
    return this.str(entry, path, 'an id (text)', 200);
  }

  number(entry: Entry, path: string, min: number, max: number): number {
    const v = this.scalar(entry, path);
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(this.at(entry), path, 'must be a number');
    if (v < min || v > max) this.fail(this.at(entry), path, `must be between ${min} and ${max}`);
    return v;
  }

  boolean(entry: Entry, path: string): boolean {
    const v = this.scalar(entry, path);
    if (typeof v !== 'boolean') this.fail(this.at(entry), path, 'must be true or false');
    return v;
  }

  duration(entry: Entry, path: string, min: number, max: number): number {
    const v = this.scalar(entry, path);
    const ms = parseDuration(v);
    if (ms === undefined) {
      this.fail(this.at(entry), path, `bad duration ${JSON.stringify(v)}: use milliseconds (500) or a number with a unit: 500ms, 2s, 1m, 1h (1m30s)`);
    }
    if (ms < min) this.fail(this.at(entry), path, `must be at least ${formatMs(min)}`);
    if (ms > max) this.fail(this.at(entry), path, `must be at most ${formatMs(max)}`);
    return ms;
  }

  // ----- document -----

  program(): CompiledProgram {
    const root = this.doc.contents as YNode;
    if (this.isNull(root)) this.fail(0, undefined, 'the document is empty; it needs at least `steps:`');
    const { map, entries, get } = this.entries(root, '', 'the document');
    this.onlyKeys(entries, TOP_KEYS, '', 'the document');
    const out: CompiledProgram = { steps: [] };

    const name = get('name');
    if (name) out.name = this.str(name, 'name', 'text', 200);
    const description = get('description');
    if (description && !this.isNull(description.value)) out.description = this.str(description, 'description', 'text', 2000);
    const concurrency = get('concurrency');
    if (concurrency) {
      const v = this.scalar(concurrency, 'concurrency');
      if (v !== 'reject' && v !== 'restart' && v !== 'queue') this.fail(this.at(concurrency), 'concurrency', 'must be reject, restart or queue');
      out.concurrency = v;
    }
    const semantics = get('semantics');
    if (semantics && !this.isNull(semantics.value)) out.semantics = this.semantics(semantics);
    const timer = get('timer');
    if (timer && !this.isNull(timer.value)) out.timer = this.timer(timer);

    const steps = get('steps');
    if (!steps) this.fail(map, 'steps', 'missing `steps:` (a list of steps; `steps: []` for none)');
    out.steps = this.stepList(steps, 'steps', 0);
    const off = get('off');
    if (off && !this.isNull(off.value)) out.offSteps = this.stepList(off, 'off', 0);
    return out;
  }

  semantics(entry: Entry): string[] {
    const n = this.deref(entry.value, 'semantics');
    const nodes: Array<{ node: YNode; value: unknown }> = isSeq(n)
      ? (n.items as YNode[]).map((item) => ({ node: item, value: isScalar(item) ? item.value : undefined }))
      : [{ node: this.at(entry), value: isScalar(n) ? n.value : undefined }];
    if (nodes.length > 50) this.fail(this.at(entry), 'semantics', 'at most 50 tags');
    const tags: string[] = [];
    nodes.forEach(({ node, value }, i) => {
      if (typeof value !== 'string' || !value.trim() || value.length > 50) this.fail(node, `semantics[${i}]`, 'each tag must be a word (text, at most 50 characters)');
      if (!tags.includes(value)) tags.push(value);
    });
    return tags;
  }

  // ----- timers -----

  timer(entry: Entry): Timer {
    const { map, entries, get } = this.entries(entry.value, 'timer', 'timer', entry.keyNode);
    const heads = entries.filter((e) => e.key in TIMER_KINDS);
    if (heads.length === 0) {
      const stray = entries.find((e) => !Object.values(TIMER_KINDS).some((keys) => (keys as readonly string[]).includes(e.key)));
      if (stray) this.fail(stray.keyNode, `timer.${stray.key}`, `unknown key "${stray.key}" in timer (a timer is one of daily, cron, every)`);
      this.fail(map, 'timer', 'a timer needs one of `daily: "HH:MM"`, `cron: "…"` or `every: 15m`');
    }
    if (heads.length > 1) this.fail((heads[1] as Entry).keyNode, `timer.${(heads[1] as Entry).key}`, `a timer has one of daily, cron, every, not both "${(heads[0] as Entry).key}" and "${(heads[1] as Entry).key}"`);
    const head = (heads[0] as Entry).key as TimerHead;
    this.onlyKeys(entries, TIMER_KINDS[head], 'timer', `a ${head} timer`);

    const enabledEntry = get('enabled');
    const enabled = enabledEntry ? this.boolean(enabledEntry, 'timer.enabled') : true;
    const catchUpEntry = get('catch_up');
    const catchUp = catchUpEntry ? this.boolean(catchUpEntry, 'timer.catch_up') : undefined;
    const timezone = (): string | undefined => {
      const tz = get('timezone');
      if (!tz) return undefined;
      const name = this.str(tz, 'timer.timezone', 'an IANA time zone name', 100);
      if (!isValidTimezone(name)) this.fail(this.at(tz), 'timer.timezone', `unknown time zone "${name}" (use an IANA name such as "Europe/Berlin")`);
      return name;
    };

    let timer: Timer;
    if (head === 'daily') {
      const timeEntry = get('daily') as Entry;
      const raw = this.scalar(timeEntry, 'timer.daily');
      const m = typeof raw === 'string' ? /^\s*(\d{1,2}):(\d{2})\s*$/.exec(raw) : null;
      if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) this.fail(this.at(timeEntry), 'timer.daily', `bad time ${JSON.stringify(raw)}: use "HH:MM" (24 h), e.g. "07:30"`);
      timer = { kind: 'daily', time: `${(m[1] as string).padStart(2, '0')}:${m[2] as string}`, enabled };
      const weekdays = get('weekdays');
      if (weekdays && !this.isNull(weekdays.value)) timer.weekdays = this.weekdays(weekdays);
      const tz = timezone();
      if (tz) timer.timezone = tz;
    } else if (head === 'cron') {
      const exprEntry = get('cron') as Entry;
      const expression = this.str(exprEntry, 'timer.cron', 'a cron expression (text)', 200).trim();
      const tz = timezone();
      const problem = cronProblem(expression, tz);
      if (problem) this.fail(this.at(exprEntry), 'timer.cron', `bad cron expression "${expression}": ${problem}`);
      timer = { kind: 'cron', expression, enabled };
      if (tz) timer.timezone = tz;
    } else {
      const everyMs = this.duration(get('every') as Entry, 'timer.every', PROGRAM_LIMITS.minIntervalMs, PROGRAM_LIMITS.maxIntervalMs);
      timer = { kind: 'interval', everyMs, enabled };
    }
    if (catchUp !== undefined) timer.catchUp = catchUp;
    return timer;
  }

  weekdays(entry: Entry): number[] {
    const n = this.deref(entry.value, 'timer.weekdays');
    const nodes: YNode[] = isSeq(n) ? (n.items as YNode[]) : [n];
    const days = new Set<number>();
    nodes.forEach((node, i) => {
      const item = this.deref(node, `timer.weekdays[${i}]`);
      const v = isScalar(item) ? item.value : undefined;
      const day = typeof v === 'number' ? (Number.isInteger(v) && v >= 0 && v <= 6 ? v : undefined) : typeof v === 'string' ? WEEKDAYS[v.trim().toLowerCase()] : undefined;
      if (day === undefined) {
        this.fail(item ?? this.at(entry), `timer.weekdays[${i}]`, `bad weekday ${JSON.stringify(v ?? null)}: use mon, tue, wed, thu, fri, sat, sun or 0–6 (0 = Sunday)`);
      }
      days.add(day);
    });
    if (days.size === 0) this.fail(this.at(entry), 'timer.weekdays', 'must name at least one day (leave it out for every day)');
    return [...days].sort((a, b) => a - b);
  }

  // ----- steps -----

  stepList(entry: Entry, path: string, depth: number): Step[] {
    if (this.isNull(entry.value)) this.fail(entry.keyNode, path, 'must be a list of steps (`[]` for none)');
    const { items } = this.items(entry, path, 'steps');
    return this.stepItems(items, path, depth, entry.keyNode);
  }

  stepItems(items: YNode[], path: string, depth: number, anchor: Node): Step[] {
    if (depth > PROGRAM_LIMITS.maxNesting) this.fail(anchor, path, `nested too deeply (at most ${PROGRAM_LIMITS.maxNesting} levels)`);
    return items.map((item, i) => this.step(item, `${path}[${i}]`, depth, anchor));
  }

  step(node: YNode, path: string, depth: number, anchor: Node): Step {
    this.stepCount += 1;
    if (this.stepCount > PROGRAM_LIMITS.maxSteps) this.fail(node ?? anchor, path, `too many steps (at most ${PROGRAM_LIMITS.maxSteps} per program, nested ones and the off path counted)`);
    const { map, entries, get } = this.entries(node, path, 'a step', anchor);
    const heads = entries.filter((e) => (STEP_HEADS as string[]).includes(e.key));
    if (heads.length === 0) {
      const stray = entries.find((e) => !ALL_STEP_KEYS.has(e.key));
      if (stray) this.fail(stray.keyNode, `${path}.${stray.key}`, `unknown step key "${stray.key}" (a step starts with one of: ${STEP_HEADS.join(', ')})`);
      if (get('command')) this.fail(map, path, 'a command step needs `device:` (the device id)');
      this.fail(map, path, `a step needs one of: ${STEP_HEADS.join(', ')}`);
    }
    if (heads.length > 1) {
      const [a, b] = heads as [Entry, Entry];
      this.fail(b.keyNode, `${path}.${b.key}`, `"${a.key}" and "${b.key}" cannot be in one step; make two steps`);
    }
    const head = heads[0] as Entry;
    const kind = head.key as StepKind;
    this.onlyKeys(entries, STEP_KINDS[kind], path, `a ${kind} step`);
    const labelEntry = get('label');
    const label = labelEntry ? this.str(labelEntry, `${path}.label`, 'text', 200) : undefined;
    const step = this.stepOfKind(kind, head, get, map, path, depth);
    if (label !== undefined) step.label = label;
    return step;
  }

  stepOfKind(kind: StepKind, head: Entry, get: (key: string) => Entry | undefined, map: YAMLMap, path: string, depth: number): Step {
    switch (kind) {
      case 'device': {
        const deviceId = this.id(head, `${path}.device`);
        const commandEntry = get('command');
        if (!commandEntry) this.fail(map, `${path}.command`, `missing \`command:\` for device "${deviceId}"`);
        const step: Step = { type: 'command', deviceId, command: this.str(commandEntry, `${path}.command`, 'a command name (text)', 200) };
        const params = get('params');
        if (params && !this.isNull(params.value)) {
          const n = this.deref(params.value, `${path}.params`);
          if (!isMap(n)) this.fail(this.at(params), `${path}.params`, 'must be a map of parameter names to values');
          step.params = n.toJS(this.doc, { maxAliasCount: 100 }) as Record<string, unknown>;
        }
        const timeout = get('timeout');
        if (timeout) step.timeoutMs = this.duration(timeout, `${path}.timeout`, 1, PROGRAM_LIMITS.maxTimeoutMs);
        return step;
      }
      case 'delay':
        return { type: 'delay', ms: this.duration(head, `${path}.delay`, 0, PROGRAM_LIMITS.maxDelayMs) };
      case 'wait': {
        const { condition, timeout } = this.condition(head, `${path}.wait`, true);
        return { type: 'wait_until', condition, timeoutMs: timeout ?? DEFAULT_WAIT_TIMEOUT_MS };
      }
      case 'parallel': {
        if (this.isNull(head.value)) this.fail(head.keyNode, `${path}.parallel`, 'must be a list of branches');
        const { items } = this.items(head, `${path}.parallel`, 'parallel');
        if (items.length === 0) this.fail(this.at(head), `${path}.parallel`, 'needs at least one branch');
        if (items.length > PROGRAM_LIMITS.maxBranches) this.fail(this.at(head), `${path}.parallel`, `at most ${PROGRAM_LIMITS.maxBranches} branches`);
        const branches = items.map((item, i) => {
          const branchPath = `${path}.parallel[${i}]`;
          const n = this.deref(item, branchPath);
          if (isSeq(n)) return this.stepItems(n.items as YNode[], branchPath, depth + 1, n);
          if (isMap(n)) {
            const stepPath = `${branchPath}[0]`;
            if (depth + 1 > PROGRAM_LIMITS.maxNesting) this.fail(n, branchPath, `nested too deeply (at most ${PROGRAM_LIMITS.maxNesting} levels)`);
            return [this.step(n, stepPath, depth + 1, n)];
          }
          return this.fail(n ?? head.keyNode, branchPath, 'a branch must be a list of steps (or one step)');
        });
        return { type: 'parallel', branches };
      }
      case 'if': {
        const { condition } = this.condition(head, `${path}.if`, false);
        const thenEntry = get('then');
        if (!thenEntry) this.fail(map, `${path}.then`, 'missing `then:` (the steps to run when the condition holds)');
        const step: Step = { type: 'condition', condition, then: this.stepList(thenEntry, `${path}.then`, depth + 1) };
        const elseEntry = get('else');
        if (elseEntry) step.else = this.stepList(elseEntry, `${path}.else`, depth + 1);
        return step;
      }
      case 'program':
        return { type: 'run_program', programId: this.id(head, `${path}.program`) };
      case 'macro':
        return { type: 'run_macro', macroId: this.id(head, `${path}.macro`) };
      case 'zone': {
        const zoneId = this.id(head, `${path}.zone`);
        const volume = get('volume');
        const delta = get('delta');
        if (volume && delta) this.fail(delta.keyNode, `${path}.delta`, 'give `volume` or `delta`, not both');
        if (!volume && !delta) this.fail(map, path, `missing \`volume:\` (0–100) or \`delta:\` (e.g. -5) for zone "${zoneId}"`);
        const step: Step = { type: 'zone_volume', zoneId };
        if (volume) step.volume = this.number(volume, `${path}.volume`, 0, 100);
        if (delta) step.delta = this.number(delta, `${path}.delta`, -100, 100);
        return step;
      }
    }
  }

  condition(entry: Entry, path: string, withTimeout: boolean): { condition: StateCondition; timeout?: number } {
    const { map, entries, get } = this.entries(entry.value, path, 'a condition', entry.keyNode);
    const allowed = ['device', 'key', ...Object.keys(COMPARISONS), ...(withTimeout ? ['timeout'] : [])];
    this.onlyKeys(entries, allowed, path, withTimeout ? 'wait' : 'a condition');
    const deviceEntry = get('device');
    if (!deviceEntry) this.fail(map, `${path}.device`, 'missing `device:`');
    const keyEntry = get('key');
    if (!keyEntry) this.fail(map, `${path}.key`, 'missing `key:` (the state key, e.g. power)');
    const deviceId = this.id(deviceEntry, `${path}.device`);
    const key = this.str(keyEntry, `${path}.key`, 'a state key (text)', 200);
    const comparisons = entries.filter((e) => e.key in COMPARISONS);
    if (comparisons.length === 0) this.fail(map, path, `needs one comparison: ${Object.keys(COMPARISONS).join(', ')}`);
    if (comparisons.length > 1) this.fail((comparisons[1] as Entry).keyNode, `${path}.${(comparisons[1] as Entry).key}`, 'only one comparison per condition');
    const cmp = comparisons[0] as Entry;
    const cmpPath = `${path}.${cmp.key}`;
    let condition: StateCondition;
    if (cmp.key === 'on') {
      condition = { deviceId, key, op: this.boolean(cmp, cmpPath) ? 'truthy' : 'falsy' };
    } else if (NUMERIC_COMPARISONS.has(cmp.key)) {
      const v = this.scalar(cmp, cmpPath);
      if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(this.at(cmp), cmpPath, `"${cmp.key}" compares numbers; give a number`);
      condition = { deviceId, key, op: COMPARISONS[cmp.key] as Comparison, value: v };
    } else {
      condition = { deviceId, key, op: COMPARISONS[cmp.key] as Comparison, value: this.scalar(cmp, cmpPath) };
    }
    const timeoutEntry = get('timeout');
    const out: { condition: StateCondition; timeout?: number } = { condition };
    if (timeoutEntry) out.timeout = this.duration(timeoutEntry, `${path}.timeout`, 1, PROGRAM_LIMITS.maxTimeoutMs);
    return out;
  }
}

function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * Compiles a YAML program document into canonical form. Throws `invalid`/`YAML_ERROR` with
 * `details: { line, column, path? }` (1-based) on a syntax or semantic error.
 */
export function compileProgramYaml(text: string): CompiledProgram {
  // Deep nesting overflows the parser's stack (and has aborted Node): refused before it parses.
  checkYamlNesting(text);
  const doc = parseDocument(text, { prettyErrors: false, keepSourceTokens: true, uniqueKeys: true, version: '1.2' });
  const compiler = new Compiler(text, doc);
  const error = doc.errors[0];
  if (error) {
    const message = error.message.split('\n')[0]?.replace(/\s+at line \d+, column \d+:?$/, '') ?? 'syntax error';
    compiler.fail(error.pos[0], undefined, `YAML syntax error: ${message}`);
  }
  return compiler.program();
}
