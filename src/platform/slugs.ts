/**
 * Readable ids made from names, Home Assistant style (`Living Room Lamp` → `living_room_lamp`):
 * entity object ids of devices and scenes.
 */

/** Lowercase `[a-z0-9_]`, accents folded, runs of anything else as one `_`. */
export function slugify(text: string, fallback = 'unnamed'): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return slug || fallback;
}

/** Unique slugs for named items in the given order: the first keeps the slug, later ones get `_2`, `_3`… */
export function assignSlugs<T extends { id: string; name: string }>(items: readonly T[], fallback = 'unnamed', taken: Set<string> = new Set()): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of items) {
    const base = slugify(item.name, fallback);
    let slug = base;
    for (let n = 2; taken.has(slug); n++) slug = `${base}_${n}`;
    taken.add(slug);
    out.set(item.id, slug);
  }
  return out;
}
