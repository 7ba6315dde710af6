/**
 * Import of a Home Assistant automation, as Home Assistant writes it in YAML (automations.yaml, or
 * the automation editor's "Edit in YAML"), into the hub's canonical automation input: the triggers
 * and conditions of automation-model.ts and the steps of model.ts, durations in milliseconds.
 *
 * Both syntaxes are read, mixed as Home Assistant allows: the current one (`triggers:` with
 * `trigger: state`, `conditions:`, `actions:` with `action: light.turn_on`) and the older one
 * (`trigger:` with `platform: state`, `condition:`, `action:` with `service:`); one item may stand
 * where a list is expected.
 *
 * Entity ids are the hub's own, as the hub protocol's LIST_ENTITIES lists them: the caller's resolver
 * gives the device behind each. Anything that does not map (templates, device and area targets, a
 * trigger platform or service the hub has no counterpart for, a service data field the hub's command
 * would drop…) is refused with its YAML path and the reason, as AUTOMATION_NOT_MAPPED, and nothing
 * is imported: an automation that silently does less than it says is worse than one the user
 * rewrites knowingly. YAML syntax errors, unknown tags and alias bombs are YAML_ERROR.
 *
 * Pure (no I/O). The caller validates the result with the canonical schemas.
 */
import { checkYamlNesting, yamlError } from './yaml-guard.js';
import { parseDocument, visit, type ScalarTag } from 'yaml';
import { DomainError } from '../../platform/errors.js';
import { ACTIONS, type AbstractAction } from '../devices/actions.js';
import { listEntityDomains, serviceAction, splitEntityId } from '../graph/entities.js';
import { AUTOMATION_LIMITS, type Condition, type FieldMatch, type FieldValue, type Trigger } from './automation-model.js';
import { programErrors } from './errors.js';
import { cronProblem, PROGRAM_LIMITS } from './limits.js';
import type { Step } from './model.js';

export interface EntityTarget {
  deviceId: string;
  domain: string;
  deviceClass?: string;
}

/** entityId → the hub device behind it (as LIST_ENTITIES lists them), or undefined when unknown. Scene entities: `sceneId` set instead. */
export type EntityResolver = (entityId: string) => (EntityTarget & { sceneId?: string }) | undefined;

export interface ImportedAutomation {
  name: string;
  description?: string;
  mode?: 'single' | 'restart' | 'queued' | 'parallel';
  max?: number;
  triggers: unknown[];
  conditions: unknown[];
  steps: unknown[];
  variables?: Record<string, unknown>;
}

/** True when a parsed YAML document looks like a Home Assistant automation: it has `triggers` or `trigger`, or `actions`/`action` at the top (and no `steps`). */
export function looksLikeHomeAssistant(doc: unknown): boolean {
  // automations.yaml is a list of automations: one copied from it comes as a list of one.
  const automation = Array.isArray(doc) && doc.length === 1 ? doc[0] : doc;
  if (!isRecord(automation) || Object.hasOwn(automation, 'steps')) return false;
  return ['triggers', 'trigger', 'actions', 'action'].some((key) => Object.hasOwn(automation, key));
}

/** Parses and maps; throws AUTOMATION_NOT_MAPPED naming the YAML path (e.g. `triggers[1].platform`, `actions[0].data.rgb_color`) and why, or YAML_ERROR. Nothing is half-imported: it either returns the whole automation or throws. */
export function importHomeAssistantAutomation(text: string, resolve: EntityResolver): ImportedAutomation {
  const root = parseYaml(text);
  refuseHomeAssistantTags(root, '', 0);
  if (Array.isArray(root)) {
    if (root.length !== 1) notMapped(DOCUMENT, `is a list of ${root.length} automations; import them one at a time`);
    return new Importer(resolve).automation(root[0], '[0]');
  }
  return new Importer(resolve).automation(root, '');
}

// ---------------------------------------------------------------------------------------------
// YAML
// ---------------------------------------------------------------------------------------------

/** Alias expansions allowed in one document: anchors are for reuse, not for multiplying it. */
const MAX_ALIAS_COUNT = 50;
/** Levels of the document; an automation needs far fewer, and the mapping recurses per level. */
const MAX_DOCUMENT_DEPTH = 64;
const DOCUMENT = '(document)';

/** A value under one of Home Assistant's own YAML tags, kept so that its path can be named. */
class HomeAssistantTag {
  constructor(
    readonly tag: string,
    readonly source: string,
  ) {}
}

const TAG_REFUSALS: Record<string, string> = {
  '!secret': 'reads secrets.yaml, which the hub does not have: write the value itself',
  '!input': 'is a blueprint input: import the automation the blueprint made, with its inputs filled in',
  '!env_var': "reads one of Home Assistant's environment variables: write the value itself",
  '!include': 'includes another file, which the import does not read: paste its content here',
};
const INCLUDE_TAGS = ['!include', '!include_dir_list', '!include_dir_named', '!include_dir_merge_list', '!include_dir_merge_named'];
const HOME_ASSISTANT_TAGS: ScalarTag[] = [...new Set([...Object.keys(TAG_REFUSALS), ...INCLUDE_TAGS])].map((tag) => ({
  tag,
  resolve: (source: string) => new HomeAssistantTag(tag, source),
}));

/**
 * The document as plain data. Aliases are expanded by `toJS` with a small `maxAliasCount`, so a
 * billion-laughs document fails at once instead of being built; the length and the nesting are
 * capped first.
 */
function parseYaml(text: string): unknown {
  if (text.length > PROGRAM_LIMITS.maxYamlLength) throw yamlError(text, 0, `the document is longer than ${PROGRAM_LIMITS.maxYamlLength} characters`);
  checkYamlNesting(text);
  // YAML 1.2, as the hub's own format: `on`, `off`, `yes` stay text and "07:30" a time, as Home
  // Assistant users mean them. Merge keys (`<<: *base`) are Home Assistant's (PyYAML's) too.
  const doc = parseDocument(text, { version: '1.2', merge: true, uniqueKeys: true, prettyErrors: false, customTags: HOME_ASSISTANT_TAGS });
  const error = doc.errors[0];
  if (error) {
    const message = error.message.split('\n')[0]?.replace(/\s+at line \d+, column \d+:?$/, '') ?? 'syntax error';
    throw yamlError(text, error.pos[0], `YAML syntax error: ${message}`);
  }
  const unknownTag = doc.warnings.find((w) => w.code === 'TAG_RESOLVE_FAILED');
  if (unknownTag) throw yamlError(text, unknownTag.pos[0], `${unknownTag.message.split('\n')[0] ?? 'unknown tag'} (the import reads plain YAML)`);
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    if (!(err instanceof ReferenceError)) throw err;
    let offset = 0;
    visit(doc, {
      Alias(_key, node) {
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    throw yamlError(text, offset, `the aliases expand too far (at most ${MAX_ALIAS_COUNT} alias expansions): ${err.message}`);
  }
}

/** Refuses Home Assistant's tags (`!secret`, `!include`, `!input`…) at their path, and documents nested too deep. */
function refuseHomeAssistantTags(value: unknown, path: string, depth: number): void {
  if (depth > MAX_DOCUMENT_DEPTH) notMapped(path || DOCUMENT, `is nested deeper than ${MAX_DOCUMENT_DEPTH} levels`);
  if (value instanceof HomeAssistantTag) {
    const reason = TAG_REFUSALS[value.tag] ?? TAG_REFUSALS['!include'];
    notMapped(path || DOCUMENT, `${value.tag} ${value.source} ${reason}`);
  }
  if (Array.isArray(value)) value.forEach((item, i) => refuseHomeAssistantTags(item, at(path, i), depth + 1));
  else if (isRecord(value)) for (const [key, item] of Object.entries(value)) refuseHomeAssistantTags(item, at(path, key), depth + 1);
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;
type TriggerOf<T extends Trigger['type']> = Extract<Trigger, { type: T }>;
type StepOf<T extends Step['type']> = Extract<Step, { type: T }>;
type LeafCondition<T extends 'state' | 'numeric' | 'time' | 'sun'> = Extract<Condition, { type: T }>;

/** A value of the document and where it is. */
interface Item {
  value: unknown;
  path: string;
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof HomeAssistantTag);
}

const has = (obj: Json, key: string): boolean => Object.hasOwn(obj, key);
/** A key given with a value: Home Assistant reads `key:` with nothing as absent. */
const given = (obj: Json, key: string): boolean => has(obj, key) && obj[key] !== null && obj[key] !== undefined;

function at(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

function notMapped(path: string, problem: string): never {
  throw programErrors.AUTOMATION_NOT_MAPPED({ path, problem }, { details: { path, problem } });
}

const TEMPLATE = "is a Home Assistant template, which does not map: the hub does not run Jinja ({{ … }}); write the value itself";
const isTemplate = (value: unknown): boolean => typeof value === 'string' && /\{\{|\{%|\{#/.test(value);

function noTemplate(value: unknown, path: string): void {
  if (isTemplate(value)) notMapped(path, TEMPLATE);
}

/** Refuses a template anywhere inside a value (service data), at its exact path. */
function noTemplates(value: unknown, path: string): void {
  if (Array.isArray(value)) value.forEach((item, i) => noTemplates(item, at(path, i)));
  else if (isRecord(value)) for (const [key, item] of Object.entries(value)) noTemplates(item, at(path, key));
  else noTemplate(value, path);
}

/** A list, one item standing for a list of one, or nothing. */
function itemsOf(value: unknown, path: string): Item[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.map((item, i) => ({ value: item, path: at(path, i) }));
  return [{ value, path }];
}

/** `enabled: false` items are skipped, as Home Assistant skips them. */
function isDisabled(item: Item): boolean {
  if (!isRecord(item.value) || !has(item.value, 'enabled')) return false;
  const enabled = item.value.enabled;
  if (typeof enabled !== 'boolean') notMapped(at(item.path, 'enabled'), 'must be true or false (a template does not map)');
  return !enabled;
}

const enabledItems = (value: unknown, path: string): Item[] => itemsOf(value, path).filter((item) => !isDisabled(item));

function record(value: unknown, path: string, what: string): Json {
  if (!isRecord(value)) notMapped(path, `${what} must be a map (key: value lines)`);
  return value;
}

/** Why a key Home Assistant knows does not map; any other unexpected key gets a plain refusal. */
const KEY_REFUSALS: Record<string, string> = {
  continue_on_error: 'continue_on_error does not map: in the hub a failed step fails the run',
  device_id: "device ids are Home Assistant's own; target the entities (entity_id) as the hub lists them (LIST_ENTITIES)",
  area_id: 'areas do not map; target the entities (entity_id) as the hub lists them (LIST_ENTITIES)',
  floor_id: 'floors do not map; target the entities (entity_id) as the hub lists them (LIST_ENTITIES)',
  label_id: 'labels do not map; target the entities (entity_id) as the hub lists them (LIST_ENTITIES)',
  value_template: TEMPLATE,
  wait_template: TEMPLATE,
  response_variable: 'service responses do not map: the hub keeps no response variables',
  variables: 'trigger variables do not map',
  trigger_variables: 'trigger variables do not map',
  not_from: 'not_from does not map: name the states it may come from in `from`',
  not_to: 'not_to does not map: name the states it may go to in `to`',
  for_each: 'repeat for_each does not map: use count, while or until',
  use_blueprint: 'blueprints do not map: import the automation the blueprint made, with its inputs filled in',
  event_data: 'event data does not map: the hub matches no Home Assistant event data',
  context: 'event contexts (user ids) do not map',
  encoding: 'MQTT payload encodings do not map: the hub matches payloads as UTF-8 text',
  transition: 'transitions do not map: the hub switches lights at once',
};

function onlyKeys(obj: Json, path: string, allowed: readonly string[], what: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) notMapped(at(path, key), KEY_REFUSALS[key] ?? `"${key}" in ${what} does not map to the hub (it reads ${allowed.join(', ')})`);
  }
}

function text(value: unknown, path: string, what: string, maxLength = 2000): string {
  noTemplate(value, path);
  const out = typeof value === 'number' ? String(value) : value;
  if (typeof out !== 'string' || !out.trim()) notMapped(path, `must be ${what}`);
  if (out.length > maxLength) notMapped(path, `is longer than ${maxLength} characters`);
  return out;
}

function bool(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') notMapped(path, 'must be true or false (a template does not map)');
  return value;
}

const NUMBER_TEXT = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;
const numberOf = (value: unknown): number | undefined => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && NUMBER_TEXT.test(value) ? Number(value) : undefined;
  return n !== undefined && Number.isFinite(n) ? n : undefined;
};

function numeric(value: unknown, path: string, what = 'a number'): number {
  noTemplate(value, path);
  const n = numberOf(value);
  if (n === undefined) notMapped(path, `must be ${what}`);
  return n;
}

function integer(value: unknown, path: string, min: number, max: number): number {
  const n = numeric(value, path, 'a whole number');
  if (!Number.isInteger(n) || n < min || n > max) notMapped(path, `must be a whole number from ${min} to ${max}`);
  return n;
}

/** A threshold (`above`, `below`): a number; Home Assistant's comparison with another entity does not map. */
function threshold(value: unknown, path: string): number {
  noTemplate(value, path);
  if (typeof value === 'string' && numberOf(value) === undefined) notMapped(path, `compares with the entity ${value}, which does not map: give a number`);
  return numeric(value, path);
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

function formatMs(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

const DURATION_UNITS: Record<string, number> = { days: 86_400_000, hours: 3_600_000, minutes: 60_000, seconds: 1000, milliseconds: 1 };
const DURATION_TEXT = /^\s*([-+])?(\d+):(\d{1,2})(?::(\d{1,2}(?:\.\d+)?))?\s*$/;

/**
 * Milliseconds of a duration in any of Home Assistant's forms: "HH:MM:SS" (or "HH:MM", signed for
 * offsets), `{days, hours, minutes, seconds, milliseconds}`, or a number of seconds.
 */
function durationMs(value: unknown, path: string, limits: { max: number; signed?: boolean; min?: number }): number {
  noTemplate(value, path);
  let ms: number | undefined;
  const match = typeof value === 'string' ? DURATION_TEXT.exec(value) : null;
  if (match) {
    const [, sign, hours, minutes, seconds] = match;
    ms = (Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds ?? 0)) * 1000 * (sign === '-' ? -1 : 1);
  } else if (isRecord(value)) {
    ms = 0;
    for (const [unit, amount] of Object.entries(value)) {
      const factor = DURATION_UNITS[unit];
      if (factor === undefined) notMapped(at(path, unit), `is not a unit of a duration (${Object.keys(DURATION_UNITS).join(', ')})`);
      ms += numeric(amount, at(path, unit)) * factor;
    }
  } else {
    const seconds = numberOf(value);
    if (seconds !== undefined) ms = seconds * 1000;
  }
  if (ms === undefined || !Number.isFinite(ms)) notMapped(path, 'must be a duration: "HH:MM:SS", {hours, minutes, seconds} or a number of seconds');
  ms = Math.round(ms);
  if (ms < 0 && !limits.signed) notMapped(path, 'must not be negative');
  if (Math.abs(ms) > limits.max) notMapped(path, `is longer than the hub allows (${formatMs(limits.max)}${limits.signed ? ' either way' : ''})`);
  if (limits.min !== undefined && ms < limits.min) notMapped(path, `must be at least ${formatMs(limits.min)}`);
  return ms;
}

const TIME_OF_DAY = /^\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*$/;

/** "HH:MM" from Home Assistant's "HH:MM" or "HH:MM:SS"; the hub's times are to the minute. */
function timeOfDay(value: unknown, path: string): string {
  noTemplate(value, path);
  if (typeof value === 'string' && splitEntityId(value.trim()) && /^[a-z_]+\.[a-z0-9_]+$/.test(value.trim())) {
    notMapped(path, `reads the time from ${value.trim()}, which does not map: give a fixed time ("07:30")`);
  }
  if (isRecord(value)) notMapped(path, 'a time from an entity with an offset does not map: give a fixed time ("07:30")');
  const match = typeof value === 'string' ? TIME_OF_DAY.exec(value) : null;
  if (!match || Number(match[1]) > 23 || Number(match[2]) > 59 || Number(match[3] ?? 0) > 59) notMapped(path, 'must be a time "HH:MM" or "HH:MM:SS" (24 h)');
  if (match[3] !== undefined && match[3] !== '00') notMapped(path, `has seconds (:${match[3]}), which do not map: the hub's times are to the minute`);
  return `${(match[1] as string).padStart(2, '0')}:${match[2] as string}`;
}

const WEEKDAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

function weekdays(value: unknown, path: string): number[] {
  const items = itemsOf(value, path);
  if (items.length === 0) notMapped(path, 'must name at least one day (mon … sun)');
  const days = items.map((item) => {
    const day = typeof item.value === 'string' ? WEEKDAYS[item.value.trim().toLowerCase()] : undefined;
    if (day === undefined) notMapped(item.path, 'must be a weekday: mon, tue, wed, thu, fri, sat or sun');
    return day;
  });
  return unique(days).sort((a, b) => a - b);
}

// ---------------------------------------------------------------------------------------------
// Entities and their readings
// ---------------------------------------------------------------------------------------------

interface Resolved extends EntityTarget {
  entityId: string;
  sceneId?: string;
  path: string;
}

const ON_OFF_DOMAINS = new Set(['light', 'switch', 'fan', 'input_boolean', 'remote']);
const COVER_STATES = ['open', 'closed', 'opening', 'closing'];
const HVAC_MODES = ['off', 'heat', 'cool', 'heat_cool', 'auto', 'dry', 'fan_only'];
const STATE_WORDS: Record<string, string> = {
  light: 'on, off',
  switch: 'on, off',
  fan: 'on, off',
  input_boolean: 'on, off',
  remote: 'on, off',
  binary_sensor: 'on, off',
  lock: 'locked, unlocked, jammed',
  cover: COVER_STATES.join(', '),
  climate: HVAC_MODES.join(', '),
  media_player: 'playing, paused, idle, on, off',
};
/** The reading a state trigger without `to`/`from` watches: what the entity's state shows. */
const PRIMARY_FIELDS: Record<string, string> = {
  light: 'on',
  switch: 'on',
  fan: 'on',
  input_boolean: 'on',
  remote: 'on',
  binary_sensor: 'detected',
  lock: 'locked',
  cover: 'coverState',
  climate: 'hvacMode',
  sensor: 'value',
};

/** One state word of an entity domain as the reading field and value(s) the hub compares. */
function stateWord(domain: string, raw: unknown, path: string): { field: string; values: FieldValue[] } {
  noTemplate(raw, path);
  const word = typeof raw === 'boolean' ? (raw ? 'on' : 'off') : typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined;
  if (word === undefined) notMapped(path, 'must be a state (text)');
  if (word === 'unavailable') notMapped(path, '"unavailable" maps only alone (`to: unavailable`), to an availability trigger or condition');
  if (word === 'unknown') notMapped(path, '"unknown" does not map: the hub compares known readings');
  if (ON_OFF_DOMAINS.has(domain) && (word === 'on' || word === 'off')) return { field: 'on', values: [word === 'on'] };
  switch (domain) {
    case 'binary_sensor':
      if (word === 'on' || word === 'off') return { field: 'detected', values: [word === 'on'] };
      break;
    case 'lock':
      if (word === 'locked' || word === 'unlocked') return { field: 'locked', values: [word === 'locked'] };
      if (word === 'jammed') return { field: 'jammed', values: [true] };
      break;
    case 'cover':
      if (COVER_STATES.includes(word)) return { field: 'coverState', values: [word] };
      break;
    case 'climate':
      if (HVAC_MODES.includes(word)) return { field: 'hvacMode', values: [word] };
      break;
    case 'media_player':
      if (word === 'playing' || word === 'paused') return { field: 'playback', values: [word] };
      // The hub shows a stopped player as Home Assistant's idle (entities.ts).
      if (word === 'idle') return { field: 'playback', values: ['idle', 'stopped'] };
      if (word === 'on' || word === 'off') return { field: 'on', values: [word === 'on'] };
      break;
    case 'sensor':
      return { field: 'value', values: [numberOf(word) ?? word] };
  }
  notMapped(path, `"${word}" is not a state of ${domain} entities the hub reads${STATE_WORDS[domain] ? ` (${STATE_WORDS[domain]})` : ''}`);
}

function single(values: FieldValue[]): FieldMatch {
  return values.length === 1 ? (values[0] as FieldValue) : values;
}

/** A state or a list of states (any of them) of one domain, as one field and match. */
function stateMatch(domain: string, raw: unknown, path: string): { field: string; is: FieldMatch } {
  const words = Array.isArray(raw) ? raw.map((item, i) => stateWord(domain, item, at(path, i))) : [stateWord(domain, raw, path)];
  const first = words[0];
  if (!first) notMapped(path, 'must name at least one state');
  const mixed = words.findIndex((w) => w.field !== first.field);
  if (mixed >= 0) notMapped(at(path, mixed), `reads ${words[mixed]?.field}, the states before it ${first.field}: one trigger or condition compares one reading; make two`);
  return { field: first.field, is: single(unique(words.flatMap((w) => w.values))) };
}

const isUnavailable = (value: unknown): boolean => value === 'unavailable' || (Array.isArray(value) && value.length === 1 && value[0] === 'unavailable');

interface AttributeSpec {
  domains: readonly string[];
  field: string;
  /** Home Assistant's unit to the hub's: brightness 0–255 → 0–100 %, volume 0–1 → 0–100. */
  scale?: number;
  /** A word, not a number. */
  text?: boolean;
}

const ATTRIBUTES: Record<string, AttributeSpec> = {
  brightness: { domains: ['light'], field: 'brightness', scale: 100 / 255 },
  current_temperature: { domains: ['climate'], field: 'currentTemperature' },
  temperature: { domains: ['climate'], field: 'targetTemperature' },
  current_humidity: { domains: ['climate'], field: 'humidity' },
  hvac_action: { domains: ['climate'], field: 'hvacAction', text: true },
  current_position: { domains: ['cover'], field: 'position' },
  current_tilt_position: { domains: ['cover'], field: 'tilt' },
  percentage: { domains: ['fan'], field: 'percentage' },
  volume_level: { domains: ['media_player'], field: 'volume', scale: 100 },
};

function attributeOf(domain: string, raw: unknown, path: string, numericOnly: boolean): AttributeSpec {
  noTemplate(raw, path);
  const spec = typeof raw === 'string' && Object.hasOwn(ATTRIBUTES, raw) ? ATTRIBUTES[raw] : undefined;
  if (!spec || !spec.domains.includes(domain) || (numericOnly && spec.text)) {
    const known = Object.entries(ATTRIBUTES)
      .filter(([, s]) => s.domains.includes(domain) && !(numericOnly && s.text))
      .map(([name]) => name);
    notMapped(path, `attribute ${JSON.stringify(raw)} of ${domain} entities does not map${known.length ? ` (the hub reads ${known.join(', ')})` : ' (the hub reads no attributes of them)'}`);
  }
  return spec;
}

/** An attribute value in the hub's unit; equal values are rounded as the hub's readings are. */
function attributeValue(spec: AttributeSpec, raw: unknown, path: string, exact: boolean): FieldValue {
  if (spec.text) return text(raw, path, 'a word', 100).trim().toLowerCase();
  const n = numeric(raw, path);
  if (spec.scale === undefined) return n;
  return exact ? Math.round(n * spec.scale) : round2(n * spec.scale);
}

function attributeMatch(spec: AttributeSpec, raw: unknown, path: string): FieldMatch {
  const values = Array.isArray(raw) ? raw.map((item, i) => attributeValue(spec, item, at(path, i), true)) : [attributeValue(spec, raw, path, true)];
  if (values.length === 0) notMapped(path, 'must name at least one value');
  return single(unique(values));
}

const UNKNOWN_ENTITY = (entityId: string): string => `unknown entity ${entityId}: entity ids are the hub's own, as the hub protocol's LIST_ENTITIES lists them`;

// ---------------------------------------------------------------------------------------------
// Services
// ---------------------------------------------------------------------------------------------

const DOMAIN_SERVICES = new Map(listEntityDomains().map((d) => [d.domain, d]));
/** Home Assistant's homeassistant.* services on a cover: it opens and closes. */
const COVER_ON_OFF: Record<string, string> = { turn_on: 'open_cover', turn_off: 'close_cover' };
const WORD_FIELDS = new Set(['hvac_mode', 'direction']);

/** Home Assistant's light.turn_on data in the hub's terms: brightness 0–255 → brightness_pct, mireds → kelvin. */
function lightTurnOnData(data: Json, dataPath: string): Json {
  const out: Json = { ...data };
  if (has(out, 'brightness')) {
    if (has(out, 'brightness_pct')) notMapped(at(dataPath, 'brightness'), 'give brightness or brightness_pct, not both');
    const brightness = numeric(out.brightness, at(dataPath, 'brightness'));
    if (brightness < 0 || brightness > 255) notMapped(at(dataPath, 'brightness'), "must be from 0 to 255 (Home Assistant's scale)");
    delete out.brightness;
    out.brightness_pct = Math.round((brightness * 100) / 255);
  } else if (has(out, 'brightness_pct')) {
    const pct = numeric(out.brightness_pct, at(dataPath, 'brightness_pct'));
    if (pct < 0 || pct > 100) notMapped(at(dataPath, 'brightness_pct'), 'must be from 0 to 100');
  }
  for (const key of ['color_temp', 'kelvin']) {
    if (!has(out, key)) continue;
    if (has(out, 'color_temp_kelvin')) notMapped(at(dataPath, key), `give ${key} or color_temp_kelvin, not both`);
    const value = numeric(out[key], at(dataPath, key));
    if (value <= 0) notMapped(at(dataPath, key), 'must be more than 0');
    delete out[key];
    out.color_temp_kelvin = key === 'color_temp' ? Math.round(1_000_000 / value) : value;
  }
  if (has(out, 'color_temp_kelvin') && has(out, 'hs_color')) notMapped(at(dataPath, 'hs_color'), 'give a colour temperature or hs_color, not both');
  return out;
}

/** serviceAction's errors (missing or bad data, an unknown service) at the HA path. */
function callService(domain: string, service: string, data: Json, servicePath: string, dataPath: string): AbstractAction {
  try {
    const action = serviceAction(domain, service, data);
    if (!action) notMapped(servicePath, `${domain}.${service} does not map to a device command`);
    return action;
  } catch (err) {
    if (err instanceof DomainError && err.code !== programErrors.AUTOMATION_NOT_MAPPED.code) {
      const field = (err.details as { field?: unknown } | undefined)?.field;
      notMapped(typeof field === 'string' && field.startsWith('data.') ? at(dataPath, field.slice('data.'.length)) : servicePath, err.message);
    }
    throw err;
  }
}

/** The standard command of an abstract action: its name and, for a value, the parameter ACTIONS names. */
function commandStep(deviceId: string, action: AbstractAction): Step {
  const spec = ACTIONS[action.action];
  const { action: command, ...fields } = action as AbstractAction & Record<string, unknown>;
  const step: StepOf<'command'> = { type: 'command', deviceId, command };
  if ('value' in action && action.value !== undefined) step.params = { [spec.param ?? 'value']: action.value };
  else if (spec.value === 'params') step.params = fields;
  return step;
}

// ---------------------------------------------------------------------------------------------
// The import
// ---------------------------------------------------------------------------------------------

const TOP_KEYS = [
  'id', 'alias', 'description', 'mode', 'max', 'max_exceeded', 'initial_state', 'trace', 'variables',
  'triggers', 'trigger', 'conditions', 'condition', 'actions', 'action',
];
const MODES = ['single', 'restart', 'queued', 'parallel'] as const;

/**
 * The longest a hub step waits (an hour). Home Assistant waits for a trigger without end when
 * `wait_for_trigger` has no timeout; the hub's waits end, so such a wait gets this one.
 */
const MAX_WAIT_MS = PROGRAM_LIMITS.maxTimeoutMs;
/** Variable names the hub takes, and the ones it keeps for itself (steps.ts). */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const RESERVED_VARIABLES = ['trigger', 'this', 'now'];
/** Trigger kinds a wait may take in the hub: device, hub and MQTT ones (steps.ts). */
const WAIT_TRIGGER_TYPES: ReadonlySet<Trigger['type']> = new Set(['state', 'numeric', 'button', 'availability', 'hub', 'mqtt']);
const MAX_CONDITION_DEPTH = 16;

/** Templates the hub has an equivalent for; every other template is refused. */
const SIMPLE_TEMPLATES: Record<string, string> = {
  'trigger.id': '{{ trigger.id }}',
  // The hub's trigger names the device, not the entity: the value is the device id.
  'trigger.entity_id': '{{ trigger.deviceId }}',
  // The new value of the reading the trigger compares (true for a light that went on), not HA's word.
  'trigger.to_state.state': '{{ trigger.to }}',
};

class Importer {
  /** A Home Assistant trigger id (given, or its position) → the ids of the hub triggers it became. */
  private readonly triggerIds = new Map<string, string[]>();
  /** True when some hub trigger's id differs from what `{{ trigger.id }}` read in Home Assistant. */
  private triggerIdsChanged = false;

  constructor(private readonly resolve: EntityResolver) {}

  automation(value: unknown, path: string): ImportedAutomation {
    const doc = record(value, path || DOCUMENT, 'an automation');
    if (has(doc, 'use_blueprint')) notMapped(at(path, 'use_blueprint'), KEY_REFUSALS.use_blueprint as string);
    onlyKeys(doc, path, TOP_KEYS, 'an automation');
    const triggersKey = this.oneOf(doc, path, 'triggers', 'trigger');
    const conditionsKey = this.oneOf(doc, path, 'conditions', 'condition');
    const actionsKey = this.oneOf(doc, path, 'actions', 'action');

    let name: string | undefined;
    if (given(doc, 'alias')) name = text(doc.alias, at(path, 'alias'), 'a name (text)', 200);
    else if (given(doc, 'id')) name = text(doc.id, at(path, 'id'), 'an id (text)', 200);
    if (name === undefined) notMapped(at(path, 'alias'), 'missing: an automation needs an alias (or an id) for its name');
    const out: ImportedAutomation = { name, mode: 'single', triggers: [], conditions: [], steps: [] };
    if (given(doc, 'description')) out.description = text(doc.description, at(path, 'description'), 'text');
    if (given(doc, 'mode')) {
      const mode = doc.mode;
      if (!MODES.includes(mode as (typeof MODES)[number])) notMapped(at(path, 'mode'), `must be one of ${MODES.join(', ')}`);
      out.mode = mode as (typeof MODES)[number];
    }
    if (given(doc, 'max')) {
      if (out.mode !== 'queued' && out.mode !== 'parallel') notMapped(at(path, 'max'), 'goes with mode queued or parallel');
      out.max = integer(doc.max, at(path, 'max'), 1, AUTOMATION_LIMITS.maxModeMax);
    }
    // `initial_state: false` starts the automation disabled, which an import does not carry: the
    // hub saves it enabled. Disabled automations are refused rather than imported armed.
    if (given(doc, 'initial_state') && !bool(doc.initial_state, at(path, 'initial_state'))) {
      notMapped(at(path, 'initial_state'), 'an automation that starts disabled does not map: import it, then disable it in the hub');
    }
    // max_exceeded (a log level) and trace (how many traces to keep) are Home Assistant's logging
    // settings: the hub records skipped runs and traces on its own terms, so they are dropped.

    if (!triggersKey) notMapped(at(path, 'triggers'), 'missing: an automation needs at least one trigger');
    const triggers = this.triggerList(doc[triggersKey], at(path, triggersKey), 'automation');
    if (triggers.length === 0) notMapped(at(path, triggersKey), 'needs at least one enabled trigger');
    out.triggers = triggers;
    if (given(doc, 'variables')) out.variables = this.variables(doc.variables, at(path, 'variables'));
    if (conditionsKey) out.conditions = this.conditions(doc[conditionsKey], at(path, conditionsKey), 0);
    if (!actionsKey) notMapped(at(path, 'actions'), 'missing: an automation needs actions');
    out.steps = this.steps(doc[actionsKey], at(path, actionsKey), 0);
    return out;
  }

  /** The key used of the current and the older spelling (`triggers` / `trigger`), not both. */
  private oneOf(doc: Json, path: string, current: string, older: string): string | undefined {
    if (has(doc, current) && has(doc, older)) notMapped(at(path, older), `give ${current} or ${older}, not both`);
    return has(doc, current) ? current : has(doc, older) ? older : undefined;
  }

  // ----- entities -----

  private entity(raw: unknown, path: string): Resolved {
    const entityId = text(raw, path, 'an entity id (<domain>.<object_id>)', 300).trim();
    if (entityId === 'all' || entityId === 'none') notMapped(path, `entity_id: ${entityId} does not map: name the entities`);
    if (!splitEntityId(entityId)) notMapped(path, `"${entityId}" is not an entity id (<domain>.<object_id>)`);
    const target = this.resolve(entityId);
    if (!target) notMapped(path, UNKNOWN_ENTITY(entityId));
    return { ...target, entityId, path };
  }

  /** One entity id, a list, or Home Assistant's comma-separated text. */
  private entities(raw: unknown, path: string): Resolved[] {
    if (raw === undefined || raw === null) notMapped(path, 'missing: name the entities (entity_id)');
    const items = typeof raw === 'string' && raw.includes(',') && !isTemplate(raw) ? raw.split(',').map((id) => ({ value: id, path })) : itemsOf(raw, path);
    if (items.length === 0) notMapped(path, 'must name at least one entity');
    return items.map((item) => this.entity(item.value, item.path));
  }

  /** An entity whose reading a trigger or condition compares. */
  private readable(entity: Resolved): Resolved {
    if (entity.sceneId !== undefined) notMapped(entity.path, `${entity.entityId} is a scene, which has no state to compare`);
    // A reading entity of another device (sensor.<thermostat>_current_temperature) names the device
    // but not which of its readings: the device's own entity with an attribute does.
    if (entity.domain === 'sensor' && entity.deviceClass !== undefined && entity.deviceClass !== 'sensor') {
      notMapped(entity.path, `${entity.entityId} is a reading of a ${entity.deviceClass} device: compare the device's own entity with an attribute (e.g. climate.x, attribute: current_temperature)`);
    }
    return entity;
  }

  // ----- triggers -----

  /**
   * Maps a trigger list. One Home Assistant trigger may become several (a list of times, entities
   * of different kinds); hub trigger ids must be unique where Home Assistant's may repeat, so a
   * repeated id gets a suffix (`motion_2`) and `condition: trigger` on it names all of them.
   */
  private triggerList(value: unknown, path: string, use: 'automation' | 'wait'): Trigger[] {
    const items = itemsOf(value, path);
    const ids = items.map((item) => (isRecord(item.value) && given(item.value, 'id') ? text(item.value.id, at(item.path, 'id'), 'an id (text)', 90) : undefined));
    const explicit = new Set(ids.filter((id): id is string => id !== undefined));
    const used = new Set<string>();
    const out: Trigger[] = [];
    items.forEach((item, index) => {
      if (isDisabled(item)) return;
      const id = ids[index];
      const mapped = this.trigger(record(item.value, item.path, 'a trigger'), item.path);
      const notForWait = use === 'wait' ? mapped.find((t) => !WAIT_TRIGGER_TYPES.has(t.type)) : undefined;
      if (notForWait) {
        const kindKey = has(item.value as Json, 'trigger') ? 'trigger' : 'platform';
        notMapped(at(item.path, kindKey), `a hub wait takes device, hub and MQTT triggers, not ${notForWait.type} ones`);
      }
      const hubIds: string[] = [];
      for (const trigger of mapped) {
        if (id !== undefined) {
          let hubId = id;
          for (let n = 2; used.has(hubId) || (hubId !== id && explicit.has(hubId)); n++) hubId = `${id}_${n}`;
          used.add(hubId);
          trigger.id = hubId;
        }
        // Without an id, a trigger's id is its position, in Home Assistant as in the hub.
        hubIds.push(trigger.id ?? String(out.length));
        out.push(trigger);
      }
      if (use === 'automation') {
        const key = id ?? String(index);
        this.triggerIds.set(key, [...(this.triggerIds.get(key) ?? []), ...hubIds]);
      }
    });
    if (use === 'automation') this.triggerIdsChanged = [...this.triggerIds].some(([key, hubIds]) => hubIds.length !== 1 || hubIds[0] !== key);
    if (out.length > AUTOMATION_LIMITS.maxTriggers) notMapped(path, `makes ${out.length} triggers; the hub allows ${AUTOMATION_LIMITS.maxTriggers}`);
    return out;
  }

  private trigger(obj: Json, path: string): Trigger[] {
    if (has(obj, 'trigger') && has(obj, 'platform')) notMapped(at(path, 'platform'), 'give trigger or platform, not both');
    const kindKey = has(obj, 'trigger') ? 'trigger' : has(obj, 'platform') ? 'platform' : undefined;
    if (!kindKey) notMapped(path, 'a trigger needs `trigger:` (or the older `platform:`), e.g. trigger: state');
    const kind = obj[kindKey];
    const common = [kindKey, 'id', 'enabled', 'alias'];
    switch (kind) {
      case 'state':
        return this.stateTrigger(obj, path, common);
      case 'numeric_state':
        return this.numericTrigger(obj, path, common);
      case 'time':
        return this.timeTrigger(obj, path, common);
      case 'time_pattern':
        return [this.timePatternTrigger(obj, path, common)];
      case 'sun':
        return [this.sunTrigger(obj, path, common)];
      case 'homeassistant':
        onlyKeys(obj, path, [...common, 'event'], 'a homeassistant trigger');
        if (obj.event !== 'start') notMapped(at(path, 'event'), obj.event === 'shutdown' ? "the hub has no trigger on its own shutdown" : 'must be start');
        return [{ type: 'hub', event: 'started' }];
      case 'event': {
        onlyKeys(obj, path, [...common, 'event_type'], 'an event trigger');
        const types = itemsOf(obj.event_type, at(path, 'event_type'));
        if (types.length === 0) notMapped(at(path, 'event_type'), 'missing: the event type');
        for (const t of types) {
          noTemplate(t.value, t.path);
          if (t.value !== 'homeassistant_start') notMapped(t.path, `Home Assistant's event ${JSON.stringify(t.value)} does not map: the hub maps only homeassistant_start (its own start)`);
        }
        return [{ type: 'hub', event: 'started' }];
      }
      case 'mqtt': {
        // qos is how the broker delivers to Home Assistant; the hub subscribes on its own terms.
        onlyKeys(obj, path, [...common, 'topic', 'payload', 'qos'], 'an mqtt trigger');
        const trigger: TriggerOf<'mqtt'> = { type: 'mqtt', topic: text(obj.topic, at(path, 'topic'), 'a topic', 500) };
        if (given(obj, 'payload')) {
          const payload = obj.payload;
          noTemplate(payload, at(path, 'payload'));
          if (typeof payload !== 'string' && typeof payload !== 'number' && typeof payload !== 'boolean') notMapped(at(path, 'payload'), 'must be text');
          trigger.payload = String(payload);
        }
        return [trigger];
      }
      case 'webhook': {
        // local_only and the methods are how Home Assistant exposes its webhook; the hub's webhook
        // is a POST wherever the hub's HTTP is reachable.
        onlyKeys(obj, path, [...common, 'webhook_id', 'allowed_methods', 'local_only'], 'a webhook trigger');
        if (given(obj, 'allowed_methods')) {
          const methods = itemsOf(obj.allowed_methods, at(path, 'allowed_methods')).map((m) => String(m.value).toUpperCase());
          if (!methods.includes('POST')) notMapped(at(path, 'allowed_methods'), "the hub's webhooks take POST: allow POST");
        }
        if (given(obj, 'local_only')) bool(obj.local_only, at(path, 'local_only'));
        // Home Assistant's webhook_id is dropped: the hub generates its own unguessable id at save,
        // so callers of the old URL must be pointed at the new one.
        return [{ type: 'webhook' }];
      }
      default:
        noTemplate(kind, at(path, kindKey));
        notMapped(
          at(path, kindKey),
          `${JSON.stringify(kind)} triggers do not map to the hub (it maps state, numeric_state, time, time_pattern, sun, homeassistant, event homeassistant_start, mqtt and webhook)`,
        );
    }
  }

  private stateTrigger(obj: Json, path: string, common: string[]): Trigger[] {
    onlyKeys(obj, path, [...common, 'entity_id', 'from', 'to', 'attribute', 'for'], 'a state trigger');
    const entities = this.entities(obj.entity_id, at(path, 'entity_id')).map((e) => this.readable(e));
    const forMs = given(obj, 'for') ? durationMs(obj.for, at(path, 'for'), { max: AUTOMATION_LIMITS.maxForMs }) : undefined;
    // `to:` with nothing is Home Assistant's "any state, not attribute changes": a watched field.
    const to = given(obj, 'to') ? obj.to : undefined;
    const from = given(obj, 'from') ? obj.from : undefined;

    if (isUnavailable(to) || (to === undefined && isUnavailable(from))) {
      if (given(obj, 'attribute')) notMapped(at(path, 'attribute'), 'an availability trigger (unavailable) reads no attribute');
      if (to !== undefined && from !== undefined) notMapped(at(path, 'from'), 'does not map with to: unavailable: the hub\'s availability trigger fires on going offline from any state');
      const trigger: TriggerOf<'availability'> = { type: 'availability', deviceIds: unique(entities.map((e) => e.deviceId)), to: to !== undefined ? 'offline' : 'online' };
      if (forMs !== undefined) trigger.forMs = forMs;
      return [trigger];
    }

    // Entities of different kinds compare different fields: one hub trigger per field and values.
    const groups = new Map<string, TriggerOf<'state'>>();
    for (const entity of entities) {
      let field: string;
      let fromMatch: FieldMatch | undefined;
      let toMatch: FieldMatch | undefined;
      if (given(obj, 'attribute')) {
        const spec = attributeOf(entity.domain, obj.attribute, at(path, 'attribute'), false);
        field = spec.field;
        if (from !== undefined) fromMatch = attributeMatch(spec, from, at(path, 'from'));
        if (to !== undefined) toMatch = attributeMatch(spec, to, at(path, 'to'));
      } else {
        const fromState = from === undefined ? undefined : stateMatch(entity.domain, from, at(path, 'from'));
        const toState = to === undefined ? undefined : stateMatch(entity.domain, to, at(path, 'to'));
        if (fromState && toState && fromState.field !== toState.field) {
          notMapped(at(path, 'to'), `reads ${toState.field} and "from" reads ${fromState.field}: a hub trigger compares one reading`);
        }
        const primary = PRIMARY_FIELDS[entity.domain];
        if (!toState && !fromState && !primary) notMapped(entity.path, `any change of a ${entity.domain} entity does not map: say which (to: or from:)`);
        field = toState?.field ?? fromState?.field ?? (primary as string);
        fromMatch = fromState?.is;
        toMatch = toState?.is;
      }
      const key = JSON.stringify([field, fromMatch ?? null, toMatch ?? null]);
      const group = groups.get(key);
      if (group) {
        if (!group.deviceIds.includes(entity.deviceId)) group.deviceIds.push(entity.deviceId);
        continue;
      }
      const trigger: TriggerOf<'state'> = { type: 'state', deviceIds: [entity.deviceId], field };
      if (fromMatch !== undefined) trigger.from = fromMatch;
      if (toMatch !== undefined) trigger.to = toMatch;
      if (forMs !== undefined) trigger.forMs = forMs;
      groups.set(key, trigger);
    }
    return [...groups.values()];
  }

  /** The numeric reading of an entity (its state for a sensor, else an attribute) and its scale. */
  private numericField(entity: Resolved, obj: Json, path: string): AttributeSpec {
    if (given(obj, 'attribute')) return attributeOf(entity.domain, obj.attribute, at(path, 'attribute'), true);
    if (entity.domain === 'sensor') return { domains: ['sensor'], field: 'value' };
    const attributes = Object.entries(ATTRIBUTES).filter(([, s]) => s.domains.includes(entity.domain) && !s.text).map(([name]) => name);
    notMapped(entity.path, `the state of a ${entity.domain} entity is not a number${attributes.length ? `: compare an attribute (${attributes.join(', ')})` : ''}`);
  }

  private range(obj: Json, path: string, spec: AttributeSpec): { above?: number; below?: number } {
    const out: { above?: number; below?: number } = {};
    const scale = (n: number) => (spec.scale === undefined ? n : round2(n * spec.scale));
    if (given(obj, 'above')) out.above = scale(threshold(obj.above, at(path, 'above')));
    if (given(obj, 'below')) out.below = scale(threshold(obj.below, at(path, 'below')));
    if (out.above === undefined && out.below === undefined) notMapped(path, 'needs above, below or both');
    return out;
  }

  private numericTrigger(obj: Json, path: string, common: string[]): Trigger[] {
    onlyKeys(obj, path, [...common, 'entity_id', 'attribute', 'above', 'below', 'for'], 'a numeric_state trigger');
    const entities = this.entities(obj.entity_id, at(path, 'entity_id')).map((e) => this.readable(e));
    const forMs = given(obj, 'for') ? durationMs(obj.for, at(path, 'for'), { max: AUTOMATION_LIMITS.maxForMs }) : undefined;
    const groups = new Map<string, TriggerOf<'numeric'>>();
    for (const entity of entities) {
      const spec = this.numericField(entity, obj, path);
      const group = groups.get(spec.field);
      if (group) {
        if (!group.deviceIds.includes(entity.deviceId)) group.deviceIds.push(entity.deviceId);
        continue;
      }
      // Home Assistant fires when the value crosses into the range, as the hub's numeric trigger.
      const trigger: TriggerOf<'numeric'> = { type: 'numeric', deviceIds: [entity.deviceId], field: spec.field, ...this.range(obj, path, spec) };
      if (forMs !== undefined) trigger.forMs = forMs;
      groups.set(spec.field, trigger);
    }
    return [...groups.values()];
  }

  private timeTrigger(obj: Json, path: string, common: string[]): Trigger[] {
    onlyKeys(obj, path, [...common, 'at', 'weekday'], 'a time trigger');
    const times = itemsOf(obj.at, at(path, 'at'));
    if (times.length === 0) notMapped(at(path, 'at'), 'missing: the time ("07:30")');
    const days = given(obj, 'weekday') ? weekdays(obj.weekday, at(path, 'weekday')) : undefined;
    return unique(times.map((t) => timeOfDay(t.value, t.path))).map((time): Trigger => ({
      type: 'time',
      timer: { kind: 'daily', time, ...(days ? { weekdays: days } : {}), enabled: true },
    }));
  }

  /**
   * A time pattern as a cron expression: `"/5"` (every fifth) → `*\/5`, `"*"` → `*`, a number → itself.
   * As in Home Assistant, units below the largest one given default to 0 (`hours: 7` → 07:00:00).
   */
  private timePatternTrigger(obj: Json, path: string, common: string[]): Trigger {
    onlyKeys(obj, path, [...common, 'hours', 'minutes', 'seconds'], 'a time_pattern trigger');
    const part = (key: string, max: number): string | undefined => {
      if (!given(obj, key)) return undefined;
      const raw = obj[key];
      const p = at(path, key);
      noTemplate(raw, p);
      if (raw === '*') return '*';
      if (typeof raw === 'string' && raw.trim().startsWith('/')) return `*/${integer(raw.trim().slice(1), p, 1, max)}`;
      return String(integer(raw, p, 0, max));
    };
    let hours = part('hours', 23);
    let minutes = part('minutes', 59);
    let seconds = part('seconds', 59);
    if (hours === undefined && minutes === undefined && seconds === undefined) notMapped(path, 'needs hours, minutes or seconds');
    if (minutes === undefined && hours !== undefined) minutes = '0';
    if (seconds === undefined && minutes !== undefined) seconds = '0';
    hours ??= '*';
    minutes ??= '*';
    seconds ??= '*';
    const expression = seconds === '0' ? `${minutes} ${hours} * * *` : `${seconds} ${minutes} ${hours} * * *`;
    const problem = cronProblem(expression);
    if (problem) notMapped(path, `does not make a usable schedule (${expression}): ${problem}`);
    return { type: 'time', timer: { kind: 'cron', expression, enabled: true } };
  }

  private sunTrigger(obj: Json, path: string, common: string[]): Trigger {
    onlyKeys(obj, path, [...common, 'event', 'offset'], 'a sun trigger');
    const event = obj.event;
    if (event !== 'sunrise' && event !== 'sunset') notMapped(at(path, 'event'), 'must be sunrise or sunset');
    const trigger: TriggerOf<'sun'> = { type: 'sun', event };
    if (given(obj, 'offset')) trigger.offsetMs = durationMs(obj.offset, at(path, 'offset'), { max: AUTOMATION_LIMITS.maxSunOffsetMs, signed: true });
    return trigger;
  }

  // ----- conditions -----

  private conditions(value: unknown, path: string, depth: number): Condition[] {
    if (depth > MAX_CONDITION_DEPTH) notMapped(path, `is nested too deeply (at most ${MAX_CONDITION_DEPTH} levels of conditions)`);
    const items = enabledItems(value, path);
    if (items.length > AUTOMATION_LIMITS.maxConditions) notMapped(path, `has ${items.length} conditions; the hub allows ${AUTOMATION_LIMITS.maxConditions}`);
    return items.map((item) => this.condition(item, depth));
  }

  private condition(item: Item, depth: number): Condition {
    const { path } = item;
    if (typeof item.value === 'string') notMapped(path, isTemplate(item.value) ? `template conditions do not map: ${TEMPLATE}` : 'a condition must be a map (condition: state …)');
    const obj = record(item.value, path, 'a condition');
    if (!has(obj, 'condition')) {
      // The shorthand `- or: [...]`, `- and: [...]`, `- not: [...]`.
      const group = ['and', 'or', 'not'].find((key) => has(obj, key));
      if (!group) notMapped(path, 'a condition needs `condition:` (state, numeric_state, time, sun, trigger, and, or, not)');
      onlyKeys(obj, path, [group, 'alias', 'enabled'], `an ${group} condition`);
      return this.group(group as 'and' | 'or' | 'not', obj[group], at(path, group), depth);
    }
    const kind = obj.condition;
    const common = ['condition', 'alias', 'enabled'];
    switch (kind) {
      case 'state':
        return this.stateCondition(obj, path, common);
      case 'numeric_state': {
        onlyKeys(obj, path, [...common, 'entity_id', 'attribute', 'above', 'below'], 'a numeric_state condition');
        const conditions = this.entities(obj.entity_id, at(path, 'entity_id')).map((entity): Condition => {
          const spec = this.numericField(this.readable(entity), obj, path);
          return { type: 'numeric', deviceId: entity.deviceId, field: spec.field, ...this.range(obj, path, spec) };
        });
        return conditions.length === 1 ? (conditions[0] as Condition) : { type: 'and', conditions };
      }
      case 'time': {
        onlyKeys(obj, path, [...common, 'after', 'before', 'weekday'], 'a time condition');
        const condition: LeafCondition<'time'> = { type: 'time' };
        if (given(obj, 'after')) condition.after = timeOfDay(obj.after, at(path, 'after'));
        if (given(obj, 'before')) condition.before = timeOfDay(obj.before, at(path, 'before'));
        if (given(obj, 'weekday')) condition.weekdays = weekdays(obj.weekday, at(path, 'weekday'));
        if (!condition.after && !condition.before && !condition.weekdays) notMapped(path, 'needs after, before or weekday');
        return condition;
      }
      case 'sun': {
        onlyKeys(obj, path, [...common, 'after', 'before', 'after_offset', 'before_offset'], 'a sun condition');
        const condition: LeafCondition<'sun'> = { type: 'sun' };
        for (const side of ['after', 'before'] as const) {
          const offsetKey = `${side}_offset`;
          if (!given(obj, side)) {
            if (given(obj, offsetKey)) notMapped(at(path, offsetKey), `goes with ${side}: sunrise or sunset`);
            continue;
          }
          const event = obj[side];
          if (event !== 'sunrise' && event !== 'sunset') notMapped(at(path, side), 'must be sunrise or sunset');
          const moment: { event: 'sunrise' | 'sunset'; offsetMs?: number } = { event };
          if (given(obj, offsetKey)) moment.offsetMs = durationMs(obj[offsetKey], at(path, offsetKey), { max: AUTOMATION_LIMITS.maxSunOffsetMs, signed: true });
          condition[side] = moment;
        }
        if (!condition.after && !condition.before) notMapped(path, 'needs after, before or both');
        return condition;
      }
      case 'and':
      case 'or':
      case 'not':
        onlyKeys(obj, path, [...common, 'conditions'], `an ${kind} condition`);
        return this.group(kind, obj.conditions, at(path, 'conditions'), depth);
      case 'trigger': {
        onlyKeys(obj, path, [...common, 'id'], 'a trigger condition');
        const ids = itemsOf(obj.id, at(path, 'id')).map((i) => text(i.value, i.path, 'a trigger id', 90));
        if (ids.length === 0) notMapped(at(path, 'id'), 'missing: the trigger id(s)');
        const conditions = unique(ids.flatMap((id) => this.triggerIds.get(id) ?? [id])).map((id): Condition => ({ type: 'trigger', id }));
        return conditions.length === 1 ? (conditions[0] as Condition) : { type: 'or', conditions };
      }
    }
    noTemplate(kind, at(path, 'condition'));
    if (kind === 'template') notMapped(at(path, 'condition'), `template conditions do not map: ${TEMPLATE}`);
    notMapped(at(path, 'condition'), `${JSON.stringify(kind)} conditions do not map to the hub (it maps state, numeric_state, time, sun, trigger, and, or, not)`);
  }

  private group(type: 'and' | 'or' | 'not', value: unknown, path: string, depth: number): Condition {
    const conditions = this.conditions(value, path, depth + 1);
    if (conditions.length === 0) notMapped(path, 'needs at least one condition');
    return { type, conditions };
  }

  private stateCondition(obj: Json, path: string, common: string[]): Condition {
    onlyKeys(obj, path, [...common, 'entity_id', 'state', 'attribute', 'for', 'match'], 'a state condition');
    if (!given(obj, 'state')) notMapped(at(path, 'state'), 'missing: the state to compare with');
    const forMs = given(obj, 'for') ? durationMs(obj.for, at(path, 'for'), { max: AUTOMATION_LIMITS.maxForMs }) : undefined;
    const statePath = at(path, 'state');
    const conditions = this.entities(obj.entity_id, at(path, 'entity_id')).map((e): Condition => {
      const entity = this.readable(e);
      let condition: LeafCondition<'state'>;
      if (isUnavailable(obj.state)) {
        if (given(obj, 'attribute')) notMapped(at(path, 'attribute'), 'an availability condition (unavailable) reads no attribute');
        condition = { type: 'state', deviceId: entity.deviceId, field: 'online', is: false };
      } else if (given(obj, 'attribute')) {
        const spec = attributeOf(entity.domain, obj.attribute, at(path, 'attribute'), false);
        condition = { type: 'state', deviceId: entity.deviceId, field: spec.field, is: attributeMatch(spec, obj.state, statePath) };
      } else {
        const { field, is } = stateMatch(entity.domain, obj.state, statePath);
        condition = { type: 'state', deviceId: entity.deviceId, field, is };
      }
      if (forMs !== undefined) condition.forMs = forMs;
      return condition;
    });
    if (conditions.length === 1) return conditions[0] as Condition;
    if (given(obj, 'match') && obj.match !== 'all' && obj.match !== 'any') notMapped(at(path, 'match'), 'must be all or any');
    return { type: obj.match === 'any' ? 'or' : 'and', conditions };
  }

  // ----- actions -----

  private steps(value: unknown, path: string, depth: number): Step[] {
    if (depth > PROGRAM_LIMITS.maxNesting) notMapped(path, `is nested too deeply (at most ${PROGRAM_LIMITS.maxNesting} levels of steps)`);
    return this.stepItems(enabledItems(value, path), depth);
  }

  private stepItems(items: Item[], depth: number): Step[] {
    const out: Step[] = [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as Item;
      if (!(isRecord(item.value) && has(item.value, 'condition'))) {
        out.push(...this.step(item, depth));
        continue;
      }
      // Home Assistant ends this sequence (not the run's outer ones) where a condition is false:
      // the rest of the list runs only when the consecutive conditions here all hold.
      const conditions: Condition[] = [];
      let label: string | undefined;
      let j = i;
      for (; j < items.length && isRecord(items[j]?.value) && has(items[j]?.value as Json, 'condition'); j++) {
        const condition = items[j] as Item;
        conditions.push(this.condition(condition, 0));
        const alias = (condition.value as Json).alias;
        if (label === undefined && alias !== undefined && alias !== null) label = text(alias, at(condition.path, 'alias'), 'text', 200);
      }
      const rest = items.slice(j);
      // A condition with nothing after it changes nothing.
      if (rest.length === 0) break;
      if (depth + 1 > PROGRAM_LIMITS.maxNesting) notMapped(item.path, `is nested too deeply (at most ${PROGRAM_LIMITS.maxNesting} levels of steps; each condition in a list opens one)`);
      const step: StepOf<'choose'> = { type: 'choose', choices: [{ conditions, steps: this.stepItems(rest, depth + 1) }] };
      if (label !== undefined) step.label = label;
      out.push(step);
      break;
    }
    return out;
  }

  private step(item: Item, depth: number): Step[] {
    const { path } = item;
    const obj = record(item.value, path, 'an action');
    const label = given(obj, 'alias') ? text(obj.alias, at(path, 'alias'), 'text', 200) : undefined;
    const steps = this.stepOfKind(obj, path, depth);
    if (label !== undefined) for (const step of steps) step.label = label;
    return steps;
  }

  private stepOfKind(obj: Json, path: string, depth: number): Step[] {
    const common = ['alias', 'enabled'];
    if (has(obj, 'action') || has(obj, 'service')) return this.serviceCall(obj, path);
    if (has(obj, 'delay')) {
      onlyKeys(obj, path, [...common, 'delay'], 'a delay');
      return [{ type: 'delay', ms: durationMs(obj.delay, at(path, 'delay'), { max: PROGRAM_LIMITS.maxDelayMs }) }];
    }
    if (has(obj, 'wait_for_trigger')) return [this.waitForTrigger(obj, path, common)];
    if (has(obj, 'choose')) {
      onlyKeys(obj, path, [...common, 'choose', 'default'], 'a choose');
      const choices = enabledItems(obj.choose, at(path, 'choose')).map((option) => {
        const o = record(option.value, option.path, 'a choose option');
        onlyKeys(o, option.path, ['conditions', 'sequence', 'alias', 'enabled'], 'a choose option');
        return { conditions: this.conditions(o.conditions, at(option.path, 'conditions'), 0), steps: this.steps(o.sequence, at(option.path, 'sequence'), depth + 1) };
      });
      if (choices.length === 0) notMapped(at(path, 'choose'), 'needs at least one option');
      if (choices.length > PROGRAM_LIMITS.maxBranches) notMapped(at(path, 'choose'), `has ${choices.length} options; the hub allows ${PROGRAM_LIMITS.maxBranches}`);
      const step: StepOf<'choose'> = { type: 'choose', choices };
      if (given(obj, 'default')) step.default = this.steps(obj.default, at(path, 'default'), depth + 1);
      return [step];
    }
    if (has(obj, 'if')) {
      onlyKeys(obj, path, [...common, 'if', 'then', 'else'], 'an if');
      if (!given(obj, 'then')) notMapped(at(path, 'then'), 'missing: the actions to run when the conditions hold');
      const step: StepOf<'choose'> = {
        type: 'choose',
        choices: [{ conditions: this.conditions(obj.if, at(path, 'if'), 0), steps: this.steps(obj.then, at(path, 'then'), depth + 1) }],
      };
      if (given(obj, 'else')) step.default = this.steps(obj.else, at(path, 'else'), depth + 1);
      return [step];
    }
    if (has(obj, 'repeat')) return [this.repeat(obj, path, common, depth)];
    if (has(obj, 'variables')) {
      onlyKeys(obj, path, [...common, 'variables'], 'a variables action');
      return [{ type: 'variables', variables: this.variables(obj.variables, at(path, 'variables')) }];
    }
    if (has(obj, 'stop')) {
      onlyKeys(obj, path, [...common, 'stop', 'error'], 'a stop');
      const step: StepOf<'stop'> = { type: 'stop' };
      if (given(obj, 'stop')) step.reason = text(obj.stop, at(path, 'stop'), 'a reason (text)', 500);
      if (given(obj, 'error') && bool(obj.error, at(path, 'error'))) step.error = true;
      return [step];
    }
    if (has(obj, 'parallel')) return [this.parallel(obj, path, common, depth)];
    if (has(obj, 'scene')) {
      onlyKeys(obj, path, [...common, 'scene', 'metadata'], 'a scene action');
      const entity = this.entity(obj.scene, at(path, 'scene'));
      if (entity.sceneId === undefined) notMapped(at(path, 'scene'), `${entity.entityId} is not a scene`);
      return [{ type: 'scene', sceneId: entity.sceneId }];
    }
    const refusals: Record<string, string> = {
      event: "firing Home Assistant events does not map: the hub has no event bus of Home Assistant's",
      wait_template: `wait_template ${TEMPLATE}`,
      device_id: "device actions do not map: device ids are Home Assistant's own; call a service on the entity (action: light.turn_on, target: entity_id)",
      sequence: 'a sequence action does not map: write its actions in place',
      set_conversation_response: 'conversation responses do not map',
    };
    const refused = Object.keys(refusals).find((key) => has(obj, key));
    if (refused) notMapped(at(path, refused), refusals[refused] as string);
    const first = Object.keys(obj).find((key) => !common.includes(key));
    notMapped(first ? at(path, first) : path, 'is not an action the import maps (action/service, delay, wait_for_trigger, choose, if, repeat, variables, stop, parallel, scene, condition)');
  }

  private waitForTrigger(obj: Json, path: string, common: string[]): Step {
    onlyKeys(obj, path, [...common, 'wait_for_trigger', 'timeout', 'continue_on_timeout'], 'a wait_for_trigger');
    const triggers = this.triggerList(obj.wait_for_trigger, at(path, 'wait_for_trigger'), 'wait');
    if (triggers.length === 0) notMapped(at(path, 'wait_for_trigger'), 'needs at least one enabled trigger');
    const continueOnTimeout = given(obj, 'continue_on_timeout') ? bool(obj.continue_on_timeout, at(path, 'continue_on_timeout')) : undefined;
    if (!given(obj, 'timeout')) {
      // Home Assistant would wait on and never run the rest: past the hub's longest wait (an hour)
      // the run stops there rather than going on as if the trigger had come.
      return { type: 'wait_for_trigger', triggers, timeoutMs: MAX_WAIT_MS, continueOnTimeout: false };
    }
    const step: StepOf<'wait_for_trigger'> = { type: 'wait_for_trigger', triggers, timeoutMs: durationMs(obj.timeout, at(path, 'timeout'), { max: MAX_WAIT_MS, min: 1 }) };
    if (continueOnTimeout !== undefined) step.continueOnTimeout = continueOnTimeout;
    return step;
  }

  private repeat(obj: Json, path: string, common: string[], depth: number): Step {
    onlyKeys(obj, path, [...common, 'repeat'], 'a repeat');
    const repeatPath = at(path, 'repeat');
    const r = record(obj.repeat, repeatPath, 'repeat');
    onlyKeys(r, repeatPath, ['count', 'while', 'until', 'sequence'], 'a repeat');
    const kinds = ['count', 'while', 'until'].filter((key) => given(r, key));
    if (kinds.length !== 1) notMapped(repeatPath, 'needs exactly one of count, while and until');
    if (!given(r, 'sequence')) notMapped(at(repeatPath, 'sequence'), 'missing: the actions to repeat');
    const step: StepOf<'repeat'> = { type: 'repeat', steps: this.steps(r.sequence, at(repeatPath, 'sequence'), depth + 1) };
    if (kinds[0] === 'count') step.count = integer(r.count, at(repeatPath, 'count'), 1, AUTOMATION_LIMITS.maxRepeat);
    else if (kinds[0] === 'while') step.while = this.conditions(r.while, at(repeatPath, 'while'), 0);
    else step.until = this.conditions(r.until, at(repeatPath, 'until'), 0);
    return step;
  }

  private parallel(obj: Json, path: string, common: string[], depth: number): Step {
    onlyKeys(obj, path, [...common, 'parallel'], 'a parallel');
    const branches = enabledItems(obj.parallel, at(path, 'parallel')).map((branch) => {
      if (isRecord(branch.value) && has(branch.value, 'sequence')) {
        onlyKeys(branch.value, branch.path, ['sequence', 'alias', 'enabled'], 'a parallel branch');
        return this.steps(branch.value.sequence, at(branch.path, 'sequence'), depth + 1);
      }
      return this.stepItems([branch], depth + 1);
    });
    if (branches.length === 0) notMapped(at(path, 'parallel'), 'needs at least one branch');
    if (branches.length > PROGRAM_LIMITS.maxBranches) notMapped(at(path, 'parallel'), `has ${branches.length} branches; the hub runs at most ${PROGRAM_LIMITS.maxBranches} at once`);
    return { type: 'parallel', branches };
  }

  /** The entity ids a service call targets, each with its path. */
  private serviceTargets(obj: Json, path: string, data: Json, dataPath: string): Item[] {
    const out: Item[] = [];
    if (has(obj, 'target')) {
      const targetPath = at(path, 'target');
      noTemplate(obj.target, targetPath);
      const target = obj.target === null ? {} : record(obj.target, targetPath, 'target');
      onlyKeys(target, targetPath, ['entity_id'], 'target');
      if (given(target, 'entity_id')) out.push({ value: target.entity_id, path: at(targetPath, 'entity_id') });
    }
    if (given(obj, 'entity_id')) out.push({ value: obj.entity_id, path: at(path, 'entity_id') });
    if (given(data, 'entity_id')) out.push({ value: data.entity_id, path: at(dataPath, 'entity_id') });
    for (const key of ['device_id', 'area_id', 'floor_id', 'label_id']) if (has(data, key)) notMapped(at(dataPath, key), KEY_REFUSALS[key] as string);
    return out;
  }

  /**
   * A service call: one command step per device, with the standard command of the abstract action
   * `serviceAction` makes of the service and its data. Several devices make a `parallel` step with
   * a branch each: Home Assistant calls the service once for all its entities, which act together,
   * and goes on when all are done; consecutive steps would make the last light wait for the others.
   */
  private serviceCall(obj: Json, path: string): Step[] {
    if (has(obj, 'action') && has(obj, 'service')) notMapped(at(path, 'service'), 'give action or service, not both');
    const serviceKey = has(obj, 'action') ? 'action' : 'service';
    // The UI's `metadata: {}` is its own bookkeeping; data_template is the old spelling of data.
    onlyKeys(obj, path, [serviceKey, 'target', 'entity_id', 'data', 'data_template', 'alias', 'enabled', 'metadata'], 'a service call');
    const servicePath = at(path, serviceKey);
    const name = text(obj[serviceKey], servicePath, 'a service (<domain>.<service>)', 200).trim();
    const match = /^([a-z0-9_]+)\.([a-z0-9_]+)$/.exec(name);
    if (!match) notMapped(servicePath, `"${name}" is not a service (<domain>.<service>, e.g. light.turn_on)`);
    const [, domain, service] = match as unknown as [string, string, string];
    if (has(obj, 'data') && has(obj, 'data_template')) notMapped(at(path, 'data_template'), 'give data or data_template, not both');
    const dataKey = has(obj, 'data_template') ? 'data_template' : 'data';
    const dataPath = at(path, dataKey);
    const data: Json = given(obj, dataKey) ? { ...record(obj[dataKey], dataPath, dataKey) } : {};
    noTemplates(data, dataPath);
    const targets = this.serviceTargets(obj, path, data, dataPath);
    delete data.entity_id;

    if (domain === 'notify' || (domain === 'persistent_notification' && service === 'create')) return [this.alert(domain, targets, data, dataPath)];
    if (targets.length === 0) notMapped(path, `${name} needs target.entity_id: the entities it acts on`);
    if (domain !== 'homeassistant' && domain !== 'scene' && !DOMAIN_SERVICES.has(domain)) notMapped(servicePath, `${name} does not map: the hub has no ${domain} entities`);

    const branches = new Map<string, Step[]>();
    for (const entity of targets.flatMap((t) => this.entities(t.value, t.path))) {
      if (entity.sceneId !== undefined) {
        if (service !== 'turn_on' || (domain !== 'scene' && domain !== 'homeassistant')) notMapped(entity.path, `${name} does not act on the scene ${entity.entityId} (scene.turn_on does)`);
        const extra = Object.keys(data)[0];
        if (extra !== undefined) notMapped(at(dataPath, extra), KEY_REFUSALS[extra] ?? 'does not map: the hub runs a scene as its device stored it');
        branches.set(`scene:${entity.sceneId}`, [{ type: 'scene', sceneId: entity.sceneId }]);
        continue;
      }
      if (domain === 'scene') notMapped(entity.path, `${entity.entityId} is not a scene`);
      let entityService = service;
      if (domain === 'homeassistant') {
        if (!['turn_on', 'turn_off', 'toggle'].includes(service)) notMapped(servicePath, `${name} does not map (homeassistant.turn_on, turn_off and toggle do)`);
        if (entity.domain === 'cover') entityService = COVER_ON_OFF[service] ?? notMapped(servicePath, `${name} does not map to a cover in the hub (turn_on opens it, turn_off closes it)`);
      } else if (entity.domain !== domain) {
        notMapped(entity.path, `${name} does not act on ${entity.entityId}, a ${entity.domain} entity`);
      }
      const steps = this.deviceActions(entity.domain, entityService, data, servicePath, dataPath).map((action) => commandStep(entity.deviceId, action));
      if (!branches.has(entity.deviceId)) branches.set(entity.deviceId, steps);
    }
    const all = [...branches.values()];
    if (all.length === 1) return all[0] as Step[];
    if (all.length > PROGRAM_LIMITS.maxBranches) notMapped(path, `acts on ${all.length} devices; the hub runs at most ${PROGRAM_LIMITS.maxBranches} at once (split the call)`);
    return [{ type: 'parallel', branches: all }];
  }

  /**
   * The abstract actions of a service on one device. serviceAction reads one of a light's
   * brightness, colour temperature and colour; Home Assistant sets them together, so each becomes
   * its own command (brightness first, which switches the light on at that level). Data fields the
   * hub's service does not read are refused rather than dropped.
   */
  private deviceActions(domain: string, service: string, data: Json, servicePath: string, dataPath: string): AbstractAction[] {
    const info = DOMAIN_SERVICES.get(domain);
    const spec = info?.services.find((s) => s.service === service);
    if (!info || !spec) {
      notMapped(servicePath, info ? `${domain}.${service} does not map: the hub's ${domain} entities take ${info.services.map((s) => s.service).join(', ') || 'no services'}` : `the hub has no ${domain} services`);
    }
    const isLightOn = domain === 'light' && service === 'turn_on';
    const fields = isLightOn ? lightTurnOnData(data, dataPath) : { ...data };
    const accepted = Object.keys(spec.data);
    for (const key of Object.keys(fields)) {
      if (!accepted.includes(key)) {
        notMapped(at(dataPath, key), KEY_REFUSALS[key] ?? `"${key}" does not map: the hub's ${domain}.${service} takes ${accepted.length ? accepted.join(', ') : 'no data'}`);
      }
      const n = numberOf(fields[key]);
      if (typeof fields[key] === 'string' && n !== undefined && !WORD_FIELDS.has(key)) fields[key] = n;
    }
    if (!isLightOn) return [callService(domain, service, fields, servicePath, dataPath)];
    const groups = [['brightness_pct'], ['color_temp_kelvin'], ['hs_color']]
      .map((keys) => Object.fromEntries(keys.filter((k) => has(fields, k)).map((k) => [k, fields[k]])))
      .filter((group) => Object.keys(group).length > 0);
    if (groups.length === 0) return [callService(domain, service, {}, servicePath, dataPath)];
    const actions: AbstractAction[] = [];
    for (const group of groups) {
      const action = callService(domain, service, group, servicePath, dataPath);
      actions.push(action);
      // Brightness 0 switches the light off, as in Home Assistant, and sets nothing else.
      if (action.action === 'turn_off') break;
    }
    return actions;
  }

  /** A notification as a hub alert: it goes to the hub's alert streams, the title before the message. */
  private alert(domain: string, targets: Item[], data: Json, dataPath: string): Step {
    const first = targets[0];
    if (first) notMapped(first.path, "notifications become hub alerts, which go to all the hub's alert streams: a notify target does not map");
    for (const key of ['target', 'data']) {
      if (has(data, key)) notMapped(at(dataPath, key), "per-recipient notify targets and data do not map: the hub's alerts go to all its alert streams");
    }
    // notification_id names Home Assistant's notification for dismissing; hub alerts have their own ids.
    onlyKeys(data, dataPath, ['message', 'title', ...(domain === 'persistent_notification' ? ['notification_id'] : [])], 'a notification');
    if (!given(data, 'message')) notMapped(at(dataPath, 'message'), 'missing: the message');
    const title = given(data, 'title') ? text(data.title, at(dataPath, 'title'), 'text', 200) : undefined;
    const message = text(data.message, at(dataPath, 'message'), 'text', title ? 2000 - title.length - 2 : 2000);
    return { type: 'alert', message: title ? `${title}: ${message}` : message, severity: 'info' };
  }

  // ----- variables -----

  private variables(value: unknown, path: string): Record<string, unknown> {
    const vars = record(value, path, 'variables');
    const names = Object.keys(vars);
    if (names.length > AUTOMATION_LIMITS.maxVariables) notMapped(path, `has ${names.length} variables; the hub allows ${AUTOMATION_LIMITS.maxVariables}`);
    for (const name of names) {
      if (!VARIABLE_NAME.test(name)) notMapped(at(path, name), 'is not a variable name the hub takes (letters, digits and _, not first a digit; at most 64)');
      if (RESERVED_VARIABLES.includes(name)) notMapped(at(path, name), `"${name}" is the hub's own name; choose another`);
    }
    return Object.fromEntries(names.map((name) => [name, this.variableValue(vars[name], at(path, name))]));
  }

  private variableValue(value: unknown, path: string): unknown {
    if (typeof value === 'string') return isTemplate(value) ? this.template(value, path) : value;
    if (Array.isArray(value)) return value.map((item, i) => this.variableValue(item, at(path, i)));
    if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.variableValue(item, at(path, key))]));
    return value;
  }

  private template(value: string, path: string): string {
    const expression = /^\s*\{\{\s*([a-z_.]+)\s*\}\}\s*$/.exec(value)?.[1];
    const mapped = expression !== undefined && Object.hasOwn(SIMPLE_TEMPLATES, expression) ? SIMPLE_TEMPLATES[expression] : undefined;
    if (mapped === undefined) notMapped(path, `${TEMPLATE} (the import maps only {{ trigger.id }}, {{ trigger.entity_id }} and {{ trigger.to_state.state }})`);
    if (expression === 'trigger.id' && this.triggerIdsChanged) {
      notMapped(path, '{{ trigger.id }} would read other ids in the hub: its trigger ids are unique and positions count its own triggers, so some differ from the ones here');
    }
    return mapped;
  }
}
