import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { Condition, ConditionResult, FieldMatch, FieldValue, SunEvent, Trigger, TriggerData } from '../../../domain/programs/automation-model.js';
import type { Program, ProgramRun, StateCondition, Step, StepResult, Timer } from '../../../domain/programs/model.js';
import { programAsYaml } from '../../../domain/programs/yaml-export.js';
import { errors } from '../../../platform/errors.js';
import { text } from '../web/forms.js';
import { csrfField, html, type Html } from '../web/html.js';
import { bindAreaForm, bindPage, nextWithin, optionalPart, type PageContext } from '../web/pages.js';
import { HOME_AREA } from './area.js';

/**
 * Automations, for administrators (`/os/automations`): the list with a switch each, four
 * templates that ask a few fields and save canonical JSON through `programs.save`, an
 * automation's triggers, conditions and steps in words ("When / If / Then"), and its traces as
 * a timeline. Everything is server-rendered; every control is a form.
 */

interface DeviceInfo {
  id: string;
  name: string;
  deviceClass: string;
  attributes: { sensorClass?: string; unit?: string };
  online?: boolean;
  removed?: boolean;
}

interface SceneInfo {
  id: string;
  name: string;
  deviceId: string;
}

interface AutomationSummary {
  programId: string;
  name: string;
  triggers: Trigger[];
  conditionCount: number;
  mode: string;
  enabled: boolean;
  pause: { reason: string; message: string; at: number } | null;
  nextFireAt: number | null;
  running: boolean;
}

type ProgramView = Program & { nextFireAt?: number | null; running?: boolean };
type Run = ProgramRun & { checkpoint?: { path: string; until: number } };

/** What the words need: names of devices, programs and scenes, and the home's time zone. */
interface Words {
  devices: Map<string, DeviceInfo>;
  programs: Map<string, string>;
  scenes: Map<string, SceneInfo>;
  timezone: string;
}

const BASE = '/os/automations';
const HOUR_MS = 3_600_000;
/** A `wait_for_trigger` waits at most an hour (the step time-out limit). */
const MAX_WAIT_MS = HOUR_MS;

const STYLE = html`<style>
.autos{list-style:none;margin:0;padding:0;display:grid;gap:.7rem}
.auto{background:var(--card);border:1px solid var(--line);border-radius:.6rem;padding:.7rem .9rem;display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center}
.auto .about{flex:1 1 16rem;min-width:0}.auto h3{margin:0;font-size:1.05rem;overflow-wrap:anywhere}.auto p{margin:.2rem 0;overflow-wrap:anywhere}
.auto form{margin:0}.links{display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin:.3rem 0 0}
.badge.ok{background:var(--ok-bg);color:var(--ok)}.badge.bad{background:var(--bad-bg);color:var(--bad)}.badge.warn{border-color:var(--focus)}.badge.run{border-color:var(--accent);color:var(--accent)}
.notice{padding:.6rem .8rem;border-radius:.4rem;border:1px solid var(--focus);margin:.5rem 0}
.templates{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(15rem,100%),1fr));gap:.7rem}
.templates .card{margin:0;display:flex;flex-direction:column;gap:.3rem}.templates h3{margin:0;font-size:1rem}.templates p{margin:0}
.readout h3{font-size:1rem;margin:.2rem 0 .3rem}.readout ol,.readout ul{margin:.2rem 0;padding-left:1.4rem}.readout li{margin:.25rem 0;overflow-wrap:anywhere}
.readout .label{font-weight:600}
form.stack{display:flex;flex-direction:column;gap:.2rem;align-items:flex-start}form.stack fieldset{border:1px solid var(--line);border-radius:.4rem;padding:.3rem .8rem;margin:.3rem 0;min-width:0;max-width:100%}
form.stack .hint{font-size:.9rem;color:var(--muted);margin:0 0 .3rem}form.stack select,form.stack input:not([type=checkbox]){width:min(24rem,100%)}
.traces{list-style:none;margin:0;padding:0}.traces>li{padding:.5rem 0;border-bottom:1px solid var(--line)}.traces p{margin:.15rem 0;overflow-wrap:anywhere}
.filter{display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin:.3rem 0 .6rem}.filter [aria-current]{font-weight:700}
ol.timeline{list-style:none;margin:.4rem 0;padding:0 0 0 1.2rem;border-left:3px solid var(--line)}
ol.timeline>li{position:relative;margin:0 0 1rem;padding-left:.3rem}
ol.timeline>li::before{content:"";position:absolute;left:-1.72rem;top:.3rem;width:.75rem;height:.75rem;border-radius:50%;background:var(--card);border:3px solid var(--muted)}
ol.timeline>li.ok::before{border-color:var(--ok)}ol.timeline>li.bad::before{border-color:var(--bad)}ol.timeline>li.warn::before{border-color:var(--focus)}
ol.timeline h3{font-size:1rem;margin:0 0 .2rem}ol.timeline p{margin:.15rem 0;overflow-wrap:anywhere}
ul.results{list-style:none;margin:.2rem 0;padding:0}ul.results>li{margin:.35rem 0;overflow-wrap:anywhere}ul.results .nest{padding-left:1.2rem}
.mark{font-weight:700;display:inline-block;min-width:1.2em}.mark.ok{color:var(--ok)}.mark.bad{color:var(--bad)}
.why{padding:.6rem .8rem;border-radius:.4rem;margin:.5rem 0;background:var(--code)}.why.bad{background:var(--bad-bg);color:var(--bad)}
dl.vars{display:grid;grid-template-columns:minmax(0,max-content) minmax(0,1fr);gap:.2rem .8rem;margin:.3rem 0}dl.vars dt{color:var(--muted);overflow-wrap:anywhere}dl.vars dd{margin:0}dl.vars code{white-space:pre-wrap;overflow-wrap:anywhere}
</style>`;

// ---------------------------------------------------------------------------------------------
// Words
// ---------------------------------------------------------------------------------------------

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A duration in words: "5 minutes", "1 hour 30 minutes", "45 seconds". */
export function durationWords(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  let s = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [size, word] of [[86_400, 'day'], [3600, 'hour'], [60, 'minute'], [1, 'second']] as const) {
    const n = Math.floor(s / size);
    s -= n * size;
    if (n > 0) parts.push(plural(n, word));
  }
  return parts.slice(0, 2).join(' ');
}

/** How long a step took, short: "12 ms", "1.4 s", "2 minutes 5 seconds". */
function elapsed(ms: number): string {
  if (ms < 1000) return `${Math.max(0, ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return durationWords(ms);
}

function formatTime(ms: number, timezone: string): string {
  const options: Intl.DateTimeFormatOptions = { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' };
  try {
    return new Intl.DateTimeFormat('en-GB', { ...options, timeZone: timezone }).format(ms);
  } catch {
    return new Intl.DateTimeFormat('en-GB', { ...options, timeZone: 'UTC' }).format(ms);
  }
}

const timeTag = (ms: number, w: Words): Html => html`<time datetime="${new Date(ms).toISOString()}">${formatTime(ms, w.timezone)}</time>`;

const deviceName = (id: string, w: Words) => w.devices.get(id)?.name ?? id;
const namesOf = (ids: readonly string[], w: Words) => (ids.length <= 1 ? deviceName(ids[0] ?? '?', w) : `${ids.slice(0, -1).map((id) => deviceName(id, w)).join(', ')} or ${deviceName(ids.at(-1)!, w)}`);

/** Device ids in a text the hub wrote (a trigger's description, a condition's detail) as names. */
function named(textIn: string, w: Words): string {
  let out = textIn;
  for (const d of w.devices.values()) if (d.id.length >= 4 && out.includes(d.id)) out = out.split(d.id).join(d.name);
  return out;
}

const FIELD_WORDS: Record<string, string> = {
  on: 'power', detected: 'detection', currentTemperature: 'temperature', targetTemperature: 'target temperature', hvacMode: 'mode', hvacAction: 'activity',
  colorTempKelvin: 'colour temperature', lastPress: 'last press', coverState: 'state', online: 'availability',
};
const fieldWords = (field: string) => FIELD_WORDS[field] ?? field.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, (_m, a: string, b: string) => `${a} ${b.toLowerCase()}`);

function unitOf(field: string, device: DeviceInfo | undefined): string {
  if (field === 'brightness' || field === 'position' || field === 'percentage' || field === 'volume' || field === 'humidity' || field === 'saturation') return ' %';
  if (field === 'currentTemperature' || field === 'targetTemperature') return '°';
  if (field === 'colorTempKelvin') return ' K';
  if (field === 'value' && device?.attributes.unit) return ` ${device.attributes.unit}`;
  return '';
}

const valueWords = (v: FieldValue) => (v === null ? 'nothing' : typeof v === 'string' ? `“${v}”` : String(v));
const matchWords = (m: FieldMatch) => (Array.isArray(m) ? m.map(valueWords).join(' or ') : valueWords(m));

/** What a binary sensor of a class does, as a trigger (`becomes`) or a condition (`is`) says it. */
const DETECTION: Record<string, { on: string; off: string; isOn: string; isOff: string }> = {
  motion: { on: 'detects motion', off: 'stops detecting motion', isOn: 'detects motion', isOff: 'detects no motion' },
  occupancy: { on: 'detects someone', off: 'detects no one any more', isOn: 'detects someone', isOff: 'detects no one' },
  contact: { on: 'opens', off: 'closes', isOn: 'is open', isOff: 'is closed' },
  leak: { on: 'detects a leak', off: 'stops detecting a leak', isOn: 'detects a leak', isOff: 'detects no leak' },
  smoke: { on: 'detects smoke', off: 'stops detecting smoke', isOn: 'detects smoke', isOff: 'detects no smoke' },
  tamper: { on: 'detects tampering', off: 'stops detecting tampering', isOn: 'detects tampering', isOff: 'detects no tampering' },
  '': { on: 'detects something', off: 'stops detecting', isOn: 'detects something', isOff: 'detects nothing' },
};
const BOOLEAN_FIELDS: Record<string, { on: string; off: string; isOn: string; isOff: string }> = {
  on: { on: 'turns on', off: 'turns off', isOn: 'is on', isOff: 'is off' },
  locked: { on: 'locks', off: 'unlocks', isOn: 'is locked', isOff: 'is unlocked' },
  muted: { on: 'is muted', off: 'is unmuted', isOn: 'is muted', isOff: 'is not muted' },
  jammed: { on: 'jams', off: 'is no longer jammed', isOn: 'is jammed', isOff: 'is not jammed' },
  online: { on: 'goes online', off: 'goes offline', isOn: 'is online', isOff: 'is offline' },
};

function booleanWords(field: string, deviceId: string | undefined, w: Words) {
  if (field === 'detected') return DETECTION[w.devices.get(deviceId ?? '')?.attributes.sensorClass ?? ''] ?? DETECTION['']!;
  return BOOLEAN_FIELDS[field];
}

/** "detects motion", "turns off", "temperature changes to 21 °": what a state trigger waits for. */
function changeWords(field: string, from: FieldMatch | undefined, to: FieldMatch | undefined, deviceId: string | undefined, w: Words): string {
  const words = booleanWords(field, deviceId, w);
  const fromPart = from === undefined ? '' : ` from ${matchWords(from)}`;
  if (words && typeof to === 'boolean') return `${to ? words.on : words.off}${fromPart}`;
  const unit = unitOf(field, w.devices.get(deviceId ?? ''));
  if (to === undefined) return `${fieldWords(field)} changes${fromPart}`;
  return `${fieldWords(field)} changes${fromPart} to ${matchWords(to)}${typeof to === 'number' ? unit : ''}`;
}

/** "is off", "mode is “heat”": what a state condition reads. */
function isWords(field: string, is: FieldMatch, deviceId: string, w: Words): string {
  const words = booleanWords(field, deviceId, w);
  if (words && typeof is === 'boolean') return is ? words.isOn : words.isOff;
  return `${fieldWords(field)} is ${matchWords(is)}${typeof is === 'number' ? unitOf(field, w.devices.get(deviceId)) : ''}`;
}

function rangeWords(range: { above?: number; below?: number }, unit: string, rising: boolean): string {
  if (range.above !== undefined && range.below !== undefined) return `${rising ? 'comes between' : 'is between'} ${range.above}${unit} and ${range.below}${unit}`;
  if (range.above !== undefined) return `${rising ? 'rises above' : 'is above'} ${range.above}${unit}`;
  if (range.below !== undefined) return `${rising ? 'falls below' : 'is below'} ${range.below}${unit}`;
  return rising ? 'changes' : 'has a value';
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const weekdayWords = (days?: number[]) => (days && days.length > 0 && days.length < 7 ? ` on ${[...days].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7)).map((d) => WEEKDAYS[d]).join(', ')}` : '');
const zoneWords = (tz?: string) => (tz ? ` (${tz})` : '');

function timerWords(timer: Timer): string {
  const off = timer.enabled === false ? ' (switched off)' : '';
  switch (timer.kind) {
    case 'daily':
      return `${timer.weekdays && timer.weekdays.length < 7 ? `every${weekdayWords(timer.weekdays).replace(' on', '')}` : 'every day'} at ${timer.time}${zoneWords(timer.timezone)}${off}`;
    case 'cron':
      return `on the schedule “${timer.expression}”${zoneWords(timer.timezone)}${off}`;
    case 'interval':
      return `every ${durationWords(timer.everyMs)}${off}`;
    case 'at':
      return `once, on ${timer.at.replace('T', ' at ')}${zoneWords(timer.timezone)}${off}`;
  }
}

function sunWords(event: SunEvent, offsetMs: number | undefined): string {
  if (!offsetMs) return `at ${event}`;
  return `${durationWords(Math.abs(offsetMs))} ${offsetMs < 0 ? 'before' : 'after'} ${event}`;
}

const PRESS_WORDS = { single: 'pressed once', double: 'pressed twice', long: 'held down (long press)' } as const;

const forWords = (forMs: number | undefined) => (forMs ? ` and stays so for ${durationWords(forMs)}` : '');

/** One trigger in words, as the sentence after "When". */
export function triggerWords(t: Trigger, w: Words): string {
  switch (t.type) {
    case 'state':
      return `${namesOf(t.deviceIds, w)} ${changeWords(t.field, t.from, t.to, t.deviceIds[0], w)}${forWords(t.forMs)}`;
    case 'numeric': {
      const unit = unitOf(t.field, w.devices.get(t.deviceIds[0] ?? ''));
      return `the ${fieldWords(t.field)} of ${namesOf(t.deviceIds, w)} ${rangeWords(t, unit, true)}${forWords(t.forMs)}${t.alsoWhenAlreadyPast ? ' (also when it already is, at saving or start)' : ''}`;
    }
    case 'button':
      return `${namesOf(t.deviceIds, w)} is ${t.press ? PRESS_WORDS[t.press] : 'pressed (any press)'}`;
    case 'availability':
      return `${namesOf(t.deviceIds, w)} goes ${t.to}${forWords(t.forMs)}`;
    case 'time':
      return timerWords(t.timer);
    case 'sun':
      return sunWords(t.event, t.offsetMs);
    case 'hub':
      switch (t.event) {
        case 'started':
          return 'the hub starts';
        case 'alert_submitted':
          return `an alert is submitted${t.severities?.length ? ` (${t.severities.join(' or ')})` : ''}`;
        case 'program_finished':
        case 'program_failed': {
          const verb = t.event === 'program_finished' ? 'finishes' : 'fails';
          return t.programId ? `the program ${w.programs.get(t.programId) ?? t.programId} ${verb}` : `any other program ${verb}`;
        }
      }
      return `the hub event ${String((t as { event: string }).event)}`;
    case 'mqtt':
      return `an MQTT message arrives on “${t.topic}”${t.payload !== undefined ? ` with the payload “${t.payload}”` : ''}`;
    case 'webhook':
      return `its webhook is called${t.webhookId ? ` (POST /webhooks/${t.webhookId})` : ''}`;
  }
}

/** The one-line summary of the list: "When Hall motion detects motion or at sunset". */
export function whenSummary(triggers: readonly Trigger[], w: Words): string {
  const phrases = triggers.map((t) => triggerWords(t, w));
  const shown = phrases.length > 3 ? [...phrases.slice(0, 2), `${phrases.length - 2} other things happen`] : phrases;
  return `When ${shown.join(' or ')}`;
}

const LOGIC_WORDS = { and: 'all of these hold', or: 'any of these holds', not: 'none of these holds' } as const;
const sunBoundWords = (b: { event: SunEvent; offsetMs?: number }) => (b.offsetMs ? sunWords(b.event, b.offsetMs) : b.event);

/** One condition in words (a group's own sentence, without its members). */
export function conditionWords(c: Condition, w: Words): string {
  switch (c.type) {
    case 'and':
    case 'or':
    case 'not':
      return LOGIC_WORDS[c.type];
    case 'state':
      return `${deviceName(c.deviceId, w)} ${isWords(c.field, c.is, c.deviceId, w)}${c.forMs ? `, for at least ${durationWords(c.forMs)}` : ''}`;
    case 'numeric':
      return `the ${fieldWords(c.field)} of ${deviceName(c.deviceId, w)} ${rangeWords(c, unitOf(c.field, w.devices.get(c.deviceId)), false)}${c.forMs ? `, for at least ${durationWords(c.forMs)}` : ''}`;
    case 'time': {
      const window = c.after && c.before ? `between ${c.after} and ${c.before}` : c.after ? `after ${c.after}` : c.before ? `before ${c.before}` : 'any time';
      return `the time is ${window}${weekdayWords(c.weekdays)}${zoneWords(c.timezone)}`;
    }
    case 'sun': {
      const parts = [c.after ? `after ${sunBoundWords(c.after)}` : '', c.before ? `before ${sunBoundWords(c.before)}` : ''].filter(Boolean);
      return `it is ${parts.join(' and ') || 'any time of day'}`;
    }
    case 'trigger':
      return `the run was started by the trigger “${c.id}”`;
  }
}

function conditionItem(c: Condition, w: Words): Html {
  const nested = c.type === 'and' || c.type === 'or' || c.type === 'not' ? html`<ul>${c.conditions.map((inner) => conditionItem(inner, w))}</ul>` : '';
  return html`<li>${conditionWords(c, w)}${nested ? ':' : ''}${nested}</li>`;
}

const OP_WORDS: Record<StateCondition['op'], string> = { eq: 'is', ne: 'is not', gt: 'is above', gte: 'is at least', lt: 'is below', lte: 'is at most', truthy: 'is set', falsy: 'is not set' };
const stateConditionWords = (c: StateCondition, w: Words) =>
  `${deviceName(c.deviceId, w)} ${c.key} ${OP_WORDS[c.op]}${c.op === 'truthy' || c.op === 'falsy' ? '' : ` ${JSON.stringify(c.value)}`}`;

const paramWords = (params: Record<string, unknown> | undefined) => {
  const entries = Object.entries(params ?? {});
  return entries.length === 0 ? '' : ` (${entries.map(([k, v]) => `${k.replace(/_/g, ' ')} ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')})`;
};

const PLAIN_COMMANDS = new Set(['turn_on', 'turn_off', 'toggle', 'open', 'close', 'stop', 'lock', 'unlock', 'play', 'pause']);
const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function commandWords(step: Extract<Step, { type: 'command' }>, w: Words): string {
  const device = deviceName(step.deviceId, w);
  const timeout = step.timeoutMs ? `, waiting at most ${durationWords(step.timeoutMs)} for it` : '';
  if (PLAIN_COMMANDS.has(step.command) && Object.keys(step.params ?? {}).length === 0) return `${capitalised(step.command.replace(/_/g, ' '))} ${device}${timeout}`;
  const brightness = step.params?.brightness;
  if (step.command === 'set_brightness' && typeof brightness === 'number') return `Set the brightness of ${device} to ${brightness} %${timeout}`;
  return `Send “${step.command}” to ${device}${paramWords(step.params)}${timeout}`;
}

/** One step in words (a container's own sentence, without the steps inside it). */
export function stepWords(step: Step, w: Words): string {
  switch (step.type) {
    case 'command':
      return commandWords(step, w);
    case 'delay':
      return `Wait ${durationWords(step.ms)}`;
    case 'wait_until':
      return `Wait until ${stateConditionWords(step.condition, w)} (at most ${durationWords(step.timeoutMs)}; then the run fails)`;
    case 'run_program':
      return `Run the program ${w.programs.get(step.programId) ?? step.programId}`;
    case 'run_macro':
      return `Run the macro ${step.macroId}`;
    case 'zone_volume':
      return step.volume !== undefined ? `Set the volume of zone ${step.zoneId} to ${step.volume}` : `Change the volume of zone ${step.zoneId} by ${(step.delta ?? 0) > 0 ? '+' : ''}${step.delta ?? 0}`;
    case 'parallel':
      return 'At the same time';
    case 'condition':
      return `If ${stateConditionWords(step.condition, w)}`;
    case 'choose':
      return 'The first of these whose conditions hold';
    case 'repeat':
      if (step.count !== undefined) return `Repeat ${plural(step.count, 'time')}`;
      if (step.while) return `Repeat while ${step.while.map((c) => conditionWords(c, w)).join(' and ')}`;
      return `Repeat until ${(step.until ?? []).map((c) => conditionWords(c, w)).join(' and ')}`;
    case 'variables':
      return `Set ${Object.entries(step.variables).map(([k, v]) => `${k} to ${typeof v === 'string' ? `“${v}”` : JSON.stringify(v)}`).join(', ')}`;
    case 'wait_for_trigger':
      return `Wait until ${step.triggers.map((t) => triggerWords(t, w)).join(' or ')}, at most ${durationWords(step.timeoutMs)}${step.continueOnTimeout === false ? ' (past that, the run fails)' : ' (past that, it goes on)'}`;
    case 'stop':
      return step.error ? `Stop with an error${step.reason ? `: ${step.reason}` : ''}` : `Stop here${step.reason ? `: ${step.reason}` : ''}`;
    case 'alert':
      return `Send ${step.severity === 'info' || !step.severity ? 'an info' : step.severity === 'warning' ? 'a warning' : 'a critical'} alert: “${named(step.message, w)}”`;
    case 'scene': {
      const scene = w.scenes.get(step.sceneId);
      const device = step.sceneId.slice(0, Math.max(0, step.sceneId.indexOf(':')));
      return `Run the scene ${scene?.name ?? step.sceneId.slice(step.sceneId.indexOf(':') + 1)}${device ? ` of ${deviceName(device, w)}` : ''}`;
    }
  }
}

function stepItem(step: Step, w: Words): Html {
  const steps = (list: Step[]) => html`<ol>${list.map((s) => stepItem(s, w))}</ol>`;
  let inner: Html | string = '';
  switch (step.type) {
    case 'parallel':
      inner = html`<ul>${step.branches.map((b, i) => html`<li>Branch ${i + 1}:${steps(b)}</li>`)}</ul>`;
      break;
    case 'condition':
      inner = html`${steps(step.then)}${step.else ? html`Otherwise:${steps(step.else)}` : ''}`;
      break;
    case 'choose':
      inner = html`<ul>${step.choices.map((c) => html`<li>If ${c.conditions.map((x) => conditionWords(x, w)).join(' and ') || 'always'}:${steps(c.steps)}</li>`)}${step.default ? html`<li>Otherwise:${steps(step.default)}</li>` : ''}</ul>`;
      break;
    case 'repeat':
      inner = steps(step.steps);
      break;
    default:
      break;
  }
  return html`<li>${step.label ? html`<span class="label">${step.label}:</span> ` : ''}${stepWords(step, w)}${inner ? ':' : ''}${inner}</li>`;
}

/** The step a result's path names ("3.branch1.2", "4.then.0", "5.choice1.0", "6.pass2.0"). */
function stepAt(steps: readonly Step[], path: string): Step | undefined {
  let list: readonly Step[] | undefined = steps;
  let step: Step | undefined;
  for (const segment of path.split('.')) {
    if (/^\d+$/.test(segment)) {
      step = list?.[Number(segment)];
      list = undefined;
      if (!step) return undefined;
      continue;
    }
    const n = Number(segment.replace(/^\D+/, ''));
    if (!step) return undefined;
    if (step.type === 'parallel' && segment.startsWith('branch')) list = step.branches[n];
    else if (step.type === 'condition' && (segment === 'then' || segment === 'else')) list = segment === 'then' ? step.then : step.else;
    else if (step.type === 'choose' && segment.startsWith('choice')) list = step.choices[n]?.steps;
    else if (step.type === 'choose' && segment === 'default') list = step.default;
    else if (step.type === 'repeat' && segment.startsWith('pass')) list = step.steps;
    else return undefined;
  }
  return step;
}

/** The condition a result's path names ("0", "1.conditions.0"). */
function conditionAt(conditions: readonly Condition[], path: string): Condition | undefined {
  let list: readonly Condition[] | undefined = conditions;
  let found: Condition | undefined;
  for (const segment of path.split('.')) {
    if (segment === 'conditions') {
      list = found && 'conditions' in found ? found.conditions : undefined;
      continue;
    }
    found = list?.[Number(segment)];
    if (!found) return undefined;
  }
  return found;
}

/** "step 4 › then › 1" for "3.then.0". */
function pathWords(path: string, noun: string): string {
  const words = path.split('.').map((s) => {
    if (/^\d+$/.test(s)) return String(Number(s) + 1);
    const n = Number(s.replace(/^\D+/, '')) + 1;
    if (s.startsWith('branch')) return `branch ${n}`;
    if (s.startsWith('choice')) return `option ${n}`;
    if (s.startsWith('pass')) return `pass ${n}`;
    if (s === 'else' || s === 'default') return 'otherwise';
    return s === 'conditions' ? '' : s;
  });
  return `${noun} ${words.filter(Boolean).join(' › ')}`;
}

/** Sorts results in the order of the script (a container before the steps inside it). */
function scriptOrder(a: string, b: string): number {
  const sa = a.split('.');
  const sb = b.split('.');
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    if (sa[i] === sb[i]) continue;
    const na = Number((sa[i] ?? '').replace(/^\D+/, ''));
    const nb = Number((sb[i] ?? '').replace(/^\D+/, ''));
    if (Number.isFinite(na) && Number.isFinite(nb) && na !== nb) return na - nb;
    return (sa[i] ?? '').localeCompare(sb[i] ?? '');
  }
  return sa.length - sb.length;
}

// ---------------------------------------------------------------------------------------------
// Statuses
// ---------------------------------------------------------------------------------------------

const STATUS: Record<ProgramRun['status'], { words: string; tone: 'ok' | 'bad' | 'warn' | 'run' }> = {
  running: { words: 'Running', tone: 'run' },
  succeeded: { words: 'Succeeded', tone: 'ok' },
  failed: { words: 'Failed', tone: 'bad' },
  cancelled: { words: 'Cancelled', tone: 'warn' },
  skipped: { words: 'Did not run: skipped', tone: 'warn' },
  not_passed: { words: 'Did not run: conditions', tone: 'warn' },
  interrupted: { words: 'Interrupted', tone: 'warn' },
};

const statusBadge = (status: ProgramRun['status']) => html`<span class="badge ${STATUS[status].tone}" data-status="${status}">${STATUS[status].words}</span>`;

const repeatedWords = (run: Run, w: Words): Html | string =>
  run.count && run.count > 1 ? html` This happened ${run.count} times in a row${run.lastAt ? html`, the last at ${timeTag(run.lastAt, w)}` : ''}.` : '';

/** In plain words why the run ended as it did (or did not run). */
function whyWords(run: Run, program: ProgramView | undefined, w: Words): Html {
  const sentence = (s: string) => (/[.!?]$/.test(s) ? s : `${s}.`);
  switch (run.status) {
    case 'not_passed': {
      const failed = (run.conditions ?? []).find((r) => !r.result && r.type !== 'and' && r.type !== 'or' && r.type !== 'not') ?? (run.conditions ?? []).findLast((r) => !r.result);
      const condition = failed && program ? conditionAt(program.conditions ?? [], failed.path) : undefined;
      const what = condition ? `“${conditionWords(condition, w)}”` : failed ? pathWords(failed.path, '') : '';
      const body = failed
        ? `It did not run: the condition ${what.trim()} did not hold${failed.detail ? `: ${named(failed.detail, w)}` : ''}`
        : `It did not run: ${named(run.reason ?? 'its conditions did not hold', w)}`;
      return html`${sentence(body)}${repeatedWords(run, w)}`;
    }
    case 'skipped':
      return html`${sentence(`It did not run: ${named(run.reason ?? 'its mode allowed no run then', w)}`)}${repeatedWords(run, w)}`;
    case 'failed': {
      const at = run.error?.step;
      const step = at && program ? stepAt(program.steps, at) : undefined;
      return html`${sentence(`It failed${at ? ` at ${pathWords(at, 'step')}${step ? ` (${stepWords(step, w)})` : ''}` : ''}: ${named(run.error?.message ?? run.reason ?? 'no reason was recorded', w)}`)}`;
    }
    case 'cancelled':
      return html`${sentence(`It was cancelled${run.reason ? `: ${named(run.reason, w)}` : ' before it ended (a newer start, or by hand)'}`)}`;
    case 'interrupted':
      return html`${sentence(`The hub stopped while it ran${run.reason ? `: ${named(run.reason, w)}` : ''}`)}`;
    case 'running': {
      const cp = run.checkpoint;
      const step = cp && program ? stepAt(program.steps, cp.path) : undefined;
      return cp
        ? html`It is running now, waiting at ${pathWords(cp.path, 'step')}${step ? ` (${stepWords(step, w)})` : ''} until ${timeTag(cp.until, w)} at the latest.`
        : html`It is running now.`;
    }
    case 'succeeded':
      return html`${sentence(`It ran to the end${run.reason ? `: ${named(run.reason, w)}` : ''}`)}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Pieces of the pages
// ---------------------------------------------------------------------------------------------

async function wordsFor(ctx: PageContext, hub: Hub, extra: { programs?: boolean; scenes?: boolean } = {}): Promise<Words> {
  const [{ devices }, settings, programs, scenes] = await Promise.all([
    ctx.call<{ devices: DeviceInfo[] }>(hub.ops.devices.list, { includeRemoved: true }),
    optionalPart(() => ctx.call<{ timezone: string }>(hub.ops.home.getSettings), () => true),
    extra.programs ? ctx.call<{ programs: Array<{ id: string; name: string }> }>(hub.ops.programs.list) : Promise.resolve({ programs: [] }),
    extra.scenes ? optionalPart(() => ctx.call<{ scenes: SceneInfo[] }>(hub.ops.scenes.listScenes), () => true) : Promise.resolve({ value: { scenes: [] } }),
  ]);
  return {
    devices: new Map(devices.map((d) => [d.id, d])),
    programs: new Map(programs.programs.map((p) => [p.id, p.name])),
    scenes: new Map(('value' in scenes ? scenes.value.scenes : []).map((s) => [s.id, s])),
    timezone: 'value' in settings ? settings.value.timezone : 'UTC',
  };
}

/** The enable switch: a form button; its name says which automation, `aria-checked` whether it fires. */
function enableSwitch(a: { id: string; name: string; enabled: boolean; paused: boolean }, csrf: string, next: string): Html {
  const firing = a.enabled && !a.paused;
  return html`<form method="post" action="${BASE}/${a.id}/${firing ? 'disable' : 'enable'}">${csrfField(csrf)}<input type="hidden" name="next" value="${next}"><button type="submit" role="switch" class="switch" aria-checked="${firing ? 'true' : 'false'}" aria-label="${a.name} enabled" data-automation-switch="${a.id}">${firing ? 'On' : a.paused ? 'Paused' : 'Off'}</button></form>`;
}

function stateBadge(enabled: boolean, paused: boolean): Html {
  if (paused) return html`<span class="badge bad">Paused</span>`;
  return enabled ? html`<span class="badge ok">Enabled</span>` : html`<span class="badge">Disabled</span>`;
}

function traceItem(run: Run, programId: string, program: ProgramView | undefined, w: Words): Html {
  const trigger = run.triggered ? named(run.triggered.description, w) : `started ${run.trigger === 'manual' ? 'by hand' : `by ${run.trigger}`}`;
  const quiet = run.status === 'not_passed' || run.status === 'skipped' || run.status === 'failed';
  return html`<li data-trace="${run.id}"><p>${statusBadge(run.status)} <a href="${BASE}/${programId}/traces/${run.id}">${timeTag(run.startedAt, w)}<span class="visually-hidden">: open this trace</span></a>${run.count && run.count > 1 ? html` <span class="badge" title="The same outcome, in a row">×${run.count}</span>` : ''}</p>
<p class="muted">${capitalised(trigger)}</p>${quiet ? html`<p>${whyWords(run, program, w)}</p>` : ''}</li>`;
}

// ---------------------------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------------------------

const TEMPLATES = {
  'motion-light': { title: 'Motion-activated light', blurb: 'Turns a light on when a motion sensor detects motion, and off again once it has seen no motion for some minutes.', name: 'Motion light' },
  'door-open': { title: 'Door left open', blurb: 'Sends a warning when a door or window has stayed open for some minutes.', name: 'Door left open' },
  'sunset-lights': { title: 'Lights at sunset', blurb: 'Turns lights on at sunset, or some minutes before or after it.', name: 'Lights at sunset' },
  'button-scene': { title: 'Button → scene', blurb: 'Runs a scene when a button is pressed.', name: 'Button scene' },
} as const;
type TemplateId = keyof typeof TEMPLATES;
const isTemplate = (id: string): id is TemplateId => Object.hasOwn(TEMPLATES, id);

const invalid = (field: string, problem: string) => errors.VALIDATION_FAILED({ field, problem });

function wholeNumber(fields: Record<string, unknown>, name: string, label: string, min: number, max: number): number {
  const raw = text(fields, name);
  const n = raw === undefined ? NaN : Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw invalid(label, `must be a whole number from ${min} to ${max}`);
  return n;
}

const listOf = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).map(String).map((s) => s.trim()).filter(Boolean);

/** Template text must not carry a template of its own: the braces of a name are dropped. */
const plainText = (s: string) => s.replace(/[{}]/g, '');

/** The canonical program a template's form makes (what `programs.save` takes). */
function templateProgram(template: TemplateId, fields: Record<string, unknown>, device: (id: string, label: string, cls: string) => { id: string; name: string }, sceneIds: () => Set<string>): Record<string, unknown> {
  const name = text(fields, 'name') ?? TEMPLATES[template].name;
  if (name.length > 200) throw invalid('Name', 'is longer than 200 characters');
  switch (template) {
    case 'motion-light': {
      const sensor = device(text(fields, 'sensor') ?? '', 'Motion sensor', 'binary_sensor');
      const light = device(text(fields, 'light') ?? '', 'Light', 'light');
      const minutes = wholeNumber(fields, 'minutes', 'Minutes', 1, 59);
      return {
        name,
        description: `Turns ${light.name} on when ${sensor.name} detects motion, and off once it has seen none for ${plural(minutes, 'minute')}.`,
        triggers: [{ id: 'motion', type: 'state', deviceIds: [sensor.id], field: 'detected', to: true }],
        steps: [
          { type: 'command', deviceId: light.id, command: 'turn_on' },
          { type: 'wait_for_trigger', triggers: [{ type: 'state', deviceIds: [sensor.id], field: 'detected', to: false, forMs: minutes * 60_000 }], timeoutMs: MAX_WAIT_MS, continueOnTimeout: true },
          { type: 'command', deviceId: light.id, command: 'turn_off' },
        ],
        mode: 'restart',
      };
    }
    case 'door-open': {
      const sensor = device(text(fields, 'sensor') ?? '', 'Contact sensor', 'binary_sensor');
      const minutes = wholeNumber(fields, 'minutes', 'Minutes', 1, 7 * 24 * 60);
      return {
        name,
        description: `A warning when ${sensor.name} has been open for ${plural(minutes, 'minute')}.`,
        triggers: [{ id: 'open', type: 'state', deviceIds: [sensor.id], field: 'detected', to: true, forMs: minutes * 60_000 }],
        steps: [{ type: 'alert', message: `${plainText(sensor.name)} has been open for ${plural(minutes, 'minute')}.`, severity: 'warning', alertType: 'door_open', deviceId: sensor.id }],
        mode: 'single',
      };
    }
    case 'sunset-lights': {
      const ids = listOf(fields.lights);
      if (ids.length === 0) throw invalid('Lights', 'must have at least one light chosen');
      const lights = ids.map((id) => device(id, 'Lights', 'light'));
      const offset = wholeNumber(fields, 'offset', 'Offset', -360, 360);
      return {
        name,
        triggers: [{ id: 'sunset', type: 'sun', event: 'sunset', ...(offset !== 0 ? { offsetMs: offset * 60_000 } : {}) }],
        steps: lights.map((l) => ({ type: 'command', deviceId: l.id, command: 'turn_on' })),
        mode: 'single',
      };
    }
    case 'button-scene': {
      const button = device(text(fields, 'button') ?? '', 'Button', 'button');
      const press = text(fields, 'press') ?? 'single';
      if (press !== 'single' && press !== 'double' && press !== 'long') throw invalid('Press', 'must be single, double or long');
      const sceneId = text(fields, 'scene') ?? '';
      if (!sceneIds().has(sceneId)) throw invalid('Scene', sceneId ? 'is not a scene the hub knows' : 'must be chosen');
      return {
        name,
        triggers: [{ id: 'press', type: 'button', deviceIds: [button.id], press }],
        steps: [{ type: 'scene', sceneId }],
        mode: 'single',
      };
    }
  }
}

/** Said beside a device to choose whose driver is away: it can be chosen, and is told apart. */
const offline = (d: DeviceInfo) => (d.online === false ? ' (offline)' : '');

function options(devices: readonly DeviceInfo[], selected: string | undefined, placeholder: string): Html {
  return html`<option value=""${selected ? '' : html` selected`}>${placeholder}</option>${devices.map(
    (d) => html`<option value="${d.id}"${d.id === selected ? html` selected` : ''}>${d.name}${d.attributes.sensorClass ? ` (${d.attributes.sensorClass})` : ''}${offline(d)}</option>`,
  )}`;
}

function devicePicker(id: string, label: string, hint: string, devices: readonly DeviceInfo[], selected: string | undefined, kind: string): Html {
  if (devices.length === 0) return html`<p class="notice" data-missing="${id}">No ${kind} yet: <a href="/os/add">add devices</a> first.</p>`;
  return html`<label for="${id}">${label}</label><p class="hint" id="${id}-hint">${hint}</p><select id="${id}" name="${id}" required aria-describedby="${id}-hint">${options(devices, selected, `Choose a ${kind}`)}</select>`;
}

function minutesField(id: string, label: string, hint: string, value: string, min: number, max: number): Html {
  return html`<label for="${id}">${label}</label><p class="hint" id="${id}-hint">${hint}</p><input id="${id}" name="${id}" type="number" inputmode="numeric" min="${min}" max="${max}" step="1" value="${value}" required aria-describedby="${id}-hint">`;
}

/** Binary sensors, the classes the template wants first. */
function binarySensors(devices: DeviceInfo[], first: string[]): DeviceInfo[] {
  const rank = (d: DeviceInfo) => (first.includes(d.attributes.sensorClass ?? '') ? 0 : 1);
  return devices.filter((d) => d.deviceClass === 'binary_sensor').sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

// ---------------------------------------------------------------------------------------------
// The pages
// ---------------------------------------------------------------------------------------------

const adminsOnly = html`<p class="muted">Only administrators manage automations.</p>`;
const withStyle = (body: Html) => html`${STYLE}${body}`;

export function automationsPage(app: FastifyInstance, hub: Hub): void {
  const { automations, programs, devices, home, scenes } = hub.ops;

  bindPage(app, hub, HOME_AREA, {
    url: '/automations',
    title: 'Automations',
    summary: 'Web UI: the automations (administrators) with what starts each, their next fire and an enable switch each, and templates to start a new one from.',
    async build(ctx) {
      if (ctx.role !== 'admin') return adminsOnly;
      const [{ automations: list }, w] = await Promise.all([ctx.call<{ automations: AutomationSummary[] }>(automations.list), wordsFor(ctx, hub)]);
      const sorted = [...list].sort((a, b) => a.name.localeCompare(b.name));
      const item = (a: AutomationSummary) => html`<li class="auto" data-automation="${a.programId}"><div class="about"><h3 id="auto-${a.programId}"><a href="${BASE}/${a.programId}">${a.name}</a></h3>
<p class="when">${whenSummary(a.triggers, w)}${a.conditionCount > 0 ? html`<span class="muted">, if ${plural(a.conditionCount, 'condition')} ${a.conditionCount === 1 ? 'holds' : 'hold'}</span>` : ''}.</p>
<p>${stateBadge(a.enabled, !!a.pause)}${a.running ? html` <span class="badge run">Running</span>` : ''} <span class="muted">${a.nextFireAt ? html`Next: ${timeTag(a.nextFireAt, w)}` : 'No timed trigger'}</span></p>
${a.pause ? html`<p class="flash error">${a.pause.message}</p>` : ''}
<p class="links"><a href="${BASE}/${a.programId}">Open<span class="visually-hidden"> ${a.name}</span></a><a href="${BASE}/${a.programId}/traces">Traces<span class="visually-hidden"> of ${a.name}</span></a></p></div>
${enableSwitch({ id: a.programId, name: a.name, enabled: a.enabled, paused: !!a.pause }, ctx.csrf, BASE)}</li>`;
      return withStyle(html`<section aria-labelledby="templates"><h2 id="templates">New from a template</h2><div class="templates">${(Object.keys(TEMPLATES) as TemplateId[]).map(
        (id) => html`<article class="card" aria-labelledby="tpl-${id}"><h3 id="tpl-${id}">${TEMPLATES[id].title}</h3><p>${TEMPLATES[id].blurb}</p><p><a href="${BASE}/new/${id}" aria-describedby="tpl-${id}">Use this template</a></p></article>`,
      )}</div></section>
<section aria-labelledby="list"><h2 id="list">Your automations</h2>${sorted.length === 0 ? html`<p class="muted">No automations yet: start from a template above.</p>` : html`<ul class="autos">${sorted.map(item)}</ul>`}</section>`);
    },
  });

  bindPage(app, hub, HOME_AREA, {
    url: '/automations/new/:template',
    title: 'New automation',
    summary: 'Web UI: a template\'s form (motion-light, door-open, sunset-lights, button-scene): a few fields, saved as a canonical automation.',
    async build(ctx) {
      if (ctx.role !== 'admin') return adminsOnly;
      const template = (ctx.request.params as { template: string }).template;
      if (!isTemplate(template)) return html`<p>There is no template “${template}”. <a href="${BASE}">Back to the automations</a>.</p>`;
      const q = (ctx.request.query ?? {}) as Record<string, unknown>;
      const value = (name: string) => (typeof q[name] === 'string' ? (q[name] as string) : undefined);
      const { devices: all } = await ctx.call<{ devices: DeviceInfo[] }>(devices.list);
      const present = all.filter((d) => !d.removed).sort((a, b) => a.name.localeCompare(b.name));
      const lights = present.filter((d) => d.deviceClass === 'light');
      const t = TEMPLATES[template];
      let fields: Html;
      let ready = true;
      switch (template) {
        case 'motion-light': {
          const sensors = binarySensors(present, ['motion', 'occupancy']);
          ready = sensors.length > 0 && lights.length > 0;
          fields = html`${devicePicker('sensor', 'Motion sensor', 'When it detects motion, the light turns on.', sensors, value('sensor'), 'motion sensor')}
${devicePicker('light', 'Light', 'The light to turn on and off.', lights, value('light'), 'light')}
${minutesField('minutes', 'Minutes without motion', 'The light turns off once the sensor has seen no motion this long (1 to 59; it turns off after an hour of motion at the latest).', value('minutes') ?? '5', 1, 59)}`;
          break;
        }
        case 'door-open': {
          const sensors = binarySensors(present, ['contact']);
          ready = sensors.length > 0;
          fields = html`${devicePicker('sensor', 'Contact sensor', 'The door or window to watch.', sensors, value('sensor'), 'contact sensor')}
${minutesField('minutes', 'Minutes open', 'A warning when it has stayed open this long.', value('minutes') ?? '10', 1, 7 * 24 * 60)}`;
          break;
        }
        case 'sunset-lights': {
          const settings = await optionalPart(() => ctx.call<{ latitude: number | null }>(home.getSettings), () => true);
          const located = 'value' in settings && settings.value.latitude !== null;
          const chosen = new Set(listOf(q.lights));
          ready = lights.length > 0;
          fields = html`${located ? '' : html`<p class="notice" role="note" data-missing="location">The home has no location yet, so the hub cannot tell when the sun sets: <a href="/os/settings">set the home's location</a> first (the automation can be saved now and fires once it is set).</p>`}
${lights.length === 0
  ? html`<p class="notice" data-missing="lights">No light yet: <a href="/os/add">add devices</a> first.</p>`
  : html`<fieldset><legend>Lights to turn on</legend>${lights.map((l) => html`<label class="inline"><input type="checkbox" name="lights" value="${l.id}"${chosen.has(l.id) ? html` checked` : ''}> ${l.name}${offline(l)}</label>`)}</fieldset>`}
${minutesField('offset', 'Minutes from sunset', 'Negative for before sunset, positive for after (−360 to 360; 0 is at sunset).', value('offset') ?? '0', -360, 360)}`;
          break;
        }
        case 'button-scene': {
          const buttons = present.filter((d) => d.deviceClass === 'button');
          const part = await optionalPart(() => ctx.call<{ scenes: SceneInfo[] }>(scenes.listScenes), () => true);
          const sceneList = 'value' in part ? [...part.value.scenes].sort((a, b) => a.name.localeCompare(b.name)) : [];
          const byId = new Map(all.map((d) => [d.id, d.name]));
          ready = buttons.length > 0 && sceneList.length > 0;
          const press = value('press') ?? 'single';
          fields = html`${devicePicker('button', 'Button', 'The button to listen to.', buttons, value('button'), 'button')}
<label for="press">Press</label><select id="press" name="press">${(['single', 'double', 'long'] as const).map((p) => html`<option value="${p}"${p === press ? html` selected` : ''}>${capitalised(PRESS_WORDS[p])}</option>`)}</select>
${sceneList.length === 0
  ? html`<p class="notice" data-missing="scenes">No scene is known yet: scenes come from devices that offer them (a hub or bridge), once they are added.</p>`
  : html`<label for="scene">Scene</label><select id="scene" name="scene" required><option value="">Choose a scene</option>${sceneList.map((s) => html`<option value="${s.id}"${s.id === value('scene') ? html` selected` : ''}>${s.name} (${byId.get(s.deviceId) ?? s.deviceId})</option>`)}</select>`}`;
          break;
        }
      }
      return withStyle(html`<p><a href="${BASE}">← Automations</a></p><section aria-labelledby="tpl"><h2 id="tpl">${t.title}</h2><p>${t.blurb}</p>
<form method="post" action="${BASE}/new/${template}" class="stack">${csrfField(ctx.csrf)}
<label for="name">Name</label><input id="name" name="name" required maxlength="200" value="${value('name') ?? t.name}">
${fields}
<button${ready ? '' : html` disabled`}>Create automation</button></form></section>`);
    },
  });

  bindPage(app, hub, HOME_AREA, {
    url: '/automations/:id',
    title: 'Automation',
    summary: 'Web UI: one automation in words (when, if, then), its enable switch, a test run, and its newest traces.',
    async build(ctx) {
      if (ctx.role !== 'admin') return adminsOnly;
      const id = (ctx.request.params as { id: string }).id;
      const [program, w] = await Promise.all([ctx.call<ProgramView>(programs.get, { text: { params: { id } } }), wordsFor(ctx, hub, { programs: true, scenes: true })]);
      const triggers = program.triggers ?? [];
      if (triggers.length === 0) return html`<h2>${program.name}</h2><p>This program has no triggers, so it is not an automation: <a href="/os/programs/${program.id}">open it with the programs</a>.</p>`;
      const { traces } = await ctx.call<{ traces: Run[] }>(automations.traces, { json: { id, limit: 5 } });
      const conditions = program.conditions ?? [];
      const yaml = programAsYaml(program) !== undefined;
      const paused = !!program.pause;
      const enabled = program.enabled !== false;
      return withStyle(html`<p><a href="${BASE}">← Automations</a></p>
<h2 id="name">${program.name}</h2>${program.description ? html`<p>${named(program.description, w)}</p>` : ''}
<div class="row" style="align-items:center;gap:.6rem 1rem">${stateBadge(enabled, paused)}${program.running ? html`<span class="badge run">Running</span>` : ''}${enableSwitch({ id, name: program.name, enabled, paused }, ctx.csrf, `${BASE}/${id}`)}
<form method="post" action="${BASE}/${id}/test">${csrfField(ctx.csrf)}<button class="secondary" aria-describedby="test-hint">Run a test now</button></form></div>
<p class="muted" id="test-hint">A test run starts as if its first trigger fired: the conditions are checked, then the steps run for real.</p>
${paused ? html`<p class="flash error">${program.pause!.message}</p>` : ''}
<p class="muted">${program.nextFireAt ? html`Next fire: ${timeTag(program.nextFireAt, w)}. ` : ''}${modeWords(program.mode ?? 'single', program.max)}</p>
<section class="readout" aria-labelledby="when"><h3 id="when">When</h3>${triggers.length === 1 ? html`<p>${capitalised(triggerWords(triggers[0]!, w))}</p>` : html`<p>Any of these:</p><ul>${triggers.map((t) => html`<li>${triggerWords(t, w)}</li>`)}</ul>`}</section>
<section class="readout" aria-labelledby="if"><h3 id="if">If</h3>${conditions.length === 0 ? html`<p class="muted">No conditions: it runs whenever a trigger fires.</p>` : html`<p>${conditions.length === 1 ? 'This holds:' : 'All of these hold:'}</p><ul>${conditions.map((c) => conditionItem(c, w))}</ul>`}</section>
<section class="readout" aria-labelledby="then"><h3 id="then">Then</h3>${program.steps.length === 0 ? html`<p class="muted">No steps.</p>` : html`<ol>${program.steps.map((s) => stepItem(s, w))}</ol>`}</section>
<section aria-labelledby="newest"><h2 id="newest">Newest traces</h2>${traces.length === 0 ? html`<p class="muted">No traces yet: none of its triggers has fired.</p>` : html`<ul class="traces">${traces.map((r) => traceItem(r, id, program, w))}</ul>`}
<p class="links"><a href="${BASE}/${id}/traces">All traces</a><a href="${BASE}/${id}/traces?notable=1">Only those that failed or did not run</a>${yaml ? html`<a href="/os/programs/${id}">Edit as YAML</a>` : ''}</p></section>`);
    },
  });

  bindPage(app, hub, HOME_AREA, {
    url: '/automations/:id/traces',
    title: 'Traces',
    summary: 'Web UI: an automation\'s traces, newest first; `notable=1` shows only those that failed or did not run.',
    async build(ctx) {
      if (ctx.role !== 'admin') return adminsOnly;
      const id = (ctx.request.params as { id: string }).id;
      const notable = ['1', 'true'].includes(String((ctx.request.query as Record<string, unknown>).notable ?? ''));
      const [program, w, { traces }] = await Promise.all([
        ctx.call<ProgramView>(programs.get, { text: { params: { id } } }),
        wordsFor(ctx, hub),
        ctx.call<{ traces: Run[] }>(automations.traces, { json: { id, ...(notable ? { notable: true } : {}) } }),
      ]);
      const link = (on: boolean, href: string, label: string) => (on ? html`<a href="${href}" aria-current="page">${label}</a>` : html`<a href="${href}">${label}</a>`);
      return withStyle(html`<p><a href="${BASE}/${id}">← ${program.name}</a></p><section aria-labelledby="trace-list"><h2 id="trace-list">${program.name}</h2>
<p class="filter" role="group" aria-label="Which traces">${link(!notable, `${BASE}/${id}/traces`, 'All traces')}${link(notable, `${BASE}/${id}/traces?notable=1`, 'Only those that failed or did not run')}</p>
${traces.length === 0 ? html`<p class="muted">${notable ? 'None failed or did not run.' : 'No traces yet: none of its triggers has fired.'}</p>` : html`<ul class="traces">${traces.map((r) => traceItem(r, id, program, w))}</ul>`}</section>`);
    },
  });

  bindPage(app, hub, HOME_AREA, {
    url: '/automations/:id/traces/:runId',
    title: 'Trace',
    summary: 'Web UI: one trace as a timeline: what triggered it, each condition with its result, each step with its status and time, the variables, and why it did not run.',
    async build(ctx) {
      if (ctx.role !== 'admin') return adminsOnly;
      const { id, runId } = ctx.request.params as { id: string; runId: string };
      const [run, w] = await Promise.all([ctx.call<Run>(automations.trace, { text: { params: { runId } } }), wordsFor(ctx, hub, { programs: true, scenes: true })]);
      const programPart = await optionalPart(() => ctx.call<ProgramView>(programs.get, { text: { params: { id: run.programId } } }), (err) => err.kind === 'not_found');
      const program = 'value' in programPart ? programPart.value : undefined;
      const title = program?.name ?? run.programId;
      if (run.programId !== id) return html`<p>This trace is of another automation: <a href="${BASE}/${run.programId}/traces/${run.id}">open it there</a>.</p>`;
      const tone = STATUS[run.status].tone;
      return withStyle(html`<p><a href="${BASE}/${id}/traces">← Traces of ${title}</a></p><h2>${title}</h2>
<p>${statusBadge(run.status)} <span class="muted">${timeTag(run.startedAt, w)}${run.finishedAt !== undefined && run.finishedAt > run.startedAt ? ` · took ${elapsed(run.finishedAt - run.startedAt)}` : ''}</span></p>
<p class="why${tone === 'bad' ? ' bad' : ''}" data-why>${whyWords(run, program, w)}</p>
<section aria-labelledby="timeline"><h2 id="timeline">Timeline</h2><ol class="timeline">
${triggerEntry(run, w)}
${conditionsEntry(run.conditions, program, w)}
${stepsEntry(run, program, w)}
<li class="${tone === 'run' ? '' : tone}"><h3>${run.status === 'running' ? 'Still running' : 'End'}</h3><p>${statusBadge(run.status)}${run.finishedAt !== undefined ? html` at ${timeTag(run.finishedAt, w)}` : ''}</p>${run.reason && run.status !== 'not_passed' && run.status !== 'skipped' ? html`<p>${named(run.reason, w)}</p>` : ''}${run.resumedFrom ? html`<p class="muted">It continues <a href="${BASE}/${id}/traces/${run.resumedFrom}">a run the hub stopped</a>.</p>` : ''}</li>
</ol></section>
<section aria-labelledby="variables"><h2 id="variables">Variables</h2>${variablesList(run.variables)}</section>`);
    },
  });

  bindAreaForm(app, hub, HOME_AREA, {
    url: '/automations/new/:template',
    summary: 'Web UI form: create an automation from a template (motion-light, door-open, sunset-lights, button-scene); saved with programs.save as canonical JSON.',
    operation: programs.save,
    input: (f, p) => {
      const template = p.template ?? '';
      if (!isTemplate(template)) throw invalid('Template', `“${template}” is not one of ${Object.keys(TEMPLATES).join(', ')}`);
      const device = (deviceId: string, label: string, cls: string) => {
        if (!deviceId) throw invalid(label, 'must be chosen');
        const found = hub.devices.registry.find(deviceId);
        if (!found || found.removed) throw invalid(label, 'is not a device the hub knows');
        if (hub.devices.model(found).deviceClass !== cls) throw invalid(label, `is not a ${cls.replace('_', ' ')}`);
        return { id: found.id, name: found.name };
      };
      const sceneIds = () => new Set(hub.scenes.list().map((s) => s.id));
      return { json: templateProgram(template, f, device, sceneIds) };
    },
    back: (p, f) => {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(f)) for (const one of listOf(v)) if (['name', 'sensor', 'light', 'lights', 'minutes', 'offset', 'button', 'press', 'scene'].includes(k)) query.append(k, one.slice(0, 200));
      const q = query.toString();
      return `${BASE}/new/${isTemplate(p.template ?? '') ? p.template : 'motion-light'}${q ? `?${q}` : ''}`;
    },
    doneUrl: (r) => `${BASE}/${(r as Program).id}`,
    done: (r) => `Automation “${(r as Program).name}” created.`,
  });

  // Back to the page the switch was on: the area's one rule for a `next`, kept to the automations.
  const backTo = (f: Record<string, unknown>) => {
    const next = nextWithin(HOME_AREA, text(f, 'next'));
    return next.startsWith(BASE) ? next : BASE;
  };
  const switches = [
    { to: 'enable', operation: automations.enable, summary: 'Web UI form: enable an automation (its triggers fire again; lifts a runaway pause).' },
    { to: 'disable', operation: automations.disable, summary: 'Web UI form: disable an automation (its triggers no longer fire; it still runs by hand).' },
  ] as const;
  for (const { to, operation, summary } of switches) {
    bindAreaForm(app, hub, HOME_AREA, {
      url: `/automations/:id/${to}`,
      summary,
      operation,
      input: (_f, p) => ({ json: { id: p.id } }),
      back: (_p, f) => backTo(f),
      done: (r) => `${(r as AutomationSummary).name} is ${to}d.`,
    });
  }
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/automations/:id/test',
    summary: 'Web UI form: run an automation now as if its first trigger fired (automations.test); shows the trace.',
    operation: automations.test,
    input: (_f, p) => ({ json: { id: p.id } }),
    back: (p) => `${BASE}/${p.id}`,
    doneUrl: (r) => `${BASE}/${(r as ProgramRun).programId}/traces/${(r as ProgramRun).id}`,
    done: (r) => `Test run: ${STATUS[(r as ProgramRun).status].words.toLowerCase()}.`,
  });
}

function modeWords(mode: string, max: number | undefined): string {
  switch (mode) {
    case 'restart':
      return 'A new trigger while it runs starts it again from the top.';
    case 'queued':
      return `A new trigger while it runs waits its turn (at most ${max ?? 10} waiting).`;
    case 'parallel':
      return `A new trigger while it runs starts another run beside it (at most ${max ?? 10} at once).`;
    default:
      return 'A new trigger while it runs is skipped.';
  }
}

function triggerEntry(run: Run, w: Words): Html {
  const t: TriggerData | undefined = run.triggered;
  if (!t) return html`<li><h3>Started</h3><p>${capitalised(run.trigger === 'manual' ? 'by hand' : `by ${run.trigger}`)}, at ${timeTag(run.startedAt, w)}.</p></li>`;
  const { description: _d, at: _a, ...data } = t;
  return html`<li data-entry="trigger"><h3>Triggered</h3><p data-trigger-description>${capitalised(named(t.description, w))}</p><p class="muted">${timeTag(t.at, w)}${t.type === 'test' ? ' · a test run' : ''}</p>
<details><summary>Trigger data</summary><dl class="vars">${Object.entries(data).map(([k, v]) => html`<dt>trigger.${k}</dt><dd><code>${JSON.stringify(v)}</code></dd>`)}</dl></details></li>`;
}

function conditionsEntry(results: ConditionResult[] | undefined, program: ProgramView | undefined, w: Words): Html {
  if (!results || results.length === 0) {
    const none = (program?.conditions ?? []).length === 0;
    return html`<li><h3>Conditions</h3><p class="muted">${none ? 'None: it runs whenever a trigger fires.' : 'Not checked (a test run that skipped them, or a run by hand).'}</p></li>`;
  }
  const failed = results.some((r) => !r.result);
  return html`<li class="${failed ? 'bad' : 'ok'}" data-entry="conditions"><h3>Conditions</h3><ul class="results">${results.map((r) => {
    const condition = program ? conditionAt(program.conditions ?? [], r.path) : undefined;
    const depth = r.path.split('.conditions.').length - 1;
    return html`<li class="${depth > 0 ? 'nest' : ''}" style="${depth > 1 ? `padding-left:${depth * 1.2}rem` : ''}" data-condition="${r.path}" data-result="${r.result ? 'true' : 'false'}"><span class="mark ${r.result ? 'ok' : 'bad'}" aria-hidden="true">${r.result ? '✓' : '✗'}</span><span class="visually-hidden">${r.result ? 'Held:' : 'Did not hold:'}</span> ${condition ? capitalised(conditionWords(condition, w)) : `${pathWords(r.path, 'Condition')} (${r.type})`}${r.detail ? html`<br><span class="muted">${named(r.detail, w)}</span>` : ''}</li>`;
  })}</ul></li>`;
}

const STEP_MARK = { succeeded: '✓', failed: '✗', skipped: '–' } as const;

function stepsEntry(run: Run, program: ProgramView | undefined, w: Words): Html {
  if (run.status === 'not_passed' || run.status === 'skipped') return html`<li class="warn"><h3>Steps</h3><p class="muted">None ran.</p></li>`;
  const results = [...run.steps].sort((a, b) => scriptOrder(a.path, b.path));
  // A step a cancellation stopped is recorded as failed; the run was not.
  const failed = run.status === 'failed' || (run.status !== 'cancelled' && results.some((r) => r.status === 'failed'));
  const item = (r: StepResult) => {
    const step = program ? stepAt(program.steps, r.path) : undefined;
    const depth = r.path.split('.').filter((s) => /^\d+$/.test(s)).length - 1;
    const cancelled = r.status === 'failed' && r.error?.code === 'CANCELLED';
    return html`<li data-step="${r.path}" data-status="${r.status}"${depth > 0 ? html` style="padding-left:${depth * 1.2}rem"` : ''}><span class="mark ${r.status === 'succeeded' ? 'ok' : r.status === 'failed' && !cancelled ? 'bad' : ''}" aria-hidden="true">${cancelled ? '–' : STEP_MARK[r.status]}</span> <strong>${capitalised(pathWords(r.path, 'step'))}</strong>: ${r.label ? `${r.label}: ` : ''}${step ? stepWords(step, w) : r.type}
<br><span class="muted">${r.status === 'succeeded' ? 'Done' : cancelled ? 'Cancelled' : r.status === 'failed' ? 'Failed' : 'Skipped'}, ${timeTag(r.startedAt, w)}, took ${elapsed(r.finishedAt - r.startedAt)}</span>${r.error && !cancelled ? html`<br><span class="flash error" style="display:inline-block;margin:.2rem 0;padding:.2rem .5rem">${r.error.code}: ${named(r.error.message, w)}</span>` : ''}</li>`;
  };
  const waiting = run.status === 'running' && run.checkpoint ? run.checkpoint : undefined;
  return html`<li class="${failed ? 'bad' : results.length > 0 ? 'ok' : ''}" data-entry="steps"><h3>Steps</h3>${results.length === 0 && !waiting ? html`<p class="muted">${run.status === 'running' ? 'The first step is running.' : 'No step ran.'}</p>` : html`<ul class="results">${results.map(item)}</ul>`}
${waiting ? html`<p><span class="mark" aria-hidden="true">…</span> Waiting at ${pathWords(waiting.path, 'step')}${program && stepAt(program.steps, waiting.path) ? ` (${stepWords(stepAt(program.steps, waiting.path)!, w)})` : ''}, until ${timeTag(waiting.until, w)} at the latest.</p>` : ''}</li>`;
}

function variablesList(variables: Record<string, unknown> | undefined): Html {
  const entries = Object.entries(variables ?? {});
  if (entries.length === 0) return html`<p class="muted">No variables were set.</p>`;
  return html`<dl class="vars">${entries.map(([k, v]) => html`<dt>${k}</dt><dd><code>${JSON.stringify(v, null, 1)}</code></dd>`)}</dl>`;
}
