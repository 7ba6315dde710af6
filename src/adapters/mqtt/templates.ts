/**
 * Home Assistant value templates (Jinja), rendered with nunjucks plus HA's common filters.
 *
 * The templates come from discovery payloads, so from anyone who can publish to the broker, and
 * nunjucks is no sandbox: `range.constructor("return process")()` reaches Node, and in 3.2.4 a
 * crafted name (`{{ x"&&Function`...``&&" }}`) is pasted into the generated JavaScript. Three
 * guards close that: the syntax tree is checked against a plain Jinja subset before nunjucks
 * compiles it (names are identifiers, only names are called, no macros, imports or includes);
 * each render gets a copy of nunjucks' runtime helpers whose lookups see data only (own
 * properties that are no functions, nothing inherited from Object.prototype); and filters come
 * from an allowlist. Work is bounded by the source size, a budget of loop items and the output size.
 *
 * Output follows Python where that is cheap: `{{ true }}` renders `True`, `{{ none }}` renders
 * `None`. A whole float renders without `.0` (`12`, where HA renders `12.0`).
 */
import nunjucks from 'nunjucks';

export const TEMPLATE_SOURCE_LIMIT = 4096;
export const TEMPLATE_OUTPUT_LIMIT = 65_536;
/** Loop items one render may go through (nested loops count every inner item). */
const LOOP_ITEM_LIMIT = 10_000;
/** Longest string the `replace` filter may make: one step must not build a huge string. */
const REPLACE_RESULT_LIMIT = 1_000_000;

export class TemplateError extends Error {
  override name = 'TemplateError';
}

export interface TemplateVariables {
  value: string;
  /** The payload parsed as JSON; leave it undefined when the payload is no JSON. */
  value_json?: unknown;
  [name: string]: unknown;
}

export interface CompiledTemplate {
  /** Throws TemplateError. */
  render(vars: TemplateVariables): string;
}

// ---- HA's filters -------------------------------------------------------------------------------

type Named = Record<string, unknown>;

/** Filter arguments by name: nunjucks passes `f(1, base=16)` as (1, { base: 16, __keywords: true }). */
function argumentsByName(args: unknown[], names: readonly string[]): Named {
  const last = args.at(-1);
  const keywords = typeof last === 'object' && last !== null && Object.hasOwn(last, '__keywords') ? (last as Named) : undefined;
  const positional = keywords ? args.slice(0, -1) : args;
  return Object.fromEntries(names.map((name, i) => [name, keywords && Object.hasOwn(keywords, name) ? keywords[name] : positional[i]]));
}

const text = (value: unknown): string => (value === undefined || value === null ? '' : String(value));

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** Python's float(): a number, a boolean or a decimal string (blanks around it allowed); else undefined. */
function toFloat(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return Number(value);
  if (typeof value !== 'string' && !(value instanceof nunjucks.runtime.SafeString)) return undefined;
  const trimmed = String(value).trim();
  return DECIMAL.test(trimmed) ? Number(trimmed) : undefined;
}

const INT_PREFIX: Record<number, string> = { 2: '0b', 8: '0o', 16: '0x' };

/** Python's int(text, base) for 2 <= base <= 36: an optional sign and prefix, then digits of that base. */
function parseIntInBase(value: string, base: number): number | undefined {
  if (!Number.isInteger(base) || base < 2 || base > 36) return undefined;
  let digits = value.trim().toLowerCase();
  const sign = digits.startsWith('-') ? -1 : 1;
  digits = digits.replace(/^[+-]/, '');
  const prefix = INT_PREFIX[base];
  if (prefix && digits.startsWith(prefix)) digits = digits.slice(prefix.length);
  const valid = digits !== '' && [...digits].every((digit) => parseInt(digit, 36) < base);
  return valid ? sign * parseInt(digits, base) : undefined;
}

/** Jinja's int: an integer string in `base`, else anything float() reads, truncated ("12.7" is 12). */
function intFilter(value: unknown, ...args: unknown[]): unknown {
  const { default: fallback = 0, base = 10 } = argumentsByName(args, ['default', 'base']);
  if (typeof value === 'string' && base !== 10) {
    const parsed = parseIntInBase(value, Number(base));
    if (parsed !== undefined) return parsed;
  }
  const number = toFloat(value);
  return number !== undefined && Number.isFinite(number) ? Math.trunc(number) : fallback;
}

function floatFilter(value: unknown, ...args: unknown[]): unknown {
  const { default: fallback = 0 } = argumentsByName(args, ['default']);
  return toFloat(value) ?? fallback;
}

/** Python's round(): to the nearest, exact halves to the even neighbour (round(2.5) == 2, round(0.125, 2) == 0.12). */
function roundHalfEven(x: number, digits: number): number {
  if (digits < 0) return roundHalfEven(x / 10 ** -digits, 0) * 10 ** -digits;
  if (digits > 20 || !Number.isFinite(x)) return x;
  // toFixed rounds the exact binary value, so only exact halves (dyadic, few digits) need care;
  // toFixed(100) shows such a value's exact expansion.
  const nearest = Number(x.toFixed(digits));
  if (!new RegExp(`\\.\\d{${digits}}50*$`).test(x.toFixed(100))) return nearest;
  const tie = x.toFixed(digits + 1);
  const keptDigit = Number(tie.replace('.', '').at(-2));
  return keptDigit % 2 === 0 ? Number(tie.slice(0, -1)) : nearest;
}

/** HA's round(precision=0, method='common'|'ceil'|'floor'|'half'); a non-number is returned as is. */
function roundFilter(value: unknown, ...args: unknown[]): unknown {
  const { precision = 0, method = 'common', default: fallback } = argumentsByName(args, ['precision', 'method', 'default']);
  const number = toFloat(value);
  const digits = Number(precision);
  if (number === undefined || !Number.isInteger(digits)) return fallback === undefined ? value : fallback;
  const scale = 10 ** digits;
  switch (method) {
    case 'ceil':
      return Math.ceil(number * scale) / scale;
    case 'floor':
      return Math.floor(number * scale) / scale;
    case 'half':
      return roundHalfEven(number * 2, 0) / 2;
    default:
      return roundHalfEven(number, digits);
  }
}

function multiplyFilter(value: unknown, ...args: unknown[]): unknown {
  const { factor, default: fallback } = argumentsByName(args, ['factor', 'default']);
  const number = toFloat(value);
  const by = toFloat(factor);
  if (number === undefined || by === undefined) return fallback === undefined ? value : fallback;
  return number * by;
}

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on', 'enable']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'off', 'disable']);

/** HA's bool: cv.boolean's words and numbers; anything else is the default, or an error without one. */
function boolFilter(value: unknown, ...args: unknown[]): unknown {
  const { default: fallback } = argumentsByName(args, ['default']);
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  const word = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  if (word !== undefined && TRUE_WORDS.has(word)) return true;
  if (word !== undefined && FALSE_WORDS.has(word)) return false;
  if (fallback !== undefined) return fallback;
  throw new TemplateError(`bool got '${text(value)}', which is no boolean, and no default`);
}

function fromJsonFilter(value: unknown, ...args: unknown[]): unknown {
  const { default: fallback } = argumentsByName(args, ['default']);
  try {
    return JSON.parse(text(value)) as unknown;
  } catch (error) {
    if (fallback !== undefined) return fallback;
    throw new TemplateError(`from_json: ${(error as Error).message}`);
  }
}

/** Python's str.replace(old, new, count); nunjucks' own takes regular expressions and grows without bound. */
function replaceFilter(value: unknown, ...args: unknown[]): string {
  const { old, new: replacement, count } = argumentsByName(args, ['old', 'new', 'count']);
  const source = text(value);
  const from = text(old);
  const to = text(replacement);
  const parts = from === '' ? ['', ...source, ''] : source.split(from);
  const wanted = Number(count);
  const times = Number.isInteger(wanted) && wanted >= 0 ? Math.min(wanted, parts.length - 1) : parts.length - 1;
  if (source.length + times * to.length > REPLACE_RESULT_LIMIT) throw new TemplateError(`replace would make more than ${REPLACE_RESULT_LIMIT} characters`);
  const rest = parts.slice(times + 1);
  return parts.slice(0, times + 1).join(to) + (rest.length > 0 ? from + rest.join(from) : '');
}

function isDefinedFilter(value: unknown): unknown {
  if (value === undefined) throw new TemplateError('is_defined: the value is undefined');
  return value;
}

const toJson = (value: unknown): string => JSON.stringify(value) ?? '';

const HOME_ASSISTANT_FILTERS: Record<string, (value: unknown, ...args: unknown[]) => unknown> = {
  int: intFilter,
  float: floatFilter,
  round: roundFilter,
  multiply: multiplyFilter,
  bool: boolFilter,
  is_defined: isDefinedFilter,
  from_json: fromJsonFilter,
  tojson: toJson,
  to_json: toJson,
  replace: replaceFilter,
  // nunjucks' lower and upper fail on a number; Jinja's take anything.
  lower: (value) => text(value).toLowerCase(),
  upper: (value) => text(value).toUpperCase(),
};

/**
 * nunjucks' filters kept: those whose work is linear in their input and which hand back no
 * functions. Left out: indent, center, batch and slice (a size argument makes their work), attr
 * and the like, groupby, random, urlize and the HTML ones.
 */
const NUNJUCKS_FILTERS = [
  'abs', 'capitalize', 'd', 'default', 'dictsort', 'dump', 'e', 'escape', 'first', 'join', 'last', 'length',
  'list', 'reject', 'rejectattr', 'reverse', 'safe', 'select', 'selectattr', 'sort', 'string', 'sum', 'title',
  'trim', 'truncate', 'urlencode', 'wordcount',
];
const ALLOWED_FILTERS = new Set([...NUNJUCKS_FILTERS, ...Object.keys(HOME_ASSISTANT_FILTERS)]);

class HomeAssistantEnvironment extends nunjucks.Environment {
  override getFilter(name: string): (...args: unknown[]) => unknown {
    if (!ALLOWED_FILTERS.has(name)) throw new TemplateError(`filter not available: ${name}`);
    return super.getFilter(name) as (...args: unknown[]) => unknown;
  }
}

/** Python's range(), refused beyond the loop budget (nunjucks' builds the whole list first). */
function boundedRange(start: number, stop?: number, step = 1): number[] {
  const [from, to] = stop === undefined ? [0, start] : [start, stop];
  const length = Math.max(0, Math.ceil((to - from) / step));
  if (!Number.isFinite(length) || length > LOOP_ITEM_LIMIT) throw new TemplateError(`range of more than ${LOOP_ITEM_LIMIT} numbers`);
  return Array.from({ length }, (_, i) => from + i * step);
}

const ENVIRONMENT_OPTIONS = { autoescape: false, throwOnUndefined: false };
// No loaders: an empty list, since none at all means a FileSystemLoader on ./views.
const environment = new HomeAssistantEnvironment([], ENVIRONMENT_OPTIONS);
for (const [name, filter] of Object.entries(HOME_ASSISTANT_FILTERS)) environment.addFilter(name, filter);
environment.addGlobal('range', boundedRange);
/** The functions a template may call. */
const CALLABLE_GLOBALS = new Set(['range']);

// ---- the checks on the syntax tree ---------------------------------------------------------------

/** A nunjucks syntax tree node (nunjucks/src/nodes.js): `fields` names the children. */
interface TemplateNode {
  typename: string;
  fields: string[];
  [field: string]: unknown;
}

const isNode = (value: unknown): value is TemplateNode => typeof value === 'object' && value !== null && 'typename' in value;

/** The node types of plain Jinja expressions, output, if, for and set; no macros, blocks, imports or includes. */
const ALLOWED_NODES = new Set([
  'Root', 'NodeList', 'Output', 'TemplateData', 'Literal', 'Symbol', 'Group', 'Array', 'Dict', 'Pair', 'KeywordArgs',
  'LookupVal', 'FunCall', 'Filter', 'If', 'InlineIf', 'For', 'Set', 'Capture', 'Compare', 'CompareOperand', 'In', 'Is',
  'Or', 'And', 'Not', 'Add', 'Concat', 'Sub', 'Mul', 'Div', 'FloorDiv', 'Mod', 'Pow', 'Neg', 'Pos',
]);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const isName = (node: unknown): boolean => isNode(node) && node.typename === 'Symbol';

function* nodesOf(node: TemplateNode): Generator<TemplateNode> {
  yield node;
  for (const field of node.fields) {
    for (const child of [node[field]].flat()) if (isNode(child)) yield* nodesOf(child);
  }
}

/**
 * Why `node` may not be compiled, or undefined. nunjucks pastes names into the JavaScript it
 * generates unescaped, so every place it takes a name must hold an identifier.
 */
function refusal(node: TemplateNode): string | undefined {
  if (!ALLOWED_NODES.has(node.typename)) return `${node.typename} is not supported`;
  if (node.typename === 'Symbol' && !IDENTIFIER.test(String(node.value))) return `'${String(node.value)}' is no name`;
  if (node.typename === 'Literal' && node.value instanceof RegExp) return 'regular expression literals are not supported';
  if ((node.typename === 'FunCall' || node.typename === 'Filter') && !isName(node.name)) return 'only a name can be called';
  // Refused when the config is read, not on every payload: a filter or function the hub lacks (regex_findall, now()…).
  if (node.typename === 'Filter' && !ALLOWED_FILTERS.has(String((node.name as TemplateNode).value))) return `filter not available: ${String((node.name as TemplateNode).value)}`;
  if (node.typename === 'FunCall' && !CALLABLE_GLOBALS.has(String((node.name as TemplateNode).value))) return `function not available: ${String((node.name as TemplateNode).value)}()`;
  if (node.typename === 'Is' && !isName(node.right) && !(isNode(node.right) && isName(node.right.name))) return 'a test must be a name';
  if (node.typename === 'For' && !(isName(node.name) || (isNode(node.name) && (node.name.children as unknown[]).every(isName)))) return 'a loop variable must be a name';
  if (node.typename === 'Set' && !(node.targets as unknown[]).every(isName)) return 'set needs names';
  return undefined;
}

// ---- the guarded runtime ------------------------------------------------------------------------

/** The nunjucks internals (3.2.4) used here; nunjucks' types leave them out. */
interface NunjucksRuntime {
  fromIterator(items: unknown): unknown;
  suppressValue(value: unknown, autoescape: boolean): unknown;
  contextOrFrameLookup(context: unknown, frame: unknown, name: string): unknown;
  memberLookup(target: unknown, key: unknown): unknown;
}
type RenderBody = (env: unknown, context: unknown, frame: unknown, runtime: NunjucksRuntime, done: unknown) => void;
const internals = nunjucks as unknown as {
  runtime: NunjucksRuntime;
  parser: { parse(source: string, extensions: unknown[], opts: object): TemplateNode };
};

function itemCount(items: unknown): number {
  if (typeof items === 'string' || Array.isArray(items)) return items.length;
  return typeof items === 'object' && items !== null ? Object.keys(items).length : 0;
}

/** nunjucks' runtime helpers for one render, with data-only lookups, a loop budget and an output budget. */
function guardedRuntime(): NunjucksRuntime {
  let loopItemsLeft = LOOP_ITEM_LIMIT;
  let outputLeft = TEMPLATE_OUTPUT_LIMIT;
  return {
    ...internals.runtime,
    memberLookup(target, key) {
      if (target === undefined || target === null || (typeof key !== 'string' && typeof key !== 'number')) return undefined;
      if (!Object.hasOwn(Object(target), key)) return undefined;
      const value = (target as Record<string | number, unknown>)[key];
      return typeof value === 'function' ? undefined : value;
    },
    contextOrFrameLookup(context, frame, name) {
      // The context is a plain object: `{{ constructor }}` would be Object.
      return name in Object.prototype ? undefined : internals.runtime.contextOrFrameLookup(context, frame, name);
    },
    fromIterator(items) {
      const iterable = internals.runtime.fromIterator(items);
      loopItemsLeft -= itemCount(iterable);
      if (loopItemsLeft < 0) throw new TemplateError(`loops over more than ${LOOP_ITEM_LIMIT} items`);
      return iterable;
    },
    suppressValue(value, autoescape) {
      if (outputLeft <= 0) return '';
      const shown = typeof value === 'boolean' ? (value ? 'True' : 'False') : value === null ? 'None' : value;
      const output = String(internals.runtime.suppressValue(shown, autoescape));
      const kept = output.length > outputLeft ? output.slice(0, outputLeft) : output;
      outputLeft -= output.length;
      return kept;
    },
  };
}

// ---- compiling ----------------------------------------------------------------------------------

function describe(error: unknown): string {
  // nunjucks wraps what a filter throws; its own message says it best.
  const cause = error instanceof Error && error.cause instanceof TemplateError ? error.cause : error;
  return (cause instanceof Error ? cause.message : String(cause)).replace(/^\(unknown path\)\s*/, '').replace(/\s+/g, ' ');
}

/** Compiles a Home Assistant template once; throws TemplateError when it is too long, bad Jinja or outside the supported subset. */
/**
 * Compiled templates by source: a thousand devices of one firmware share a handful of templates,
 * and compiling is most of the cost of reading a config. Bounded (oldest out first); a template
 * holds no state between renders, so one compiled template serves every device using it.
 */
const compiled = new Map<string, CompiledTemplate>();
const MAX_COMPILED = 2000;

export function compileTemplate(source: string): CompiledTemplate {
  const known = compiled.get(source);
  if (known) return known;
  const template = compileNow(source);
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(source, template);
  return template;
}

function compileNow(source: string): CompiledTemplate {
  if (source.length > TEMPLATE_SOURCE_LIMIT) throw new TemplateError(`template is longer than ${TEMPLATE_SOURCE_LIMIT} characters`);
  let template: nunjucks.Template & { rootRenderFunc?: RenderBody };
  try {
    const ast = internals.parser.parse(source, [], ENVIRONMENT_OPTIONS);
    for (const node of nodesOf(ast)) {
      const reason = refusal(node);
      if (reason) throw new TemplateError(reason);
    }
    template = new nunjucks.Template(source, environment, undefined, true);
  } catch (error) {
    throw new TemplateError(`template does not compile: ${describe(error)}`, { cause: error });
  }
  const body = template.rootRenderFunc;
  // Fail closed should an upgrade of nunjucks rename what the guards hook into.
  if (typeof body !== 'function') throw new TemplateError('this nunjucks cannot be guarded');
  template.rootRenderFunc = (env, context, frame, _runtime, done) => body(env, context, frame, guardedRuntime(), done);
  return {
    render(vars) {
      try {
        return template.render(vars).slice(0, TEMPLATE_OUTPUT_LIMIT);
      } catch (error) {
        throw new TemplateError(`template failed: ${describe(error)}`, { cause: error });
      }
    },
  };
}
