/**
 * Sentence templates: loading a language file (`resources/intents/<lang>.yaml`) and compiling it once
 * into matchers — token trees with alternatives, optionals and slots — plus the language's
 * normalizer, lists, responses and words. Data only in the file; every rule lives here.
 *
 * Template syntax (in the spirit of Home Assistant's hassil):
 * - `word word`            literal words (normalized like the input: case, punctuation, numbers)
 * - `(a | b c | d)`         alternatives; an empty branch `(a | )` makes the group optional
 * - `[a | b]`               optional (alternatives or nothing)
 * - `(a; b; c)`             permutation: the parts in any order (at most 4)
 * - `{slot}`                a slot filled from the list of the same name
 * - `{slot:list}`           a slot filled from another list, e.g. `{step:number}`
 * - `<rule>`                an expansion rule from `expansion_rules`, inlined at compile time
 *
 * Lists: `entities: devices | spaces | zones | programs | scenes | macros` (live names from the
 * home graph; programs also by their semantics), `range: {from, to, fractional?}`,
 * `values: [word, {in: words, out: value}]`, and the built-in `number` (any number).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { intentErrors } from './errors.js';

// ---------------------------------------------------------------------------------------------
// Compiled shapes

export type TemplateNode =
  | { kind: 'words'; words: string[] }
  | { kind: 'seq'; items: TemplateNode[] }
  | { kind: 'alt'; options: TemplateNode[]; optional: boolean }
  | { kind: 'slot'; slot: string; list: string };

export type EntitySource = 'devices' | 'spaces' | 'zones' | 'programs' | 'scenes' | 'macros';
export const ENTITY_SOURCES: readonly EntitySource[] = ['devices', 'spaces', 'zones', 'programs', 'scenes', 'macros'];

export type ListDef =
  | { type: 'entities'; source: EntitySource }
  | { type: 'range'; from: number; to: number; fractional: boolean }
  | { type: 'number' }
  | { type: 'values'; values: Array<{ words: string[]; out: string | number }> };

export interface CompiledTemplate {
  intent: string;
  /** The template as written, for `ParseResult.template`. */
  source: string;
  root: TemplateNode;
  /** Fixed slot values set when this template matches (e.g. `domain: light`). */
  fixedSlots: Record<string, string | number>;
  /** Soft capability requirements of entity slots: slot → any of these capabilities. */
  requires: Record<string, string[]>;
  /** Literal words every match must contain (a cheap pre-filter). */
  requiredWords: string[];
  /** Position in the file: earlier templates win ties. */
  order: number;
}

export interface LanguageWords {
  nouns: Record<string, { one: string; other: string }>;
  states: Record<string, string>;
  attributes: Record<string, string>;
  units: Record<string, string>;
  and: string;
  or: string;
}

export interface CompiledLanguage {
  language: string;
  templates: CompiledTemplate[];
  intents: string[];
  lists: Map<string, ListDef>;
  /** intent → response key → text with `{placeholders}`; `errors` holds the failure answers. */
  responses: Record<string, Record<string, string>>;
  words: LanguageWords;
  normalizer: Normalizer;
}

// ---------------------------------------------------------------------------------------------
// Normalization

export interface NormalizerData {
  numbers: Record<string, number>;
  symbols: Record<string, string>;
  skipWords: string[];
  articles: string[];
  pluralSuffixes: string[];
}

/**
 * Turns text into tokens: lowercase, apostrophes dropped (`what's` → `whats`), symbols spelled
 * out (`%` → `percent`), other punctuation removed, decimals kept (`18.5`), number words as
 * digits (`twenty one` → `21`). Templates and live names go through the same normalizer, so
 * whatever it does, both sides agree.
 */
export class Normalizer {
  private readonly numbers: Map<string, number>;
  private readonly symbols: Array<[string, string]>;
  private readonly skip: string[][];
  readonly articles: ReadonlySet<string>;
  private readonly pluralSuffixes: string[];

  constructor(data: NormalizerData) {
    this.numbers = new Map(Object.entries(data.numbers).map(([w, n]) => [w.toLowerCase(), n]));
    this.symbols = Object.entries(data.symbols);
    this.articles = new Set(data.articles.map((a) => a.toLowerCase()));
    this.pluralSuffixes = [...data.pluralSuffixes].sort((a, b) => b.length - a.length);
    // Longest phrases first so that "could you please" goes before "could you".
    this.skip = data.skipWords.map((w) => this.tokens(w)).filter((t) => t.length > 0).sort((a, b) => b.length - a.length);
  }

  /** Tokens of a piece of text (input, template literal or live name). */
  tokens(text: string): string[] {
    let s = text.normalize('NFKC').toLowerCase();
    for (const [symbol, word] of this.symbols) s = s.split(symbol).join(` ${word} `);
    s = s.replace(/(\d)\.(\d)/g, '$1\uE000$2');
    s = s.replace(/['’‘`´]/g, '');
    s = s.replace(/[^\p{L}\p{N}\uE000]+/gu, ' ');
    s = s.replace(/\uE000/g, '.');
    const raw = s.split(' ').filter((t) => t.length > 0);
    return this.combineNumbers(raw);
  }

  /** Tokens of an input sentence: as `tokens`, with skip words ("please", "can you") trimmed off both ends. */
  sentence(text: string): string[] {
    const tokens = this.tokens(text);
    let start = 0;
    let end = tokens.length;
    let changed = true;
    while (changed && start < end) {
      changed = false;
      for (const phrase of this.skip) {
        if (phrase.length <= end - start && phrase.every((w, i) => tokens[start + i] === w)) {
          start += phrase.length;
          changed = true;
          break;
        }
        if (phrase.length <= end - start && phrase.every((w, i) => tokens[end - phrase.length + i] === w)) {
          end -= phrase.length;
          changed = true;
          break;
        }
      }
    }
    return tokens.slice(start, end);
  }

  /** Equal, or equal but for a plural suffix on one side ("lights" ~ "light", "boxes" ~ "box"). */
  loosely(a: string, b: string): boolean {
    if (a === b) return true;
    const [long, short] = a.length > b.length ? [a, b] : [b, a];
    return this.pluralSuffixes.some((suffix) => long === short + suffix);
  }

  isArticle(token: string): boolean {
    return this.articles.has(token);
  }

  private combineNumbers(tokens: string[]): string[] {
    const out: string[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i] as string;
      let value = this.numbers.get(token);
      if (value === undefined) {
        out.push(token);
        continue;
      }
      while (i + 1 < tokens.length) {
        const next = this.numbers.get(tokens[i + 1] as string);
        if (next === undefined) break;
        if (next === 100 && value >= 1 && value <= 9) value *= 100;
        else if (value >= 100 && value % 100 === 0 && next < 100) value += next;
        else if (value % 100 >= 20 && value % 10 === 0 && next >= 1 && next <= 9) value += next;
        else break;
        i++;
      }
      out.push(String(value));
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Template parsing

class TemplateParser {
  private at = 0;
  constructor(
    private readonly text: string,
    private readonly normalizer: Normalizer,
    private readonly expandRule: (name: string) => TemplateNode,
  ) {}

  parse(): TemplateNode {
    const node = this.sequence('');
    if (this.at < this.text.length) throw this.fail(`unexpected "${this.text[this.at]}"`);
    return node;
  }

  private fail(message: string): Error {
    return new Error(`template "${this.text}": ${message} at ${this.at}`);
  }

  /** A sequence up to (not including) one of `stops`. */
  private sequence(stops: string): TemplateNode {
    const items: TemplateNode[] = [];
    let literal = '';
    const flush = () => {
      const words = this.normalizer.tokens(literal);
      if (words.length > 0) items.push({ kind: 'words', words });
      literal = '';
    };
    while (this.at < this.text.length) {
      const c = this.text[this.at] as string;
      if (stops.includes(c)) break;
      if (c === '(' || c === '[') {
        flush();
        this.at++;
        items.push(this.group(c === '(' ? ')' : ']'));
      } else if (c === '{') {
        flush();
        items.push(this.slot());
      } else if (c === '<') {
        flush();
        const close = this.text.indexOf('>', this.at);
        if (close < 0) throw this.fail('unclosed <rule>');
        const name = this.text.slice(this.at + 1, close).trim();
        this.at = close + 1;
        items.push(this.expandRule(name));
      } else if (c === ')' || c === ']' || c === '}' || c === '>' || c === '|' || c === ';') {
        throw this.fail(`unexpected "${c}"`);
      } else {
        literal += c;
        this.at++;
      }
    }
    flush();
    return items.length === 1 ? (items[0] as TemplateNode) : { kind: 'seq', items };
  }

  private group(close: string): TemplateNode {
    const options: TemplateNode[] = [];
    let separator: string | undefined;
    for (;;) {
      options.push(this.sequence(`|;${close}`));
      const c = this.text[this.at];
      if (c === undefined) throw this.fail(`missing "${close}"`);
      this.at++;
      if (c === close) break;
      if (separator !== undefined && separator !== c) throw this.fail('mixed "|" and ";" in one group');
      separator = c;
    }
    const optional = close === ']' || options.some(isEmpty);
    const nonEmpty = options.filter((o) => !isEmpty(o));
    if (separator === ';') {
      if (close === ']') throw this.fail('a permutation cannot be optional');
      if (nonEmpty.length > 4) throw this.fail('a permutation has at most 4 parts');
      return { kind: 'alt', optional: false, options: permutations(nonEmpty).map((items) => ({ kind: 'seq', items })) };
    }
    return { kind: 'alt', options: nonEmpty, optional };
  }

  private slot(): TemplateNode {
    const close = this.text.indexOf('}', this.at);
    if (close < 0) throw this.fail('unclosed {slot}');
    const body = this.text.slice(this.at + 1, close).trim();
    this.at = close + 1;
    const [slot, list, extra] = body.split(':').map((s) => s.trim());
    if (!slot || !/^[a-z_][a-z0-9_]*$/.test(slot) || extra !== undefined || (list !== undefined && !/^[a-z_][a-z0-9_]*$/.test(list))) {
      throw this.fail(`bad slot "{${body}}"`);
    }
    return { kind: 'slot', slot, list: list ?? slot };
  }
}

function isEmpty(node: TemplateNode): boolean {
  return node.kind === 'seq' && node.items.length === 0;
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  const out: T[][] = [];
  items.forEach((item, i) => {
    for (const rest of permutations([...items.slice(0, i), ...items.slice(i + 1)])) out.push([item, ...rest]);
  });
  return out;
}

/** Literal words every match of `node` must contain. */
function requiredWords(node: TemplateNode): Set<string> {
  switch (node.kind) {
    case 'words':
      return new Set(node.words);
    case 'slot':
      return new Set();
    case 'seq': {
      const all = new Set<string>();
      for (const item of node.items) for (const w of requiredWords(item)) all.add(w);
      return all;
    }
    case 'alt': {
      if (node.optional || node.options.length === 0) return new Set();
      const [first, ...rest] = node.options.map(requiredWords);
      const common = new Set(first);
      for (const set of rest) for (const w of common) if (!set.has(w)) common.delete(w);
      return common;
    }
  }
}

function slotsOf(node: TemplateNode, out: Array<{ slot: string; list: string }> = []): Array<{ slot: string; list: string }> {
  if (node.kind === 'slot') out.push({ slot: node.slot, list: node.list });
  else if (node.kind === 'seq') node.items.forEach((n) => slotsOf(n, out));
  else if (node.kind === 'alt') node.options.forEach((n) => slotsOf(n, out));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Language file

type Json = Record<string, unknown>;

const TOP_KEYS = new Set([
  'language', 'skip_words', 'articles', 'plural_suffixes', 'numbers', 'symbols', 'expansion_rules', 'lists', 'intents', 'responses', 'words',
]);

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringList(v: unknown, where: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new Error(`${where} must be a list of strings`);
  return v as string[];
}

function stringMap(v: unknown, where: string): Record<string, string> {
  if (v === undefined) return {};
  if (!isObject(v) || !Object.values(v).every((s) => typeof s === 'string')) throw new Error(`${where} must map words to text`);
  return v as Record<string, string>;
}

/**
 * Compiles a parsed language document. Throws an Error naming the offending place (file
 * problems are configuration errors, found at first use of the language).
 */
export function compileLanguage(doc: unknown, source = 'intents'): CompiledLanguage {
  try {
    return compileDocument(doc);
  } catch (e) {
    throw intentErrors.INTENTS_DATA_INVALID({ source, problem: (e as Error).message });
  }
}

function compileDocument(doc: unknown): CompiledLanguage {
  if (!isObject(doc)) throw new Error('the file must be a map');
  for (const key of Object.keys(doc)) if (!TOP_KEYS.has(key)) throw new Error(`unknown key "${key}"`);
  const language = doc.language;
  if (typeof language !== 'string' || !language) throw new Error('"language" is required');

  const numbers: Record<string, number> = {};
  if (doc.numbers !== undefined) {
    if (!isObject(doc.numbers)) throw new Error('"numbers" must map words to numbers');
    for (const [w, n] of Object.entries(doc.numbers)) {
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new Error(`numbers.${w} must be a non-negative integer`);
      numbers[w] = n;
    }
  }
  const normalizer = new Normalizer({
    numbers,
    symbols: stringMap(doc.symbols, 'symbols'),
    skipWords: stringList(doc.skip_words, 'skip_words'),
    articles: stringList(doc.articles, 'articles'),
    pluralSuffixes: stringList(doc.plural_suffixes, 'plural_suffixes'),
  });

  // Lists
  const lists = new Map<string, ListDef>([['number', { type: 'number' }]]);
  if (doc.lists !== undefined && !isObject(doc.lists)) throw new Error('"lists" must be a map');
  for (const [name, def] of Object.entries((doc.lists ?? {}) as Json)) lists.set(name, compileList(name, def, normalizer));

  // Expansion rules, inlined where referenced (cycles rejected).
  const rules = stringMap(doc.expansion_rules, 'expansion_rules');
  const compiledRules = new Map<string, TemplateNode>();
  const expanding: string[] = [];
  const expandRule = (name: string): TemplateNode => {
    const cached = compiledRules.get(name);
    if (cached) return cached;
    const text = rules[name];
    if (text === undefined) throw new Error(`unknown expansion rule <${name}>`);
    if (expanding.includes(name)) throw new Error(`expansion rule <${name}> refers to itself`);
    expanding.push(name);
    const node = new TemplateParser(text, normalizer, expandRule).parse();
    expanding.pop();
    compiledRules.set(name, node);
    return node;
  };

  // Intents
  if (!isObject(doc.intents)) throw new Error('"intents" must be a map of intent names');
  const templates: CompiledTemplate[] = [];
  for (const [intent, groups] of Object.entries(doc.intents)) {
    if (!Array.isArray(groups)) throw new Error(`intents.${intent} must be a list`);
    groups.forEach((group: unknown, gi) => {
      const where = `intents.${intent}[${gi}]`;
      let sentences: string[];
      let fixedSlots: Record<string, string | number> = {};
      let requires: Record<string, string[]> = {};
      if (typeof group === 'string') sentences = [group];
      else if (isObject(group)) {
        for (const key of Object.keys(group)) if (!['sentences', 'slots', 'requires'].includes(key)) throw new Error(`${where}: unknown key "${key}"`);
        sentences = stringList(group.sentences, `${where}.sentences`);
        if (sentences.length === 0) throw new Error(`${where}.sentences must not be empty`);
        if (group.slots !== undefined) {
          if (!isObject(group.slots) || !Object.values(group.slots).every((v) => typeof v === 'string' || typeof v === 'number')) {
            throw new Error(`${where}.slots must map slot names to words or numbers`);
          }
          fixedSlots = group.slots as Record<string, string | number>;
        }
        if (group.requires !== undefined) {
          if (!isObject(group.requires)) throw new Error(`${where}.requires must map slots to capabilities`);
          requires = Object.fromEntries(
            Object.entries(group.requires).map(([slot, caps]) => [slot, typeof caps === 'string' ? [caps] : stringList(caps, `${where}.requires.${slot}`)]),
          );
        }
      } else throw new Error(`${where} must be a sentence or a map with "sentences"`);

      for (const source of sentences) {
        let root: TemplateNode;
        try {
          root = new TemplateParser(source, normalizer, expandRule).parse();
        } catch (e) {
          throw new Error(`${where}: ${(e as Error).message}`);
        }
        for (const { slot, list } of slotsOf(root)) {
          if (!lists.has(list)) throw new Error(`${where}: template "${source}" uses {${slot}} but there is no list "${list}"`);
        }
        templates.push({ intent, source, root, fixedSlots, requires, requiredWords: [...requiredWords(root)], order: templates.length });
      }
    });
  }

  // Responses
  const responses: Record<string, Record<string, string>> = {};
  if (doc.responses !== undefined && !isObject(doc.responses)) throw new Error('"responses" must be a map');
  for (const [key, value] of Object.entries((doc.responses ?? {}) as Json)) {
    responses[key] = typeof value === 'string' ? { default: value } : stringMap(value, `responses.${key}`);
  }

  // Words used in answers
  const w = (doc.words ?? {}) as Json;
  if (!isObject(w)) throw new Error('"words" must be a map');
  const nouns: LanguageWords['nouns'] = {};
  if (w.nouns !== undefined) {
    if (!isObject(w.nouns)) throw new Error('words.nouns must be a map');
    for (const [noun, forms] of Object.entries(w.nouns)) {
      if (typeof forms === 'string') nouns[noun] = { one: forms, other: forms };
      else if (isObject(forms) && typeof forms.one === 'string' && typeof forms.other === 'string') nouns[noun] = { one: forms.one, other: forms.other };
      else throw new Error(`words.nouns.${noun} must be {one, other}`);
    }
  }
  const words: LanguageWords = {
    nouns,
    states: stringMap(w.states, 'words.states'),
    attributes: stringMap(w.attributes, 'words.attributes'),
    units: stringMap(w.units, 'words.units'),
    and: typeof w.and === 'string' ? w.and : 'and',
    or: typeof w.or === 'string' ? w.or : 'or',
  };

  return { language, templates, intents: Object.keys(doc.intents), lists, responses, words, normalizer };
}

function compileList(name: string, def: unknown, normalizer: Normalizer): ListDef {
  const where = `lists.${name}`;
  if (!isObject(def)) throw new Error(`${where} must be a map`);
  const keys = Object.keys(def);
  if (keys.length !== 1) throw new Error(`${where} needs exactly one of entities, range, values`);
  if (def.entities !== undefined) {
    if (!ENTITY_SOURCES.includes(def.entities as EntitySource)) throw new Error(`${where}.entities must be one of ${ENTITY_SOURCES.join(', ')}`);
    return { type: 'entities', source: def.entities as EntitySource };
  }
  if (def.range !== undefined) {
    const r = def.range;
    if (!isObject(r) || typeof r.from !== 'number' || typeof r.to !== 'number' || r.from > r.to) throw new Error(`${where}.range needs numbers from <= to`);
    if (r.fractional !== undefined && typeof r.fractional !== 'boolean') throw new Error(`${where}.range.fractional must be true or false`);
    return { type: 'range', from: r.from, to: r.to, fractional: r.fractional === true };
  }
  if (def.values !== undefined) {
    if (!Array.isArray(def.values)) throw new Error(`${where}.values must be a list`);
    const values = def.values.map((v: unknown, i) => {
      if (typeof v === 'string' || typeof v === 'number') return { words: normalizer.tokens(String(v)), out: v };
      if (isObject(v) && (typeof v.in === 'string' || typeof v.in === 'number') && (typeof v.out === 'string' || typeof v.out === 'number')) {
        return { words: normalizer.tokens(String(v.in)), out: v.out };
      }
      throw new Error(`${where}.values[${i}] must be a word or {in, out}`);
    });
    if (values.some((v) => v.words.length === 0)) throw new Error(`${where}.values has an empty entry`);
    return { type: 'values', values };
  }
  throw new Error(`${where} needs exactly one of entities, range, values`);
}

// ---------------------------------------------------------------------------------------------
// Loading

const LANGUAGE_CODE = /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/i;

/** Compiled files by path, reused while the file is unchanged (compiling is the costly part). */
const compiledFiles = new Map<string, { stamp: string; compiled: CompiledLanguage }>();

/** Reads and compiles `<dataDir>/<language>.yaml` (cached per file while it is unchanged). */
export function loadLanguage(dataDir: string, language: string): CompiledLanguage {
  if (!LANGUAGE_CODE.test(language)) throw intentErrors.INTENTS_LANGUAGE_INVALID({ language });
  const file = path.resolve(dataDir, `${language}.yaml`);
  let text: string;
  let stamp: string;
  try {
    const stat = fs.statSync(file);
    stamp = `${stat.mtimeMs}:${stat.size}`;
    const cached = compiledFiles.get(file);
    if (cached?.stamp === stamp) return cached.compiled;
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw intentErrors.INTENTS_LANGUAGE_UNSUPPORTED({ language });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { version: '1.2', uniqueKeys: true });
  } catch (e) {
    throw intentErrors.INTENTS_DATA_INVALID({ source: file, problem: (e as Error).message });
  }
  const compiled = compileLanguage(doc, file);
  if (compiled.language !== language) throw intentErrors.INTENTS_DATA_INVALID({ source: file, problem: `"language" is ${compiled.language}, expected ${language}` });
  compiledFiles.set(file, { stamp, compiled });
  return compiled;
}
