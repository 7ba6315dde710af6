/**
 * JSON for answers built from shared, immutable snapshots. The domain freezes values that never
 * change once made (the device list, each device's state view): the JSON of a frozen object is
 * made once and reused by every later answer that contains it, so that a 10,000-device list or
 * state snapshot is not serialised again per request while nothing changed.
 *
 * Frozen means the whole value, including what it references, is never mutated.
 */
const frozenJson = new WeakMap<object, string>();

/**
 * `JSON.stringify(value)`, reusing the JSON of the frozen objects in it. The value itself is not
 * remembered (answers are usually new objects around shared parts); its members are.
 */
export function snapshotJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  return compose(value);
}

function jsonOfFrozen(value: object): string {
  let json = frozenJson.get(value);
  if (json === undefined) {
    json = compose(value);
    frozenJson.set(value, json);
  }
  return json;
}

function member(value: unknown): string | undefined {
  if (value !== null && typeof value === 'object' && Object.isFrozen(value)) return jsonOfFrozen(value);
  return JSON.stringify(value) as string | undefined;
}

function compose(value: object): string {
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '';
    for (let i = 0; i < value.length; i++) out += `${i > 0 ? ',' : ''}${member(value[i]) ?? 'null'}`;
    return `[${out}]`;
  }
  let out = '';
  for (const key of Object.keys(value)) {
    const text = member((value as Record<string, unknown>)[key]);
    if (text !== undefined) out += `${out ? ',' : ''}${JSON.stringify(key)}:${text}`;
  }
  return `{${out}}`;
}
