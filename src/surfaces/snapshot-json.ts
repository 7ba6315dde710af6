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

const frozenBytes = new WeakMap<object, Buffer>();
const COMMA = Buffer.from(',');

/**
 * The same JSON as `snapshotJson`, as the UTF-8 bytes an HTTP answer sends. A frozen object's
 * bytes are made once and kept, and a value is assembled from its members' bytes: when one device
 * of a 10,000-device list changes, the new list is one copy of the others' bytes, not a string of
 * 10,000 pieces that must be flattened and encoded again (about 30 ms for 6 MB).
 */
export function snapshotBytes(value: unknown): Buffer {
  if (value === null || typeof value !== 'object') return Buffer.from(JSON.stringify(value) ?? 'null');
  return Object.isFrozen(value) ? bytesOfFrozen(value, true) : assemble(value);
}

/**
 * Past this size a frozen member's bytes are kept only when it is the answer itself: a large list
 * inside an answer (the views of `{devices}`) is sent only inside it, and keeping its bytes too
 * held every device's JSON twice (~770 bytes per device at 10,000 devices).
 */
const KEEP_MEMBER_BYTES_BELOW = 64 * 1024;

function bytesOfFrozen(value: object, top = false): Buffer {
  let bytes = frozenBytes.get(value);
  if (bytes === undefined) {
    bytes = assemble(value);
    if (top || bytes.length < KEEP_MEMBER_BYTES_BELOW) frozenBytes.set(value, bytes);
  }
  return bytes;
}

/** Buffers in order: runs of text between the frozen members' own bytes. */
class Parts {
  readonly buffers: Buffer[] = [];
  private text = '';
  add(text: string): void {
    this.text += text;
  }
  addBytes(bytes: Buffer): void {
    this.flush();
    this.buffers.push(bytes);
  }
  flush(): void {
    if (this.text === '') return;
    this.buffers.push(this.text === ',' ? COMMA : Buffer.from(this.text));
    this.text = '';
  }
}

function assemble(value: object): Buffer {
  const parts = new Parts();
  write(value, parts);
  parts.flush();
  return parts.buffers.length === 1 ? parts.buffers[0]! : Buffer.concat(parts.buffers);
}

/** Writes a member; false when JSON leaves it out (undefined, a function). */
function writeMember(value: unknown, parts: Parts): boolean {
  if (value !== null && typeof value === 'object' && Object.isFrozen(value)) {
    parts.addBytes(bytesOfFrozen(value));
    return true;
  }
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) return false;
  parts.add(text);
  return true;
}

function write(value: object, parts: Parts): void {
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return parts.add(JSON.stringify(value));
  if (Array.isArray(value)) {
    parts.add('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) parts.add(',');
      if (!writeMember(value[i], parts)) parts.add('null');
    }
    return parts.add(']');
  }
  parts.add('{');
  let first = true;
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    parts.add(`${first ? '' : ','}${JSON.stringify(key)}:`);
    first = false;
    writeMember(member, parts);
  }
  parts.add('}');
}
