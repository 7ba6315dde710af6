/**
 * The intent engine: understands a sentence against the live home graph (parse) and carries it
 * out through ports (execute), answering in a short spoken-style sentence. Local and
 * deterministic: templates from `resources/intents/<lang>.yaml`, names from the graph, no model.
 */
import { fileURLToPath } from 'node:url';
import type { AbstractAction } from '../devices/actions.js';
import { DEVICE_ENTITY_DOMAINS, entityDomainsOf, type CapabilityName } from '../devices/capabilities.js';
import type { GraphDevice, HomeGraph } from '../graph/model.js';
import { intentErrors } from './errors.js';
import { EntityIndex, matchSentence, SOURCE_KIND, type EntityEntry, type RawMatch, type TargetKind } from './matcher.js';
import { loadLanguage, type CompiledLanguage } from './templates.js';

export type { TargetKind } from './matcher.js';

// ---------------------------------------------------------------------------------------------
// Ports and results

export interface IntentError {
  code: string;
  message: string;
}

export interface DeviceActionOutcome {
  deviceId: string;
  ok: boolean;
  command?: string;
  result?: unknown;
  error?: IntentError;
}

/** What the engine needs from the rest of the hub; the composition root adapts the services. */
export interface IntentPorts {
  graph(): HomeGraph;
  /** Ask a device for an abstract action; reports failures instead of throwing. */
  perform(deviceId: string, action: AbstractAction): Promise<DeviceActionOutcome>;
  runProgram(programId: string): Promise<{ ok: boolean; runId?: string; error?: IntentError }>;
  runScene(sceneId: string): Promise<{ ok: boolean; error?: IntentError }>;
  runMacro(macroId: string): Promise<{ ok: boolean; error?: IntentError }>;
  setZoneVolume(zoneId: string, volume: number): Promise<{ ok: boolean; results: Array<{ deviceId: string; ok: boolean }> }>;
}

export interface IntentTarget {
  kind: TargetKind;
  id: string;
  name: string;
}

/** One reading of a sentence (the best one is the ParseResult itself). */
export interface ParseReading {
  intent: string;
  slots: Record<string, string | number>;
  targets: IntentTarget[];
  confidence: number;
  template: string;
}

export interface ParseResult {
  text: string;
  language: string;
  matched: boolean;
  intent?: string;
  /** Slot values: names of the entities recognised, numbers, list values, fixed slots (`domain`). */
  slots: Record<string, string | number>;
  /**
   * What the command addresses: the named entity (a device — an area said with it only
   * disambiguates — or a space, zone, program, scene, macro); when nothing is named ("all lights"),
   * the devices of the domain.
   */
  targets: IntentTarget[];
  /** 0–1: 1 for a full match with exact names; lower for plural, alias, partial or inconsistent readings. */
  confidence: number;
  template?: string;
  /** Other plausible readings, best first. */
  alternatives?: ParseReading[];
  /** The best reading ties with another one that addresses something else. */
  ambiguous?: boolean;
  /** No match, but a template matched except for words that name nothing known. */
  unresolved?: { intent: string; slot: string; kind: TargetKind; text: string };
}

export interface ExecuteTargetResult {
  target: IntentTarget;
  ok: boolean;
  detail?: unknown;
  error?: IntentError;
}

export interface ExecuteResult {
  parse: ParseResult;
  ok: boolean;
  results: ExecuteTargetResult[];
  speech: string;
}

export interface IntentEngineOptions {
  /** Default language (`en`). */
  language?: string;
  /** Directory of `<lang>.yaml` files; default `resources/intents` of the repository. */
  dataDir?: string;
  /** Readings below this confidence are not carried out (default 0.5). */
  minConfidence?: number;
}

export const DEFAULT_INTENTS_DIR = fileURLToPath(new URL('../../../resources/intents/', import.meta.url));

/** Multiplier when a device is named together with an area (or zone) it is not in. */
const INCONSISTENT_AREA = 0.5;
/** Multiplier when the best reading ties with one addressing something else. */
const AMBIGUOUS = 0.8;
/** Readings this close in confidence (and taking as many words for names) tie. */
const TIE_MARGIN = 0.05;
const MAX_ALTERNATIVES = 4;
const MAX_TOKENS = 100;
const EPSILON = 1e-9;

// ---------------------------------------------------------------------------------------------
// Device semantics (language independent)

/**
 * Devices of a `domain` slot value: those that show up in that entity domain (by their class). The
 * domains are the device model's; IR remotes and buttons are not said by a domain word.
 */
const DOMAINS: Record<string, (d: GraphDevice) => boolean> = Object.fromEntries(
  DEVICE_ENTITY_DOMAINS.filter((domain) => domain !== 'remote' && domain !== 'event').map((domain) => [domain, (d: GraphDevice) => entityDomainsOf(d).includes(domain)]),
);

/** Noun (in `words.nouns`) for counting devices of a domain. */
const DOMAIN_NOUNS: Record<string, string> = { light: 'light', cover: 'cover', climate: 'thermostat', media_player: 'speaker', lock: 'lock', fan: 'fan' };

/** State keys read for an attribute, first present wins. */
const ATTRIBUTE_KEYS: Record<string, string[]> = {
  temperature: ['current_temperature', 'temperature'],
  target_temperature: ['target_temperature'],
  humidity: ['humidity', 'current_humidity'],
  brightness: ['brightness'],
  volume: ['volume'],
  position: ['position'],
};

type Dimension = 'power' | 'open' | 'playback' | 'lock';
const STATE_DIMENSION: Record<string, Dimension> = {
  on: 'power',
  off: 'power',
  open: 'open',
  closed: 'open',
  playing: 'playback',
  paused: 'playback',
  stopped: 'playback',
  locked: 'lock',
  unlocked: 'lock',
};

/** A device's state in one dimension, read from its canonical reading. */
function readDimension(dimension: Dimension, device: GraphDevice): string | undefined {
  const r = device.reading;
  switch (dimension) {
    case 'power':
      return r.on === undefined ? undefined : r.on ? 'on' : 'off';
    case 'open':
      if (r.coverState) return r.coverState === 'opening' ? 'open' : r.coverState === 'closing' ? 'closed' : r.coverState;
      // A contact sensor: detected means open.
      if (device.deviceClass === 'binary_sensor' && r.detected !== undefined && ('contact' in device.state || 'open' in device.state)) return r.detected ? 'open' : 'closed';
      return undefined;
    case 'playback':
      return r.playback === 'playing' || r.playback === 'paused' || r.playback === 'stopped' ? r.playback : undefined;
    case 'lock':
      return r.locked === undefined ? undefined : r.locked ? 'locked' : 'unlocked';
  }
}

function readAttribute(attribute: string, state: Record<string, unknown>): number | string | undefined {
  for (const key of ATTRIBUTE_KEYS[attribute] ?? [attribute]) {
    const v = state[key];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string' && v) return v;
  }
  return undefined;
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

// ---------------------------------------------------------------------------------------------

interface Reading extends ParseReading {
  slotTokens: number;
  literalTokens: number;
  order: number;
  key: string;
}

/** Which response: one device, a space's devices, a zone's devices, or all devices of a domain. */
type Scope = 'device' | 'group' | 'zone' | 'all';

interface Plan {
  action: (device: GraphDevice) => AbstractAction;
  capability: CapabilityName;
  /** Domain assumed for an area or zone when the template sets none. */
  defaultDomain?: string;
  vars?: Record<string, string | number>;
}

export class IntentEngine {
  private readonly languages = new Map<string, CompiledLanguage>();
  private readonly indexes = new WeakMap<HomeGraph, Map<string, EntityIndex>>();
  private readonly defaultLanguage: string;
  private readonly dataDir: string;
  private readonly minConfidence: number;

  constructor(
    private readonly ports: IntentPorts,
    options: IntentEngineOptions = {},
  ) {
    this.defaultLanguage = options.language ?? 'en';
    this.dataDir = options.dataDir ?? DEFAULT_INTENTS_DIR;
    this.minConfidence = options.minConfidence ?? 0.5;
  }

  /** The compiled language (loaded and compiled once). Throws a DomainError for an unknown language. */
  language(language = this.defaultLanguage): CompiledLanguage {
    let compiled = this.languages.get(language);
    if (!compiled) {
      compiled = loadLanguage(this.dataDir, language);
      this.languages.set(language, compiled);
    }
    return compiled;
  }

  parse(text: string, options: { language?: string } = {}): ParseResult {
    const lang = this.language(options.language ?? this.defaultLanguage);
    const tokens = lang.normalizer.sentence(text);
    const none: ParseResult = { text, language: lang.language, matched: false, slots: {}, targets: [], confidence: 0 };
    if (tokens.length === 0 || tokens.length > MAX_TOKENS) return none;
    const graph = this.ports.graph();
    const index = this.index(graph, lang);

    const readings = dedupe(matchSentence(lang, tokens, index).map((m) => this.reading(m, graph)).filter((r) => r.confidence > 0));
    readings.sort(compareReadings);
    const [best, ...others] = readings;
    if (!best) {
      const unresolved = this.unresolved(lang, tokens, index);
      return unresolved ? { ...none, unresolved } : none;
    }

    const result: ParseResult = {
      text,
      language: lang.language,
      matched: true,
      intent: best.intent,
      slots: best.slots,
      targets: best.targets,
      confidence: round3(best.confidence),
      template: best.template,
    };
    const rival = others[0];
    if (rival && ties(best, rival) && targetKey(rival) !== targetKey(best)) {
      result.ambiguous = true;
      result.confidence = round3(best.confidence * AMBIGUOUS);
    }
    if (others.length > 0) {
      result.alternatives = others.slice(0, MAX_ALTERNATIVES).map((r) => ({
        intent: r.intent,
        slots: r.slots,
        targets: r.targets,
        confidence: round3(r.confidence),
        template: r.template,
      }));
    }
    return result;
  }

  async execute(textOrParse: string | ParseResult): Promise<ExecuteResult> {
    const parse = typeof textOrParse === 'string' ? this.parse(textOrParse) : textOrParse;
    const lang = this.language(parse.language);
    const say = new Speech(lang);
    const fail = (speech: string): ExecuteResult => ({ parse, ok: false, results: [], speech });

    if (!parse.matched || !parse.intent) {
      if (parse.unresolved) return fail(say.error(`not_found_${parse.unresolved.kind}`, { text: parse.unresolved.text }));
      return fail(say.error('no_match'));
    }
    if (parse.confidence < this.minConfidence) return fail(say.error('unsure'));
    if (parse.ambiguous) {
      // The readings that tie with the best one (whose confidence was lowered for the tie).
      const tied = (parse.alternatives ?? []).filter((a) => a.confidence >= parse.confidence / AMBIGUOUS - TIE_MARGIN - 1e-3);
      const names = [...new Set([parse, ...tied].flatMap((r) => r.targets.map((t) => t.name)))];
      // One thing named, several things to do with it: not a question of which one.
      return fail(names.length > 1 ? say.error('ambiguous', { options: say.list(names, 'or') }) : say.error('unsure'));
    }

    const graph = this.ports.graph();
    const num = (slot: string) => (typeof parse.slots[slot] === 'number' ? (parse.slots[slot] as number) : undefined);
    switch (parse.intent) {
      case 'HassTurnOn':
        return this.devices(parse, graph, say, { action: () => ({ action: 'turn_on' }), capability: 'power' });
      case 'HassTurnOff':
        return this.devices(parse, graph, say, { action: () => ({ action: 'turn_off' }), capability: 'power' });
      case 'HassLightSet': {
        const value = num('brightness');
        if (value === undefined) break;
        return this.devices(parse, graph, say, { action: () => ({ action: 'set_brightness', value }), capability: 'brightness', defaultDomain: 'light', vars: { brightness: value } });
      }
      case 'HassSetVolume': {
        const value = num('volume');
        if (value === undefined) break;
        return this.setVolume(parse, graph, say, value);
      }
      case 'HassVolumeUp':
      case 'HassVolumeDown': {
        const step = num('step');
        const action = parse.intent === 'HassVolumeUp' ? 'volume_up' : 'volume_down';
        return this.devices(parse, graph, say, { action: () => (step === undefined ? { action } : { action, value: step }), capability: 'volume', defaultDomain: 'media_player' });
      }
      case 'HassClimateSetTemperature': {
        const value = num('temperature');
        if (value === undefined) break;
        return this.devices(parse, graph, say, { action: () => ({ action: 'set_temperature', value }), capability: 'temperature', defaultDomain: 'climate', vars: { temperature: value } });
      }
      case 'HassCoverOpen':
        return this.devices(parse, graph, say, { action: () => ({ action: 'open' }), capability: 'cover', defaultDomain: 'cover' });
      case 'HassCoverClose':
        return this.devices(parse, graph, say, { action: () => ({ action: 'close' }), capability: 'cover', defaultDomain: 'cover' });
      case 'HassCoverSetPosition': {
        const value = num('position');
        if (value === undefined) break;
        return this.devices(parse, graph, say, { action: () => ({ action: 'set_position', value }), capability: 'position', defaultDomain: 'cover', vars: { position: value } });
      }
      case 'HassLockLock':
        return this.devices(parse, graph, say, { action: () => ({ action: 'lock' }), capability: 'lock', defaultDomain: 'lock' });
      case 'HassLockUnlock':
        return this.devices(parse, graph, say, { action: () => ({ action: 'unlock' }), capability: 'lock', defaultDomain: 'lock' });
      case 'HassFanSetSpeed': {
        const value = num('percentage');
        if (value === undefined) break;
        return this.devices(parse, graph, say, { action: () => ({ action: 'set_percentage', value }), capability: 'fan_speed', defaultDomain: 'fan', vars: { percentage: value } });
      }
      case 'HassRunProgram':
      case 'HassRunScene':
      case 'HassRunMacro':
        return this.run(parse, graph, say);
      case 'HassGetState':
        return this.getState(parse, graph, say);
    }
    return fail(say.error('unsupported', { intent: parse.intent }));
  }

  // -------------------------------------------------------------------------------------------
  // Parsing helpers

  private index(graph: HomeGraph, lang: CompiledLanguage): EntityIndex {
    let byLanguage = this.indexes.get(graph);
    if (!byLanguage) {
      byLanguage = new Map();
      this.indexes.set(graph, byLanguage);
    }
    let index = byLanguage.get(lang.language);
    if (!index) {
      index = new EntityIndex(graph, lang.normalizer);
      byLanguage.set(lang.language, index);
    }
    return index;
  }

  private reading(match: RawMatch, graph: HomeGraph): Reading {
    const slots: Record<string, string | number> = { ...match.template.fixedSlots };
    const entities: EntityEntry[] = [];
    for (const c of match.captures) {
      if (c.value.type === 'entity') {
        slots[c.slot] = c.value.entity.name;
        entities.push(c.value.entity);
      } else if (c.value.type === 'number' || c.value.type === 'value') slots[c.slot] = c.value.value;
    }
    let confidence = match.score;
    const devices = entities.filter((e) => e.kind === 'device');
    for (const device of devices) {
      for (const group of entities) {
        if (group.kind === 'space' && graphDevice(graph, device.id)?.spaceId !== group.id && !spaceDeviceIds(graph, group.id).includes(device.id)) confidence *= INCONSISTENT_AREA;
        if (group.kind === 'zone' && !graph.zones.find((z) => z.id === group.id)?.deviceIds.includes(device.id)) confidence *= INCONSISTENT_AREA;
      }
    }
    let targets: IntentTarget[] = (devices.length > 0 ? devices : entities).map((e) => ({ kind: e.kind, id: e.id, name: e.name }));
    targets = targets.filter((t, i) => targets.findIndex((u) => u.kind === t.kind && u.id === t.id) === i);
    const domain = DOMAINS[String(slots.domain)];
    if (targets.length === 0 && domain) targets = graph.devices.filter(domain).map((d) => ({ kind: 'device', id: d.id, name: d.name }));
    const reading: Reading = {
      intent: match.template.intent,
      slots,
      targets,
      confidence,
      template: match.template.source,
      slotTokens: match.slotTokens,
      literalTokens: match.literalTokens,
      order: match.template.order,
      key: '',
    };
    reading.key = `${reading.intent}|${targetKey(reading)}|${JSON.stringify(Object.entries(slots).sort())}`;
    return reading;
  }

  /** The closest near-miss: a template that matched but for words that name nothing known. */
  private unresolved(lang: CompiledLanguage, tokens: string[], index: EntityIndex): ParseResult['unresolved'] {
    const misses = matchSentence(lang, tokens, index, { allowUnresolved: true });
    const resolvedScore = (m: RawMatch) => m.captures.reduce((s, c) => (c.value.type === 'unresolved' ? s : s * c.score), 1);
    misses.sort((a, b) => resolvedScore(b) - resolvedScore(a) || b.literalTokens - a.literalTokens || a.template.order - b.template.order);
    const best = misses[0];
    const capture = best?.captures.find((c) => c.value.type === 'unresolved');
    if (!best || !capture || capture.value.type !== 'unresolved') return undefined;
    return { intent: best.template.intent, slot: capture.slot, kind: SOURCE_KIND[capture.value.source], text: capture.text };
  }

  // -------------------------------------------------------------------------------------------
  // Execution

  /** Devices a space or zone target covers, of a domain and able to do `capability`. */
  private groupDevices(graph: HomeGraph, target: IntentTarget, domain: string | undefined, capability: CapabilityName): GraphDevice[] {
    const ids = target.kind === 'space' ? spaceDeviceIds(graph, target.id) : (graph.zones.find((z) => z.id === target.id)?.deviceIds ?? []);
    const inDomain = domain ? DOMAINS[domain] : undefined;
    return ids
      .map((id) => graphDevice(graph, id))
      .filter((d): d is GraphDevice => d !== undefined && d.capabilities.includes(capability) && (!inDomain || inDomain(d)));
  }

  private async devices(parse: ParseResult, graph: HomeGraph, say: Speech, plan: Plan): Promise<ExecuteResult> {
    const domain = typeof parse.slots.domain === 'string' ? parse.slots.domain : undefined;
    const noun = DOMAIN_NOUNS[domain ?? plan.defaultDomain ?? ''] ?? 'device';
    const group = parse.targets.find((t) => t.kind === 'space' || t.kind === 'zone');
    const named = parse.targets.filter((t) => t.kind === 'device');
    const vars: Record<string, string | number> = { ...plan.vars };

    let scope: Scope;
    let devices: GraphDevice[];
    const results: ExecuteTargetResult[] = [];
    if (group) {
      scope = group.kind === 'zone' ? 'zone' : 'group';
      vars.area = group.name;
      devices = this.groupDevices(graph, group, domain ?? plan.defaultDomain, plan.capability);
      if (devices.length === 0) return { parse, ok: false, results: [], speech: say.error('no_devices', { ...vars, noun: say.noun(noun, 2) }) };
    } else {
      scope = named.length === 1 && !domain ? 'device' : 'all';
      devices = [];
      // "All lights": the domain's devices that can do it, silently; a named device is told it can't.
      const addressed = domain ? named.filter((t) => graphDevice(graph, t.id)?.capabilities.includes(plan.capability)) : named;
      if (domain && addressed.length === 0) return { parse, ok: false, results: [], speech: say.error('no_devices_anywhere', { noun: say.noun(noun, 2) }) };
      for (const t of addressed) {
        const device = graphDevice(graph, t.id);
        if (!device) results.push({ target: t, ok: false, error: intentErrors.NOT_FOUND.info({ name: t.name }) });
        else if (!device.capabilities.includes(plan.capability)) {
          results.push({ target: t, ok: false, error: intentErrors.UNSUPPORTED.info({ name: t.name, capability: plan.capability }) });
        } else devices.push(device);
      }
      if (addressed.length === 0) return { parse, ok: false, results: [], speech: say.error('no_match') };
    }

    results.push(...(await Promise.all(devices.map((d) => this.perform(d, plan.action(d))))));
    return this.report(parse, say, results, scope, noun, vars);
  }

  private async setVolume(parse: ParseResult, graph: HomeGraph, say: Speech, volume: number): Promise<ExecuteResult> {
    const zone = parse.targets.find((t) => t.kind === 'zone');
    if (!zone) {
      return this.devices(parse, graph, say, { action: () => ({ action: 'set_volume', value: volume }), capability: 'volume', defaultDomain: 'media_player', vars: { volume } });
    }
    let results: ExecuteTargetResult[];
    try {
      const answer = await this.ports.setZoneVolume(zone.id, volume);
      results = answer.results.map((r) => {
        const device = graphDevice(graph, r.deviceId);
        const target: IntentTarget = { kind: 'device', id: r.deviceId, name: device?.name ?? r.deviceId };
        return r.ok ? { target, ok: true } : { target, ok: false, error: intentErrors.DEVICE_FAILED.info({ name: target.name, failure: 'did not take the volume' }) };
      });
      if (results.length === 0) results = [{ target: zone, ok: answer.ok, ...(answer.ok ? {} : { error: intentErrors.ZONE_FAILED.info({ name: zone.name }) }) }];
    } catch (e) {
      results = [{ target: zone, ok: false, error: errorOf(e) }];
    }
    return this.report(parse, say, results, 'zone', 'speaker', { volume, area: zone.name });
  }

  private report(
    parse: ParseResult,
    say: Speech,
    results: ExecuteTargetResult[],
    scope: Scope,
    noun: string,
    vars: Record<string, string | number>,
  ): ExecuteResult {
    const intent = parse.intent as string;
    const ok = results.filter((r) => r.ok);
    const failed = results.filter((r) => !r.ok);
    const allOk = failed.length === 0 && ok.length > 0;
    if (ok.length === 0) {
      const only = failed[0];
      const speech =
        failed.length === 1 && only?.error?.code === intentErrors.UNSUPPORTED.code
          ? say.error('cannot', { name: only.target.name })
          : say.error('failed', { failed: say.list(failed.map((r) => r.target.name)) });
      return { parse, ok: false, results, speech };
    }
    const name = say.list(ok.map((r) => r.target.name));
    let speech = say.response(intent, scope === 'zone' ? ['zone', 'group'] : [scope], { ...vars, name, devices: say.count(noun, ok.length), count: ok.length });
    if (failed.length > 0) speech += ` ${say.error('some_failed', { failed: say.list(failed.map((r) => r.target.name)) })}`;
    return { parse, ok: allOk, results, speech };
  }

  private async perform(device: GraphDevice, action: AbstractAction): Promise<ExecuteTargetResult> {
    const target: IntentTarget = { kind: 'device', id: device.id, name: device.name };
    try {
      const outcome = await this.ports.perform(device.id, action);
      const detail = { action: action.action, ...(outcome.command !== undefined ? { command: outcome.command } : {}), ...(outcome.result !== undefined ? { result: outcome.result } : {}) };
      return outcome.ok ? { target, ok: true, detail } : { target, ok: false, detail, error: outcome.error ?? intentErrors.DEVICE_FAILED.info({ name: device.name, failure: 'failed' }) };
    } catch (e) {
      return { target, ok: false, error: errorOf(e) };
    }
  }

  private async run(parse: ParseResult, graph: HomeGraph, say: Speech): Promise<ExecuteResult> {
    const target = parse.targets[0];
    if (!target) return { parse, ok: false, results: [], speech: say.error('no_match') };
    const exists =
      (target.kind === 'program' && graph.programs.some((p) => p.id === target.id)) ||
      (target.kind === 'scene' && graph.scenes.some((s) => s.id === target.id)) ||
      (target.kind === 'macro' && graph.macros.some((m) => m.id === target.id));
    if (!exists) return { parse, ok: false, results: [], speech: say.error(`not_found_${target.kind}`, { text: target.name }) };
    let result: ExecuteTargetResult;
    try {
      if (target.kind === 'program') {
        const r = await this.ports.runProgram(target.id);
        result = { target, ok: r.ok, ...(r.runId ? { detail: { runId: r.runId } } : {}), ...(r.error ? { error: r.error } : {}) };
      } else {
        const r = await (target.kind === 'scene' ? this.ports.runScene(target.id) : this.ports.runMacro(target.id));
        result = { target, ok: r.ok, ...(r.error ? { error: r.error } : {}) };
      }
    } catch (e) {
      result = { target, ok: false, error: errorOf(e) };
    }
    if (!result.ok && !result.error) result.error = intentErrors.RUN_FAILED.info({ name: target.name });
    const speech = result.ok
      ? say.response(parse.intent as string, ['default'], { name: target.name })
      : say.error('run_failed', { name: target.name, error: result.error?.message ?? '' });
    return { parse, ok: result.ok, results: [result], speech };
  }

  private getState(parse: ParseResult, graph: HomeGraph, say: Speech): ExecuteResult {
    const target = parse.targets[0];
    const asked = typeof parse.slots.state === 'string' ? parse.slots.state : undefined;
    const attribute = typeof parse.slots.attribute === 'string' ? parse.slots.attribute : undefined;
    const answer = (speech: string, result: ExecuteTargetResult): ExecuteResult => ({ parse, ok: result.ok, results: [result], speech });
    if (!target) return { parse, ok: false, results: [], speech: say.error('no_match') };
    const attributeWord = attribute ? say.attribute(attribute) : '';

    if (target.kind === 'device') {
      const device = graphDevice(graph, target.id);
      if (!device) return answer(say.error('not_found_device', { text: target.name }), { target, ok: false, error: intentErrors.NOT_FOUND.info({ name: target.name }) });
      if (asked) {
        const dimension = STATE_DIMENSION[asked];
        const actual = dimension ? readDimension(dimension, device) : undefined;
        if (actual === undefined) return answer(say.response('HassGetState', 'unknown', { name: device.name, state: say.state(asked) }), { target, ok: true, detail: { state: null } });
        const key = actual === asked ? 'yes' : 'no';
        return answer(say.response('HassGetState', key, { name: device.name, state: say.state(asked), actual: say.state(actual) }), {
          target,
          ok: true,
          detail: { state: actual, matches: actual === asked },
        });
      }
      if (attribute) {
        const value = readAttribute(attribute, device.state);
        if (value === undefined) return answer(say.response('HassGetState', 'no_value', { name: device.name, attribute: attributeWord }), { target, ok: true, detail: { value: null } });
        return answer(say.response('HassGetState', 'value', { name: device.name, attribute: attributeWord, value: say.value(attribute, value) }), {
          target,
          ok: true,
          detail: { attribute, value },
        });
      }
      const dimensions: Dimension[] = ['power', 'open', 'playback', 'lock'];
      const state = dimensions.map((d) => readDimension(d, device)).find((v) => v !== undefined);
      if (state === undefined) return answer(say.response('HassGetState', 'unknown_state', { name: device.name }), { target, ok: true, detail: { state: null } });
      return answer(say.response('HassGetState', 'state', { name: device.name, state: say.state(state) }), { target, ok: true, detail: { state } });
    }

    if ((target.kind === 'space' || target.kind === 'zone') && attribute) {
      const ids = target.kind === 'space' ? spaceDeviceIds(graph, target.id) : (graph.zones.find((z) => z.id === target.id)?.deviceIds ?? []);
      const domain = typeof parse.slots.domain === 'string' ? DOMAINS[parse.slots.domain] : undefined;
      const values = ids
        .map((id) => graphDevice(graph, id))
        .filter((d): d is GraphDevice => d !== undefined && (!domain || domain(d)))
        .map((d) => readAttribute(attribute, d.state))
        .filter((v): v is number => typeof v === 'number');
      if (values.length === 0) return answer(say.response('HassGetState', 'no_group_value', { area: target.name, attribute: attributeWord }), { target, ok: true, detail: { value: null } });
      const value = round1(values.reduce((a, b) => a + b, 0) / values.length);
      return answer(say.response('HassGetState', 'group_value', { area: target.name, attribute: attributeWord, value: say.value(attribute, value) }), {
        target,
        ok: true,
        detail: { attribute, value, devices: values.length },
      });
    }
    return { parse, ok: false, results: [], speech: say.error('unsupported', { intent: parse.intent ?? '' }) };
  }
}

// ---------------------------------------------------------------------------------------------

function graphDevice(graph: HomeGraph, id: string): GraphDevice | undefined {
  return graph.devices.find((d) => d.id === id);
}

function spaceDeviceIds(graph: HomeGraph, spaceId: string): string[] {
  const ids = new Set(graph.spaces.find((s) => s.id === spaceId)?.deviceIds ?? []);
  for (const d of graph.devices) if (d.spaceId === spaceId) ids.add(d.id);
  return [...ids];
}

function errorOf(e: unknown): IntentError {
  const message = e instanceof Error ? e.message : String(e);
  if (typeof (e as { code?: unknown })?.code === 'string') return { code: (e as { code: string }).code, message };
  return intentErrors.FAILED.info({ reason: message });
}

function targetKey(r: { intent?: string; targets: IntentTarget[] }): string {
  return `${r.intent}:${r.targets.map((t) => `${t.kind}/${t.id}`).join(',')}`;
}

function compareReadings(a: Reading, b: Reading): number {
  if (Math.abs(a.confidence - b.confidence) > EPSILON) return b.confidence - a.confidence;
  return b.slotTokens - a.slotTokens || b.literalTokens - a.literalTokens || a.order - b.order;
}

/** A tie: about as confident, and as many words taken as names (a longer name is more specific). */
function ties(a: Reading, b: Reading): boolean {
  return Math.abs(a.confidence - b.confidence) <= TIE_MARGIN + EPSILON && a.slotTokens === b.slotTokens;
}

/** One reading per (intent, targets, slots): the best. */
function dedupe(readings: Reading[]): Reading[] {
  const best = new Map<string, Reading>();
  for (const r of readings) {
    const prev = best.get(r.key);
    if (!prev || compareReadings(r, prev) < 0) best.set(r.key, r);
  }
  return [...best.values()];
}

/** Answers from the language's `responses` and `words`. */
class Speech {
  constructor(private readonly lang: CompiledLanguage) {}

  /** The intent's first response among `keys` (then its `default`, then `errors.done`). */
  response(intent: string, keys: string | string[], vars: Record<string, string | number>): string {
    const r = this.lang.responses[intent];
    const found = (Array.isArray(keys) ? keys : [keys]).map((k) => r?.[k]).find((t) => t !== undefined);
    const text = found ?? r?.default ?? this.lang.responses.errors?.done ?? 'Done.';
    return this.fill(text, vars);
  }

  error(key: string, vars: Record<string, string | number> = {}): string {
    const text = this.lang.responses.errors?.[key] ?? this.lang.responses.errors?.no_match ?? key;
    return this.fill(text, vars);
  }

  noun(noun: string, count: number): string {
    const forms = this.lang.words.nouns[noun] ?? this.lang.words.nouns.device ?? { one: noun, other: noun };
    return count === 1 ? forms.one : forms.other;
  }

  /** "1 light", "3 lights". */
  count(noun: string, count: number): string {
    return `${count} ${this.noun(noun, count)}`;
  }

  list(items: string[], joiner: 'and' | 'or' = 'and'): string {
    const word = joiner === 'and' ? this.lang.words.and : this.lang.words.or;
    if (items.length <= 1) return items[0] ?? '';
    return `${items.slice(0, -1).join(', ')} ${word} ${items[items.length - 1]}`;
  }

  state(state: string): string {
    return this.lang.words.states[state] ?? state;
  }

  attribute(attribute: string): string {
    return this.lang.words.attributes[attribute] ?? attribute.replace(/_/g, ' ');
  }

  value(attribute: string, value: number | string): string {
    const unit = this.lang.words.units[attribute];
    const text = typeof value === 'number' ? String(round1(value)) : value;
    return unit ? `${text} ${unit}` : text;
  }

  private fill(text: string, vars: Record<string, string | number>): string {
    const filled = text.replace(/\{(\w+)\}/g, (_, key: string) => (vars[key] !== undefined ? String(vars[key]) : ''));
    const clean = filled.replace(/\s+/g, ' ').replace(/\s+([.,!?])/g, '$1').trim();
    return clean.charAt(0).toUpperCase() + clean.slice(1);
  }
}
