import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TObject, TSchema } from 'typebox';
import { errors } from './errors.js';
import { normalizeRefs, objectPart } from './schema-parts.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/**
 * An operation's input as a surface received it. Values that carry JSON types (a request body,
 * a hub command payload) are taken as they are: a number where a string belongs is a client
 * error, not something to fix. Values that arrived as text (path segments, the query string)
 * are converted to the declared types, and text fields the operation does not declare are
 * dropped (cache busters, tokens in SSE URLs).
 */
export interface CallInput {
  json?: unknown;
  /** What the JSON part is called in error details: `body`, `payload`, `querystring`. */
  jsonLabel?: string;
  text?: { params?: Record<string, unknown>; querystring?: Record<string, unknown> };
  /**
   * Fields the JSON part may not carry (a route takes them from its path or query string): left
   * out of the validator's copy of it, so that a surface need not copy it once more itself.
   */
  jsonOmit?: readonly string[];
}

const common: Options = { allErrors: false, useDefaults: true, strict: false };
// Defaults are the whole input's business: a text part must not fill in a field another part carries.
const textAjv = addFormats(new Ajv({ ...common, useDefaults: false, coerceTypes: 'array', removeAdditional: 'all' }));
const jsonAjv = addFormats(new Ajv({ ...common, coerceTypes: false, removeAdditional: false }));

interface Compiled {
  json: ValidateFunction;
  text: ValidateFunction;
  /** The input's fields declared as plain strings: a text value for one of them needs no conversion. */
  stringFields: ReadonlySet<string>;
}

interface OperationLike {
  readonly name: string;
  readonly input: TSchema;
}

/** A JSON Schema validator's complaint, as ajv (and Fastify, which runs ajv) reports it. */
export interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function detailsOf(label: string, issues: readonly ValidationIssue[] | null | undefined) {
  return (issues ?? []).map((issue) => {
    const path = (issue.instancePath ?? '').split('/').filter(Boolean).join('.');
    const missing = typeof issue.params?.missingProperty === 'string' ? issue.params.missingProperty : undefined;
    const extra = typeof issue.params?.additionalProperty === 'string' ? issue.params.additionalProperty : undefined;
    return { field: [label, path, missing ?? extra].filter(Boolean).join('.'), message: issue.message ?? 'is invalid' };
  });
}

/** VALIDATION_FAILED naming each offending field as `<label>.<path>`: the one shape every surface answers. */
export function validationFailure(label: string, issues: readonly ValidationIssue[] | null | undefined) {
  const details = detailsOf(label, issues);
  const first = details[0] ?? { field: label, message: 'is invalid' };
  return errors.VALIDATION_FAILED({ field: first.field, problem: first.message }, { details });
}

function isEmpty(part: Record<string, unknown>): boolean {
  for (const _ in part) return false;
  return true;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The JSON part as the validator's own copy (defaults are filled into it), without the fields it may not carry. */
function jsonCopy(input: CallInput, jsonLabel: string): Record<string, unknown> {
  const { json, jsonOmit } = input;
  if (json === undefined || json === null) return {};
  if (!isPlainObject(json)) throw validationFailure(jsonLabel, [{ instancePath: '', message: 'must be object', params: {} }]);
  if (!jsonOmit || jsonOmit.length === 0) return { ...json };
  // Assigned key by key (not copied and `delete`d: a deleted key turns the object into a slow
  // dictionary), as the HTTP surface's own copy was; an assigned `__proto__` was never a field of it.
  const value: Record<string, unknown> = {};
  for (const key in json) if (key !== '__proto__' && !jsonOmit.includes(key)) value[key] = json[key];
  return value;
}

/**
 * Whether the text parts need no text pass: every value a string for a field declared a string
 * (nothing to convert, nothing undeclared to drop), and no field in both parts (the query
 * string's would be checked by the text pass, then replaced by the path's).
 */
function takenAsIs(text: CallInput['text'], stringFields: ReadonlySet<string>): boolean {
  const query = text?.querystring;
  const params = text?.params;
  if (query) for (const key of Object.keys(query)) if (!stringFields.has(key) || typeof query[key] !== 'string' || (params && Object.hasOwn(params, key))) return false;
  if (params) for (const key of Object.keys(params)) if (!stringFields.has(key) || typeof params[key] !== 'string') return false;
  return true;
}

/**
 * One validator and one set of coercion and default rules for every surface. Each operation's
 * validators are compiled on its first call, so a start does not pay for routes nobody uses.
 */
export class InputValidators {
  private readonly compiled = new WeakMap<OperationLike, Compiled>();

  validate(op: OperationLike, input: CallInput): unknown {
    const compiled = this.compile(op);
    const { json, text } = compiled;
    const jsonLabel = input.jsonLabel ?? 'body';
    let value = jsonCopy(input, jsonLabel);
    // Text parts that are only strings for string fields (a device id in the path) would come out
    // of the text pass as they went in: one pass over the whole input decides. When it fails, the
    // two passes run after all, so a bad path segment is still reported as `params.…`.
    if (takenAsIs(input.text, compiled.stringFields)) {
      const { querystring, params } = input.text ?? {};
      if (querystring) Object.assign(value, querystring);
      if (params) Object.assign(value, params);
      if (json(value)) return value;
      if ((!querystring || isEmpty(querystring)) && (!params || isEmpty(params))) throw validationFailure(jsonLabel, json.errors);
      value = jsonCopy(input, jsonLabel);
    }
    for (const label of ['querystring', 'params'] as const) {
      const part = input.text?.[label];
      if (!part || isEmpty(part)) continue;
      const converted = { ...part };
      if (!text(converted)) throw validationFailure(label, text.errors);
      Object.assign(value, converted);
    }
    if (!json(value)) throw validationFailure(jsonLabel, json.errors);
    return value;
  }

  compile(op: OperationLike): Compiled {
    let found = this.compiled.get(op);
    if (!found) {
      const schema = normalizeRefs(op.input);
      const { object, wrap } = objectPart(schema);
      // Text parts carry only some fields: none is required there; the whole input is checked after.
      const textPart = { type: 'object', properties: object.properties } as unknown as TObject;
      const stringFields = new Set<string>();
      for (const [name, prop] of Object.entries(object.properties as Record<string, { type?: unknown }>)) if (prop.type === 'string') stringFields.add(name);
      found = { json: jsonAjv.compile(schema as object), text: textAjv.compile(wrap(textPart) as object), stringFields };
      this.compiled.set(op, found);
    }
    return found;
  }
}
