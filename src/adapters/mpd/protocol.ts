/**
 * The MPD protocol's text framing (https://mpd.readthedocs.io/en/latest/protocol.html): a command
 * is one line of space-separated arguments, quoted where needed; an answer is `key: value` lines
 * ending in `OK`, or one `ACK [error@command_listNum] {command} message` line.
 */

/** An argument as MPD reads it: bare when it is a plain word, else double-quoted with `"` and `\` escaped. */
export function quoteArg(arg: string | number): string {
  const text = String(arg);
  if (/^[A-Za-z0-9_.:/+-]+$/.test(text)) return text;
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

export function commandLine(name: string, args: ReadonlyArray<string | number> = []): string {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`not an MPD command name: ${name}`);
  for (const a of args) if (/[\n\r]/.test(String(a))) throw new Error('an MPD argument cannot hold a line break');
  return [name, ...args.map(quoteArg)].join(' ') + '\n';
}

/** Splits a command line into its name and arguments (for the test peer). */
export function parseCommandLine(line: string): { name: string; args: string[] } | null {
  const args: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i >= line.length) break;
    if (line[i] === '"') {
      let value = '';
      i++;
      while (i < line.length && line[i] !== '"') {
        if (line[i] === '\\' && i + 1 < line.length) i++;
        value += line[i++];
      }
      if (line[i] !== '"') return null;
      i++;
      args.push(value);
    } else {
      let value = '';
      while (i < line.length && line[i] !== ' ' && line[i] !== '\t') value += line[i++];
      args.push(value);
    }
  }
  const name = args.shift();
  return name ? { name, args } : null;
}

export interface MpdAck {
  code: number;
  index: number;
  command: string;
  message: string;
}

/** `ACK [50@0] {play} No such song` → its parts; null when the line is no ACK. */
export function parseAck(line: string): MpdAck | null {
  const m = /^ACK \[(\d+)@(\d+)\] \{([^}]*)\} ?(.*)$/.exec(line);
  return m ? { code: Number(m[1]), index: Number(m[2]), command: m[3]!, message: m[4]! } : null;
}

export type MpdPairs = Array<[string, string]>;

/** `key: value` lines as pairs, in order (keys repeat: one `file` per song). */
export function parsePairs(lines: readonly string[]): MpdPairs {
  const pairs: MpdPairs = [];
  for (const line of lines) {
    const colon = line.indexOf(': ');
    if (colon > 0) pairs.push([line.slice(0, colon), line.slice(colon + 2)]);
  }
  return pairs;
}

/** One object from pairs (the last value of a repeated key wins). */
export function toObject(pairs: MpdPairs): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of pairs) out[k] = v;
  return out;
}

/** Splits pairs into records, a new one starting at each of `starters` (`file`, `directory`, `playlist`). */
export function toRecords(pairs: MpdPairs, starters: readonly string[] = ['file']): Array<Record<string, string>> {
  const records: Array<Record<string, string>> = [];
  let current: Record<string, string> | null = null;
  for (const [k, v] of pairs) {
    if (starters.includes(k)) {
      current = {};
      records.push(current);
    }
    if (current) current[k] = v;
  }
  return records;
}
