/**
 * Matching a normalized sentence against compiled templates. Slots are filled from their lists:
 * numbers and ranges take one numeric token, value lists their words, entity lists the live
 * names of the home graph (exact, plural, alias or partial, each with its own score).
 *
 * The matcher is a small backtracking walk over the template tree (continuation passing): every
 * complete reading is reported, and the engine ranks them.
 */
import type { CapabilityName } from '../devices/capabilities.js';
import type { HomeGraph } from '../graph/model.js';
import type { CompiledLanguage, CompiledTemplate, EntitySource, ListDef, Normalizer, TemplateNode } from './templates.js';

export type TargetKind = 'device' | 'space' | 'zone' | 'program' | 'scene' | 'macro';

export const SOURCE_KIND: Record<EntitySource, TargetKind> = {
  devices: 'device',
  spaces: 'space',
  zones: 'zone',
  programs: 'program',
  scenes: 'scene',
  macros: 'macro',
};

/** How an entity name was recognised; each has a score (see `NAME_SCORES`). */
export type NameMatch = 'exact' | 'plural' | 'alias' | 'partial';

/**
 * Scores of name matches (1 = the name exactly). Partial: the words said are a contiguous part
 * of the name; a suffix ("lamp" of "desk lamp") scores higher than another part, and the more
 * of the name is covered the higher.
 */
export const NAME_SCORES = {
  exact: 1,
  plural: 0.9,
  alias: 0.9,
  partialSuffixBase: 0.75,
  partialOtherBase: 0.55,
  partialCoverage: 0.2,
  /** Multiplier when an entity lacks the capability its template asks for. */
  missingCapability: 0.5,
} as const;

export interface EntityEntry {
  kind: TargetKind;
  id: string;
  name: string;
  /** Token sequences that name it; `alias` for program semantics. */
  variants: Array<{ tokens: string[]; alias: boolean }>;
  /** Devices: their capabilities; spaces and zones: the union over their devices. */
  capabilities: ReadonlySet<string>;
}

/** The live names of one home graph, tokenized once. */
export class EntityIndex {
  private readonly bySource = new Map<EntitySource, EntityEntry[]>();

  constructor(graph: HomeGraph, normalizer: Normalizer) {
    const devices = new Map(graph.devices.map((d) => [d.id, d]));
    const capsOf = (deviceIds: string[]) => {
      const caps = new Set<CapabilityName>();
      for (const id of deviceIds) for (const c of devices.get(id)?.capabilities ?? []) caps.add(c);
      return caps;
    };
    const variants = (name: string, aliases: string[] = []) => {
      const out: EntityEntry['variants'] = [];
      const add = (text: string, alias: boolean) => {
        const tokens = normalizer.tokens(text);
        if (tokens.length === 0) return;
        out.push({ tokens, alias });
        // "The Den" is also just "den" (templates already allow an article before a name).
        if (tokens.length > 1 && normalizer.isArticle(tokens[0] as string)) out.push({ tokens: tokens.slice(1), alias });
      };
      add(name, false);
      for (const a of aliases) add(a, true);
      return out;
    };
    const spaceDevices = new Map<string, string[]>();
    for (const space of graph.spaces) spaceDevices.set(space.id, [...space.deviceIds]);
    for (const d of graph.devices) {
      if (d.spaceId && spaceDevices.has(d.spaceId) && !spaceDevices.get(d.spaceId)?.includes(d.id)) spaceDevices.get(d.spaceId)?.push(d.id);
    }

    this.bySource.set(
      'devices',
      graph.devices.map((d) => ({ kind: 'device', id: d.id, name: d.name, variants: variants(d.name), capabilities: new Set(d.capabilities) })),
    );
    this.bySource.set(
      'spaces',
      graph.spaces.map((s) => ({ kind: 'space', id: s.id, name: s.name, variants: variants(s.name), capabilities: capsOf(spaceDevices.get(s.id) ?? []) })),
    );
    this.bySource.set(
      'zones',
      graph.zones.map((z) => ({ kind: 'zone', id: z.id, name: z.name, variants: variants(z.name), capabilities: capsOf(z.deviceIds) })),
    );
    this.bySource.set(
      'programs',
      graph.programs.map((p) => ({ kind: 'program', id: p.id, name: p.name, variants: variants(p.name, p.semantics), capabilities: new Set() })),
    );
    this.bySource.set(
      'scenes',
      graph.scenes.map((s) => ({ kind: 'scene', id: s.id, name: s.name, variants: variants(s.name), capabilities: new Set() })),
    );
    this.bySource.set(
      'macros',
      graph.macros.map((m) => ({ kind: 'macro', id: m.id, name: m.name, variants: variants(m.name), capabilities: new Set() })),
    );
  }

  entries(source: EntitySource): EntityEntry[] {
    return this.bySource.get(source) ?? [];
  }
}

export type CapturedValue =
  | { type: 'number'; value: number }
  | { type: 'value'; value: string | number }
  | { type: 'entity'; entity: EntityEntry; how: NameMatch }
  | { type: 'unresolved'; source: EntitySource };

export interface SlotCapture {
  slot: string;
  list: string;
  /** The words said for this slot (normalized). */
  text: string;
  tokens: number;
  value: CapturedValue;
  score: number;
}

export interface RawMatch {
  template: CompiledTemplate;
  captures: SlotCapture[];
  /** Literal template words matched. */
  literalTokens: number;
  /** Input words taken by slots. */
  slotTokens: number;
  /** Product of the slot scores. */
  score: number;
  /** A reading with one entity slot whose words name nothing known. */
  unresolved: boolean;
}

interface Candidate {
  end: number;
  value: CapturedValue;
  score: number;
}

interface Acc {
  captures: SlotCapture[];
  literals: number;
  unresolved: boolean;
}

/** Longest span an unresolved entity slot may take. */
const MAX_UNRESOLVED_TOKENS = 5;
/** Bound on the walk per template, whatever the input. */
const MAX_STEPS_PER_TEMPLATE = 50_000;

export interface MatchOptions {
  /** Let one entity slot take words that name nothing known (to answer "I couldn't find …"). */
  allowUnresolved?: boolean;
}

/**
 * Every complete reading of `tokens` by the language's templates. Slot candidates are computed
 * once per (list, position) and shared by all templates.
 */
export function matchSentence(lang: CompiledLanguage, tokens: string[], index: EntityIndex, options: MatchOptions = {}): RawMatch[] {
  if (tokens.length === 0) return [];
  const present = new Set(tokens);
  const cache = new Map<string, Candidate[]>();
  const candidates = (listName: string, list: ListDef, pos: number): Candidate[] => {
    const key = `${listName}@${pos}`;
    let found = cache.get(key);
    if (!found) {
      found = listCandidates(list, tokens, pos, index, lang.normalizer);
      cache.set(key, found);
    }
    return found;
  };

  const results: RawMatch[] = [];
  for (const template of lang.templates) {
    if (!template.requiredWords.every((w) => present.has(w))) continue;
    let steps = 0;

    const walk = (node: TemplateNode, pos: number, acc: Acc, k: (pos: number, acc: Acc) => void): void => {
      if (++steps > MAX_STEPS_PER_TEMPLATE) return;
      switch (node.kind) {
        case 'words': {
          if (pos + node.words.length > tokens.length) return;
          for (let i = 0; i < node.words.length; i++) if (tokens[pos + i] !== node.words[i]) return;
          k(pos + node.words.length, { ...acc, literals: acc.literals + node.words.length });
          return;
        }
        case 'seq': {
          const next = (i: number, p: number, a: Acc): void => {
            if (i === node.items.length) k(p, a);
            else walk(node.items[i] as TemplateNode, p, a, (p2, a2) => next(i + 1, p2, a2));
          };
          next(0, pos, acc);
          return;
        }
        case 'alt': {
          for (const option of node.options) walk(option, pos, acc, k);
          if (node.optional) k(pos, acc);
          return;
        }
        case 'slot': {
          if (pos >= tokens.length) return;
          const list = lang.lists.get(node.list);
          if (!list) return;
          const required = template.requires[node.slot];
          for (const c of candidates(node.list, list, pos)) {
            let score = c.score;
            if (required && c.value.type === 'entity' && ['device', 'space', 'zone'].includes(c.value.entity.kind)) {
              const entity = c.value.entity;
              if (!required.some((cap) => entity.capabilities.has(cap))) score *= NAME_SCORES.missingCapability;
            }
            const capture: SlotCapture = {
              slot: node.slot,
              list: node.list,
              text: tokens.slice(pos, c.end).join(' '),
              tokens: c.end - pos,
              value: c.value,
              score,
            };
            k(c.end, { ...acc, captures: [...acc.captures, capture] });
          }
          if (options.allowUnresolved && !acc.unresolved && list.type === 'entities') {
            for (let end = pos + 1; end <= Math.min(tokens.length, pos + MAX_UNRESOLVED_TOKENS); end++) {
              const span = tokens.slice(pos, end);
              if (lang.normalizer.isArticle(span[0] as string)) break;
              const capture: SlotCapture = {
                slot: node.slot,
                list: node.list,
                text: span.join(' '),
                tokens: span.length,
                value: { type: 'unresolved', source: list.source },
                score: 0,
              };
              k(end, { ...acc, unresolved: true, captures: [...acc.captures, capture] });
            }
          }
          return;
        }
      }
    };

    walk(template.root, 0, { captures: [], literals: 0, unresolved: false }, (pos, acc) => {
      if (pos !== tokens.length) return;
      if (options.allowUnresolved && !acc.unresolved) return; // the first pass has those
      results.push({
        template,
        captures: acc.captures,
        literalTokens: acc.literals,
        slotTokens: acc.captures.reduce((n, c) => n + c.tokens, 0),
        score: acc.unresolved ? 0 : acc.captures.reduce((s, c) => s * c.score, 1),
        unresolved: acc.unresolved,
      });
    });
  }
  return results;
}

function listCandidates(list: ListDef, tokens: string[], pos: number, index: EntityIndex, normalizer: Normalizer): Candidate[] {
  const token = tokens[pos];
  if (token === undefined) return [];
  switch (list.type) {
    case 'number':
    case 'range': {
      if (!/^\d+(\.\d+)?$/.test(token)) return [];
      const value = Number(token);
      if (list.type === 'range' && (value < list.from || value > list.to || (!list.fractional && !Number.isInteger(value)))) return [];
      return [{ end: pos + 1, value: { type: 'number', value }, score: 1 }];
    }
    case 'values': {
      const out: Candidate[] = [];
      for (const v of list.values) {
        if (v.words.every((w, i) => tokens[pos + i] === w)) out.push({ end: pos + v.words.length, value: { type: 'value', value: v.out }, score: 1 });
      }
      return out;
    }
    case 'entities':
      return entityCandidates(index.entries(list.source), tokens, pos, normalizer);
  }
}

/** For each entity and each span end, the best way the words from `pos` name it. */
function entityCandidates(entries: EntityEntry[], tokens: string[], pos: number, normalizer: Normalizer): Candidate[] {
  const out: Candidate[] = [];
  for (const entity of entries) {
    const best = new Map<number, { score: number; how: NameMatch }>();
    const offer = (end: number, score: number, how: NameMatch) => {
      const prev = best.get(end);
      if (!prev || prev.score < score) best.set(end, { score, how });
    };
    for (const variant of entity.variants) {
      const name = variant.tokens;
      const alias = variant.alias ? NAME_SCORES.alias : 1;
      for (let len = 1; len <= name.length && pos + len <= tokens.length; len++) {
        const span = tokens.slice(pos, pos + len);
        if (len === name.length) {
          if (span.every((t, i) => t === name[i])) {
            offer(pos + len, NAME_SCORES.exact * alias, variant.alias ? 'alias' : 'exact');
            continue;
          }
          if (span.every((t, i) => normalizer.loosely(t, name[i] as string))) {
            offer(pos + len, NAME_SCORES.plural * alias, 'plural');
            continue;
          }
        }
        // Partial: the span is a contiguous part of the name, with at least one real word.
        if (len === name.length || span.every((t) => normalizer.isArticle(t))) continue;
        for (let start = 0; start + len <= name.length; start++) {
          let exact = true;
          let ok = true;
          for (let i = 0; i < len && ok; i++) {
            const a = span[i] as string;
            const b = name[start + i] as string;
            if (a !== b) {
              exact = false;
              ok = normalizer.loosely(a, b);
            }
          }
          if (!ok) continue;
          const suffix = start + len === name.length;
          const base = suffix ? NAME_SCORES.partialSuffixBase : NAME_SCORES.partialOtherBase;
          const score = (base + NAME_SCORES.partialCoverage * (len / name.length)) * (exact ? 1 : NAME_SCORES.plural) * alias;
          offer(pos + len, score, 'partial');
        }
      }
    }
    for (const [end, { score, how }] of best) out.push({ end, value: { type: 'entity', entity, how }, score });
  }
  return out;
}
