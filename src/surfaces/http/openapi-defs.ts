/**
 * OpenAPI 3.0 has no `$defs`: recursive schemas (program steps) are hoisted into
 * `components.schemas` and their `#/$defs/X` pointers rewritten to `#/components/schemas/X`.
 */
export function createDefsHoister() {
  const hoisted: Record<string, unknown> = {};

  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$defs' && value && typeof value === 'object') {
        for (const [name, def] of Object.entries(value)) hoisted[name] ??= rewrite(def);
        continue;
      }
      out[key] = key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/') ? `#/components/schemas/${value.slice(8)}` : rewrite(value);
    }
    return out;
  };

  return {
    transformSchema<T>(schema: T): T {
      return rewrite(schema) as T;
    },
    addTo(document: { components?: { schemas?: Record<string, unknown> } }): void {
      document.components ??= {};
      document.components.schemas = { ...hoisted, ...document.components.schemas };
    },
  };
}
