type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keywords whose value is one subschema. */
const SUBSCHEMA = ['additionalProperties', 'additionalItems', 'unevaluatedProperties', 'unevaluatedItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else'];
/** Keywords whose value is a list of subschemas. */
const SUBSCHEMA_LIST = ['oneOf', 'anyOf', 'allOf', 'prefixItems'];
/** Keywords whose value maps names to subschemas (`dependencies` may also map to a list of names). */
const SUBSCHEMA_MAP = ['properties', 'patternProperties', 'definitions', '$defs', 'dependencies', 'dependentSchemas'];

/**
 * A plugin's config.schema.json `schema` in standard JSON Schema (draft-07, as ajv takes it).
 * Homebridge's dialect (config-ui-x's form library, after JSON Schema draft-03) marks a property
 * with `"required": true`; standard JSON Schema lists the names in the object's `required`.
 * Every boolean `required` goes, and a true one on a property adds its name to the parent's list.
 * Nothing else changes; the input is not modified.
 */
export function toStandardJsonSchema(schema: unknown): unknown {
  return translate(schema).schema;
}

function translate(node: unknown): { schema: unknown; required: boolean } {
  if (Array.isArray(node)) return { schema: node.map((item) => translate(item).schema), required: false };
  if (!isObject(node)) return { schema: node, required: false };
  const out: Json = { ...node };
  const required = out.required === true;
  if (typeof out.required === 'boolean') delete out.required;
  for (const key of SUBSCHEMA) if (key in out) out[key] = translate(out[key]).schema;
  for (const key of SUBSCHEMA_LIST) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((s) => translate(s).schema);
  // `items` is one schema, or (draft-07 tuples) a list of them.
  if ('items' in out) out.items = translate(out.items).schema;
  for (const key of SUBSCHEMA_MAP) {
    if (!isObject(out[key])) continue;
    const names: string[] = [];
    out[key] = Object.fromEntries(
      Object.entries(out[key]).map(([name, sub]) => {
        const translated = translate(sub);
        if (key === 'properties' && translated.required) names.push(name);
        return [name, translated.schema];
      }),
    );
    if (names.length > 0) out.required = [...new Set([...(Array.isArray(out.required) ? (out.required as string[]) : []), ...names])];
  }
  return { schema: out, required };
}
