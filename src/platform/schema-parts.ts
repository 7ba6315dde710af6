import type { TObject, TSchema } from 'typebox';

/**
 * TypeBox names cyclic definitions by `$id` and bare `$ref`s ("Step"); JSON Schema tools resolve
 * those against ids that then clash between schemas. Rewrites them as `#/$defs/Step` pointers,
 * without the ids, in a copy.
 */
export function normalizeRefs<T>(schema: T): T {
  const defs = (schema as { $defs?: Record<string, unknown> })?.$defs;
  if (!defs) return schema;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$id' && typeof value === 'string' && Object.hasOwn(defs, value)) continue;
      out[key] = key === '$ref' && typeof value === 'string' && Object.hasOwn(defs, value) ? `#/$defs/${value}` : walk(value);
    }
    return out;
  };
  return walk(schema) as T;
}

/**
 * The object an input schema describes, and how to put a narrowed copy of it back: a cyclic
 * schema (`{$defs, $ref}`, used by recursive step lists) keeps its definitions around the part.
 */
export function objectPart(schema: TSchema): { object: TObject; wrap(part: TObject): TSchema } {
  const cyclic = schema as TSchema & { $defs?: Record<string, TSchema>; $ref?: string };
  if (cyclic.$defs && typeof cyclic.$ref === 'string') {
    const name = cyclic.$ref.replace(/^#\/\$defs\//, '');
    const object = cyclic.$defs[name] as TObject | undefined;
    if (!object?.properties) throw new Error(`cyclic input schema ${name} does not describe an object`);
    return { object, wrap: (part) => ({ ...cyclic, $defs: { ...cyclic.$defs, [name]: part } }) as TSchema };
  }
  if (!(schema as TObject).properties) throw new Error('an operation input must be an object schema');
  return { object: schema as TObject, wrap: (part) => part };
}
