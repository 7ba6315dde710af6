/**
 * Templates in automation actions: `"{{ trigger.to }}"` or `"Door {{ trigger.deviceId }} open for
 * {{ minutes }} min"` in command params and variables, filled from the run's scope
 * (`{ trigger: {...}, <variable names>: ... }`).
 *
 * Whoever edits an automation writes these, and they run inside the hub, so the language is a
 * small hand-written parser and an evaluator over its tree: no eval, no function calls, and a path
 * reads only own data properties of plain objects and arrays. A template cannot reach a
 * prototype, a getter, a method or a class instance's fields, and cannot write anything.
 *
 * Inside `{{ … }}` (lowest precedence first):
 *   expression := additive (('==' | '!=' | '<' | '<=' | '>' | '>=') additive)?
 *   additive   := term (('+' | '-') term)*
 *   term       := unary (('*' | '/') unary)*
 *   unary      := '-' unary | filtered
 *   filtered   := primary ('|' filter ('(' arguments? ')')?)*
 *   primary    := number | 'string' | "string" | true | false | null | path | '(' expression ')'
 *   path       := identifier ('.' identifier | '[' integer ']' | '[' string ']')*
 * Filters bind tightest, as in Jinja: `a + b | round` is `a + (b | round)`, `-x | int` is `-(x | int)`.
 */

export class TemplateError extends Error {
  override name = 'TemplateError';

  constructor(
    message: string,
    /** Index in the template text where the problem is (0 when it is the whole value). */
    readonly position: number,
  ) {
    super(message);
  }
}

const MAX_TEMPLATE_LENGTH = 2_000;
const MAX_EXPRESSIONS = 64;
const MAX_NESTING = 32;
const MAX_RENDERED_LENGTH = 10_000;
const MAX_CACHED_TEMPLATES = 1_000;
const MAX_VALUE_DEPTH = 16;
const MAX_ROUND_DIGITS = 10;

/** The names that lead from data to prototypes and constructors; refused wherever a name is read. */
const FORBIDDEN_NAMES: ReadonlySet<string> = new Set(['__proto__', 'prototype', 'constructor']);

// ---------------------------------------------------------------------------------------------
// Parsed shapes

type ComparisonOperator = '==' | '!=' | '<' | '<=' | '>' | '>=';
type ArithmeticOperator = '+' | '-' | '*' | '/';
type Conversion = (value: unknown, position: number) => unknown;

type Expression =
  | { kind: 'literal'; value: string | number | boolean | null; position: number }
  | { kind: 'path'; root: string; segments: Array<string | number>; position: number }
  | { kind: 'negate'; operand: Expression; position: number }
  | { kind: 'binary'; operator: ComparisonOperator | ArithmeticOperator; left: Expression; right: Expression; position: number }
  | { kind: 'default'; operand: Expression; fallback: Expression; position: number }
  | { kind: 'round'; operand: Expression; digits: number; position: number }
  | { kind: 'convert'; convert: Conversion; operand: Expression; position: number };

type Part = { kind: 'text'; text: string } | { kind: 'expression'; expression: Expression };

interface ParsedTemplate {
  parts: Part[];
}

// ---------------------------------------------------------------------------------------------
// Values

function isPlainContainer(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null || (prototype === Array.prototype && Array.isArray(value));
}

/** An own data property of a plain object or array; accessors are skipped so no scope code runs. */
function readOwn(container: unknown, key: string | number): unknown {
  if (!isPlainContainer(container)) return undefined;
  const descriptor = Object.getOwnPropertyDescriptor(container, key);
  return descriptor && 'value' in descriptor ? descriptor.value : undefined;
}

function describe(value: unknown): string {
  if (value === undefined) return 'a missing value';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function toJson(value: unknown, position: number): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    // Cycles and bigints: JSON.stringify throws a TypeError, which a render must not let out.
    throw new TemplateError(`${describe(value)} cannot be written as JSON`, position);
  }
}

/** How a value reads inside text: nothing for a missing value or null, JSON for objects. */
function toText(value: unknown, position: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'object') return toJson(value, position);
  return ''; // functions and symbols have no text form
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * A number, a boolean or decimal text (state values often arrive as text). Anything else fails
 * the render instead of becoming 0 as in Jinja: a silent 0 in `brightness` would turn a light off.
 */
function toNumber(value: unknown, filter: string, position: number): number {
  let number: number | undefined;
  if (typeof value === 'number') number = value;
  else if (typeof value === 'boolean') number = Number(value);
  else if (typeof value === 'string' && DECIMAL.test(value.trim())) number = Number(value.trim());
  if (number === undefined || !Number.isFinite(number)) {
    throw new TemplateError(`'${filter}' cannot read ${describe(value)} as a number`, position);
  }
  return number;
}

/**
 * Python's round(), as the MQTT value templates do: the nearest value of the exact binary number
 * (so 1.005 rounds to 1, being a little under), exact halves to the even neighbour (2.5 → 2).
 */
function roundHalfEven(value: number, digits: number): number {
  // From 1e21 toFixed writes an exponent, and such a number has no fraction to round anyway.
  if (Math.abs(value) >= 1e21) return value;
  const nearest = Number(value.toFixed(digits));
  // toFixed rounds the exact value with halves away from zero; toFixed(100) shows whether it is an exact half.
  if (!new RegExp(`\\.\\d{${digits}}50*$`).test(value.toFixed(100))) return nearest + 0;
  const tie = value.toFixed(digits + 1);
  const keptDigit = Number(tie.replace('.', '').at(-2));
  return (keptDigit % 2 === 0 ? Number(tie.slice(0, -1)) : nearest) + 0; // `+ 0` turns -0 into 0
}

/** The filters without arguments; `default` and `round` are parsed on their own. A Map, so a name never reaches a prototype. */
const CONVERSIONS: ReadonlyMap<string, Conversion> = new Map<string, Conversion>([
  ['int', (value, position) => Math.trunc(toNumber(value, 'int', position)) + 0],
  ['float', (value, position) => toNumber(value, 'float', position)],
  ['lower', (value, position) => toText(value, position).toLowerCase()],
  ['upper', (value, position) => toText(value, position).toUpperCase()],
  ['string', (value, position) => toText(value, position)],
  ['json', (value, position) => toJson(value, position)],
]);

// ---------------------------------------------------------------------------------------------
// Lexer: the tokens of one `{{ … }}`, up to its `}}` (a `}}` inside a string literal does not close it)

type Punctuation = '(' | ')' | '[' | ']' | '.' | '|' | ',' | ArithmeticOperator | ComparisonOperator;

type Token =
  | { kind: 'number'; value: number; text: string; position: number }
  | { kind: 'string'; value: string; position: number }
  | { kind: 'identifier'; value: string; position: number }
  | { kind: 'punctuation'; value: Punctuation; position: number }
  | { kind: 'close'; position: number };

const NUMBER = /\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/y;
const IDENTIFIER_ONLY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NAME_CHARACTER = /[A-Za-z0-9_]/;
const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const TWO_CHARACTER_OPERATORS: ReadonlySet<string> = new Set(['==', '!=', '<=', '>=']);
const ONE_CHARACTER_PUNCTUATION: ReadonlySet<string> = new Set(['(', ')', '[', ']', '.', '|', ',', '+', '-', '*', '/', '<', '>']);
const ESCAPES: ReadonlyMap<string, string> = new Map([
  ['\\', '\\'],
  ["'", "'"],
  ['"', '"'],
  ['n', '\n'],
  ['t', '\t'],
]);

function match(pattern: RegExp, text: string, index: number): string | undefined {
  pattern.lastIndex = index;
  return pattern.exec(text)?.[0];
}

function readString(text: string, start: number): { value: string; next: number } {
  const quote = text[start];
  let value = '';
  let index = start + 1;
  while (index < text.length) {
    const character = text[index];
    if (character === quote) return { value, next: index + 1 };
    if (character === '\\') {
      const escaped = ESCAPES.get(text[index + 1] ?? '');
      if (escaped === undefined) throw new TemplateError(`unknown escape '\\${text[index + 1] ?? ''}' in a string (at ${index})`, index);
      value += escaped;
      index += 2;
    } else {
      value += character;
      index += 1;
    }
  }
  throw new TemplateError(`the string opened at ${start} is not closed`, start);
}

function lexExpression(text: string, open: number): { tokens: Token[]; close: Token; next: number } {
  const tokens: Token[] = [];
  let index = open + 2;
  while (index < text.length) {
    const character = text[index] ?? '';
    if (WHITESPACE.has(character)) {
      index += 1;
      continue;
    }
    if (character === '}' && text[index + 1] === '}') {
      return { tokens, close: { kind: 'close', position: index }, next: index + 2 };
    }
    const digits = match(NUMBER, text, index);
    if (digits !== undefined) {
      if (NAME_CHARACTER.test(text[index + digits.length] ?? '')) throw new TemplateError(`a number runs into a name (at ${index})`, index);
      const value = Number(digits);
      if (!Number.isFinite(value)) throw new TemplateError(`the number ${digits} is too large (at ${index})`, index);
      tokens.push({ kind: 'number', value, text: digits, position: index });
      index += digits.length;
      continue;
    }
    const name = match(IDENTIFIER, text, index);
    if (name !== undefined) {
      tokens.push({ kind: 'identifier', value: name, position: index });
      index += name.length;
      continue;
    }
    if (character === '"' || character === "'") {
      const { value, next } = readString(text, index);
      tokens.push({ kind: 'string', value, position: index });
      index = next;
      continue;
    }
    const pair = text.slice(index, index + 2);
    if (TWO_CHARACTER_OPERATORS.has(pair)) {
      tokens.push({ kind: 'punctuation', value: pair as Punctuation, position: index });
      index += 2;
      continue;
    }
    if (ONE_CHARACTER_PUNCTUATION.has(character)) {
      tokens.push({ kind: 'punctuation', value: character as Punctuation, position: index });
      index += 1;
      continue;
    }
    const hint = character === '=' ? " (compare with '==')" : '';
    throw new TemplateError(`unexpected '${character}'${hint} (at ${index})`, index);
  }
  throw new TemplateError(`the '{{' at ${open} is not closed with '}}'`, open);
}

// ---------------------------------------------------------------------------------------------
// Parser: recursive descent over one expression's tokens

const COMPARISONS: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=']);

function describeToken(token: Token): string {
  switch (token.kind) {
    case 'close':
      return "'}}'";
    case 'number':
      return token.text;
    case 'string':
      return 'a string';
    default:
      return `'${token.value}'`;
  }
}

function refuseForbidden(name: string, position: number): void {
  if (FORBIDDEN_NAMES.has(name)) throw new TemplateError(`'${name}' may not be read (at ${position})`, position);
}

class ExpressionParser {
  private index = 0;
  private nesting = 0;

  constructor(
    private readonly tokens: Token[],
    /** The `}}`: what peek() sees past the last token, so the parser never runs off the end. */
    private readonly close: Token,
  ) {}

  parseWhole(): Expression {
    if (this.tokens.length === 0) throw new TemplateError(`empty '{{ }}' (at ${this.close.position})`, this.close.position);
    const expression = this.parseExpression();
    const next = this.peek();
    if (next.kind !== 'close') throw this.unexpected(next, "'}}'");
    return expression;
  }

  private peek(): Token {
    return this.tokens[this.index] ?? this.close;
  }

  private take(value: Punctuation): Token | undefined {
    const token = this.peek();
    if (token.kind !== 'punctuation' || token.value !== value) return undefined;
    this.index += 1;
    return token;
  }

  private expect(value: Punctuation): void {
    if (!this.take(value)) throw this.unexpected(this.peek(), `'${value}'`);
  }

  private unexpected(token: Token, expected: string): TemplateError {
    return new TemplateError(`expected ${expected} but found ${describeToken(token)} (at ${token.position})`, token.position);
  }

  /** Parentheses, filter arguments and unary minus recurse; the bound keeps parse and render stacks short. */
  private nested<T>(position: number, parse: () => T): T {
    this.nesting += 1;
    if (this.nesting > MAX_NESTING) throw new TemplateError(`expression nested deeper than ${MAX_NESTING} levels (at ${position})`, position);
    const result = parse();
    this.nesting -= 1;
    return result;
  }

  private parseExpression(): Expression {
    const left = this.parseAdditive();
    const token = this.peek();
    if (token.kind !== 'punctuation' || !COMPARISONS.has(token.value)) return left;
    this.index += 1;
    const right = this.parseAdditive();
    const chained = this.peek();
    if (chained.kind === 'punctuation' && COMPARISONS.has(chained.value)) {
      // Jinja reads `a < b < c` as `a < b and b < c`, JavaScript as `(a < b) < c`: refuse both readings.
      throw new TemplateError(`comparisons do not chain; use parentheses (at ${chained.position})`, chained.position);
    }
    return { kind: 'binary', operator: token.value as ComparisonOperator, left, right, position: token.position };
  }

  private parseAdditive(): Expression {
    let left = this.parseTerm();
    for (let token = this.peek(); token.kind === 'punctuation' && (token.value === '+' || token.value === '-'); token = this.peek()) {
      this.index += 1;
      left = { kind: 'binary', operator: token.value, left, right: this.parseTerm(), position: token.position };
    }
    return left;
  }

  private parseTerm(): Expression {
    let left = this.parseUnary();
    for (let token = this.peek(); token.kind === 'punctuation' && (token.value === '*' || token.value === '/'); token = this.peek()) {
      this.index += 1;
      left = { kind: 'binary', operator: token.value, left, right: this.parseUnary(), position: token.position };
    }
    return left;
  }

  private parseUnary(): Expression {
    const minus = this.take('-');
    if (!minus) return this.parseFiltered();
    return this.nested(minus.position, () => ({ kind: 'negate', operand: this.parseUnary(), position: minus.position }));
  }

  private parseFiltered(): Expression {
    let expression = this.parsePrimary();
    while (this.take('|')) expression = this.parseFilter(expression);
    return expression;
  }

  private parseFilter(operand: Expression): Expression {
    const name = this.peek();
    if (name.kind !== 'identifier') throw this.unexpected(name, "a filter name after '|'");
    this.index += 1;
    const position = name.position;
    const conversion = CONVERSIONS.get(name.value);
    if (name.value !== 'default' && name.value !== 'round' && !conversion) {
      throw new TemplateError(`unknown filter '${name.value}' (at ${position}); the filters are default, round, ${[...CONVERSIONS.keys()].join(', ')}`, position);
    }
    const args = this.parseArguments();
    if (name.value === 'default') {
      const [fallback] = args;
      if (!fallback || args.length > 1) throw new TemplateError(`'default' takes one argument: default(value) (at ${position})`, position);
      return { kind: 'default', operand, fallback, position };
    }
    if (name.value === 'round') {
      const [digits] = args;
      if (args.length > 1) throw new TemplateError(`'round' takes at most one argument (at ${position})`, position);
      if (digits === undefined) return { kind: 'round', operand, digits: 0, position };
      if (digits.kind !== 'literal' || !Number.isInteger(digits.value) || (digits.value as number) > MAX_ROUND_DIGITS) {
        throw new TemplateError(`'round' takes a whole number of digits from 0 to ${MAX_ROUND_DIGITS} (at ${digits.position})`, digits.position);
      }
      return { kind: 'round', operand, digits: digits.value as number, position };
    }
    if (args.length > 0 || !conversion) throw new TemplateError(`'${name.value}' takes no arguments (at ${position})`, position);
    return { kind: 'convert', convert: conversion, operand, position };
  }

  private parseArguments(): Expression[] {
    const open = this.take('(');
    if (!open) return [];
    const args: Expression[] = [];
    if (this.take(')')) return args;
    do {
      args.push(this.nested(open.position, () => this.parseExpression()));
    } while (this.take(','));
    this.expect(')');
    return args;
  }

  private parsePrimary(): Expression {
    const token = this.peek();
    const position = token.position;
    if (token.kind === 'number' || token.kind === 'string') {
      this.index += 1;
      return { kind: 'literal', value: token.value, position };
    }
    if (token.kind === 'identifier') {
      this.index += 1;
      if (token.value === 'true' || token.value === 'false') return { kind: 'literal', value: token.value === 'true', position };
      if (token.value === 'null') return { kind: 'literal', value: null, position };
      return this.parsePath(token.value, position);
    }
    const open = this.take('(');
    if (!open) throw this.unexpected(token, "a value, a name or '('");
    return this.nested(position, () => {
      const inner = this.parseExpression();
      this.expect(')');
      return inner;
    });
  }

  private parsePath(root: string, position: number): Expression {
    refuseForbidden(root, position);
    const segments: Array<string | number> = [];
    for (;;) {
      if (this.take('.')) {
        const name = this.peek();
        if (name.kind !== 'identifier') throw this.unexpected(name, "a name after '.'");
        refuseForbidden(name.value, name.position);
        segments.push(name.value);
        this.index += 1;
      } else if (this.take('[')) {
        const key = this.peek();
        if (key.kind === 'string') {
          refuseForbidden(key.value, key.position);
          segments.push(key.value);
        } else if (key.kind === 'number' && /^\d+$/.test(key.text) && Number.isSafeInteger(key.value)) {
          segments.push(key.value);
        } else {
          throw this.unexpected(key, "a whole number or a quoted key in '[ ]'");
        }
        this.index += 1;
        this.expect(']');
      } else {
        return { kind: 'path', root, segments, position };
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Templates and their cache

/** By source text: the same params render on every run. Insertion order is age, so the first key is the oldest. */
const parsedTemplates = new Map<string, ParsedTemplate>();

function parseTemplate(text: string): ParsedTemplate {
  const cached = parsedTemplates.get(text);
  if (cached) return cached;
  if (text.length > MAX_TEMPLATE_LENGTH) {
    throw new TemplateError(`a template is at most ${MAX_TEMPLATE_LENGTH} characters; this one has ${text.length}`, MAX_TEMPLATE_LENGTH);
  }
  const parts: Part[] = [];
  let expressions = 0;
  let index = 0;
  while (index < text.length) {
    const open = text.indexOf('{{', index);
    if (open === -1) {
      parts.push({ kind: 'text', text: text.slice(index) });
      break;
    }
    if (open > index) parts.push({ kind: 'text', text: text.slice(index, open) });
    expressions += 1;
    if (expressions > MAX_EXPRESSIONS) throw new TemplateError(`a template has at most ${MAX_EXPRESSIONS} '{{ }}' parts (at ${open})`, open);
    const { tokens, close, next } = lexExpression(text, open);
    parts.push({ kind: 'expression', expression: new ExpressionParser(tokens, close).parseWhole() });
    index = next;
  }
  const template: ParsedTemplate = { parts };
  if (parsedTemplates.size >= MAX_CACHED_TEMPLATES) {
    const oldest = parsedTemplates.keys().next();
    if (!oldest.done) parsedTemplates.delete(oldest.value);
  }
  parsedTemplates.set(text, template);
  return template;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

function isNothing(value: unknown): boolean {
  return value === undefined || value === null;
}

function isScalar(value: unknown): boolean {
  return isNothing(value) || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function compare(operator: ComparisonOperator, left: unknown, right: unknown, position: number): boolean {
  if (operator === '==' || operator === '!=') {
    // Objects would compare by identity, which no template author means: refuse rather than answer false.
    if (!isScalar(left) || !isScalar(right)) {
      throw new TemplateError(`'${operator}' compares numbers, strings, booleans and null, not ${describe(left)} and ${describe(right)} (at ${position})`, position);
    }
    // A missing value and null are both "no value".
    const equal = isNothing(left) && isNothing(right) ? true : left === right;
    return operator === '==' ? equal : !equal;
  }
  const comparable = (typeof left === 'number' && typeof right === 'number') || (typeof left === 'string' && typeof right === 'string');
  if (!comparable) {
    throw new TemplateError(`'${operator}' compares two numbers or two strings, not ${describe(left)} and ${describe(right)} (at ${position})`, position);
  }
  const [a, b] = [left as number | string, right as number | string];
  switch (operator) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    default:
      return a >= b;
  }
}

function calculate(operator: ArithmeticOperator, left: unknown, right: unknown, position: number): number {
  if (typeof left !== 'number' || typeof right !== 'number') {
    throw new TemplateError(`'${operator}' needs two numbers, not ${describe(left)} and ${describe(right)} (at ${position})`, position);
  }
  if (operator === '/' && right === 0) throw new TemplateError(`division by zero (at ${position})`, position);
  const result = operator === '+' ? left + right : operator === '-' ? left - right : operator === '*' ? left * right : left / right;
  // Infinity and NaN have no JSON form and mean nothing to a device.
  if (!Number.isFinite(result)) throw new TemplateError(`'${operator}' gives no finite number (at ${position})`, position);
  return result;
}

function evaluate(node: Expression, scope: Record<string, unknown>): unknown {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'path': {
      let value = readOwn(scope, node.root);
      for (const segment of node.segments) {
        if (value === undefined) return undefined;
        value = readOwn(value, segment);
      }
      return value;
    }
    case 'negate': {
      const operand = evaluate(node.operand, scope);
      if (typeof operand !== 'number') throw new TemplateError(`'-' needs a number, not ${describe(operand)} (at ${node.position})`, node.position);
      return -operand + 0;
    }
    case 'binary': {
      const left = evaluate(node.left, scope);
      const right = evaluate(node.right, scope);
      return COMPARISONS.has(node.operator)
        ? compare(node.operator as ComparisonOperator, left, right, node.position)
        : calculate(node.operator as ArithmeticOperator, left, right, node.position);
    }
    case 'default': {
      const value = evaluate(node.operand, scope);
      return isNothing(value) || value === '' ? evaluate(node.fallback, scope) : value;
    }
    case 'round':
      return roundHalfEven(toNumber(evaluate(node.operand, scope), 'round', node.position), node.digits);
    case 'convert':
      return node.convert(evaluate(node.operand, scope), node.position);
  }
}

function limitRendered(length: number, position: number): void {
  if (length > MAX_RENDERED_LENGTH) throw new TemplateError(`the rendered text is longer than ${MAX_RENDERED_LENGTH} characters (at ${position})`, position);
}

/** Whatever else escaped (a scope object's proxy trap, say) is reported as a TemplateError too. */
function asTemplateError(error: unknown): TemplateError {
  if (error instanceof TemplateError) return error;
  const reason = error instanceof Error ? `: ${error.message}` : '';
  return new TemplateError(`the template failed${reason}`, 0);
}

function withPath(error: TemplateError, path: string): TemplateError {
  return path === '' ? error : new TemplateError(`${path}: ${error.message}`, error.position);
}

// ---------------------------------------------------------------------------------------------
// Public functions

/** Checks a template string at save time: throws TemplateError naming the problem. */
export function checkTemplate(text: string): void {
  if (!isTemplate(text)) return;
  try {
    parseTemplate(text);
  } catch (error) {
    throw asTemplateError(error);
  }
}

/** Whether a string contains `{{`. */
export function isTemplate(text: string): boolean {
  return text.includes('{{');
}

/**
 * Renders: when the WHOLE string is one `{{ expr }}`, the expression's value is returned with its
 * type (number, boolean, object); otherwise the parts are concatenated as text (undefined/null
 * render as ''; objects as JSON). Text around the braces, even a space, makes it text.
 */
export function renderTemplate(text: string, scope: Record<string, unknown>): unknown {
  if (!isTemplate(text)) return text;
  try {
    const { parts } = parseTemplate(text);
    const [only] = parts;
    if (parts.length === 1 && only?.kind === 'expression') {
      const value = evaluate(only.expression, scope);
      if (typeof value === 'string') limitRendered(value.length, only.expression.position);
      return value;
    }
    let rendered = '';
    for (const part of parts) {
      if (part.kind === 'text') {
        rendered += part.text;
      } else {
        rendered += toText(evaluate(part.expression, scope), part.expression.position);
        limitRendered(rendered.length, part.expression.position);
      }
    }
    return rendered;
  } catch (error) {
    throw asTemplateError(error);
  }
}

function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (IDENTIFIER_ONLY.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/** Applies `onString` to every string in plain objects and arrays, building new containers. */
function mapStrings(value: unknown, path: string, depth: number, onString: (text: string, path: string) => unknown): unknown {
  if (typeof value === 'string') return onString(value, path);
  if (!isPlainContainer(value)) return value;
  // The bound also ends a walk through a cycle.
  if (depth >= MAX_VALUE_DEPTH) throw withPath(new TemplateError(`nested deeper than ${MAX_VALUE_DEPTH} levels`, 0), path);
  if (Array.isArray(value)) return value.map((item: unknown, index) => mapStrings(item, joinPath(path, index), depth + 1, onString));
  // fromEntries defines own properties, so a `__proto__` key stays a key and never sets a prototype.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, joinPath(path, key), depth + 1, onString)]));
}

/**
 * Walks a JSON-like value (objects, arrays) and renders every string that is a template; other
 * values are returned as they are. Bounded: depth at most 16. Errors name the failing key's path.
 */
export function renderDeep(value: unknown, scope: Record<string, unknown>): unknown {
  try {
    return mapStrings(value, '', 0, (text, path) => {
      if (!isTemplate(text)) return text;
      try {
        return renderTemplate(text, scope);
      } catch (error) {
        throw withPath(asTemplateError(error), path);
      }
    });
  } catch (error) {
    throw asTemplateError(error);
  }
}

/** Checks every template string in a JSON-like value; throws TemplateError with `path` (e.g. "params.brightness") in the message. */
export function checkDeep(value: unknown, path: string): void {
  try {
    mapStrings(value, path, 0, (text, at) => {
      try {
        checkTemplate(text);
      } catch (error) {
        throw withPath(asTemplateError(error), at);
      }
      return text;
    });
  } catch (error) {
    throw asTemplateError(error);
  }
}
