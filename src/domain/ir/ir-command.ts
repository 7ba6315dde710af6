import { isIP } from 'node:net';
import { Type, type Static } from 'typebox';

/**
 * IR data model of GENERIC_IR devices.
 *
 * An IR command is a carrier frequency in kHz and the raw pulse train in MICROSECONDS, alternating
 * on (carrier) / off (silence), starting with "on". Global Caché iTach extenders want the pulse
 * train in carrier cycles, so {@link toCarrierCycles} converts and {@link sendirLine} builds the
 * `sendir` line of the iTach API.
 */

export const IR_FREQ_MIN_KHZ = 15;
export const IR_FREQ_MAX_KHZ = 500;
/** iTach limit: a pulse train has fewer than this many on/off pairs. */
export const IR_MAX_PAIRS = 260;
export const IR_KEY_PATTERN = '^[A-Za-z0-9_.:-]+$';
export const IR_KEY_MAX_LENGTH = 64;
const IR_KEY_RE = new RegExp(IR_KEY_PATTERN);

export const IrCommandSchema = Type.Object(
  {
    freq_khz: Type.Number({
      minimum: IR_FREQ_MIN_KHZ,
      maximum: IR_FREQ_MAX_KHZ,
      description: 'Carrier frequency in kHz (15–500).',
    }),
    raw: Type.Array(Type.Number({ exclusiveMinimum: 0 }), {
      minItems: 2,
      maxItems: (IR_MAX_PAIRS - 1) * 2,
      description: 'Pulse durations in microseconds, alternating on/off; an even number of entries.',
    }),
  },
  { description: 'One IR command: carrier frequency and raw pulse train.' },
);
export type IrCommand = Static<typeof IrCommandSchema>;

export const IrCommandsSchema = Type.Record(
  Type.String({ pattern: `^[A-Za-z0-9_.:-]{1,${IR_KEY_MAX_LENGTH}}$` }),
  IrCommandSchema,
  { additionalProperties: false, description: 'IR commands of a device, by command key.' },
);
export type IrCommands = Record<string, IrCommand>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when `key` may name an IR command: 1–64 characters of `A-Z a-z 0-9 _ . : -`. */
export function isValidIrKey(key: string): boolean {
  return key.length >= 1 && key.length <= IR_KEY_MAX_LENGTH && IR_KEY_RE.test(key);
}

/** True when `host` is an IPv4 or IPv6 address (the `extenderIp` of a GENERIC_IR device). */
export function isValidExtenderIp(host: unknown): host is string {
  return typeof host === 'string' && isIP(host) !== 0;
}

/**
 * Problems of one IR command, in words a user understands; empty when the command is usable.
 * Accepts anything (the input often comes straight from a request body).
 */
export function validateIrCommand(cmd: unknown): string[] {
  if (!isRecord(cmd)) return ['IR command must be an object with freq_khz and raw'];
  const problems: string[] = [];
  const freq = cmd.freq_khz;
  if (typeof freq !== 'number' || !Number.isFinite(freq)) {
    problems.push('freq_khz must be a number (carrier frequency in kHz)');
  } else if (freq < IR_FREQ_MIN_KHZ || freq > IR_FREQ_MAX_KHZ) {
    problems.push(`freq_khz must be between ${IR_FREQ_MIN_KHZ} and ${IR_FREQ_MAX_KHZ} kHz (got ${freq})`);
  }
  const raw = cmd.raw;
  if (!Array.isArray(raw)) {
    problems.push('raw must be an array of pulse durations in microseconds');
    return problems;
  }
  if (raw.length === 0) {
    problems.push('raw must not be empty');
    return problems;
  }
  if (raw.length % 2 !== 0) {
    problems.push(`raw must have an even number of entries (on/off pairs), got ${raw.length}`);
  }
  const bad = raw.findIndex((v) => typeof v !== 'number' || !Number.isFinite(v) || v <= 0);
  if (bad !== -1) {
    problems.push(`raw[${bad}] must be a positive finite number of microseconds (got ${JSON.stringify(raw[bad]) ?? String(raw[bad])})`);
  }
  if (raw.length / 2 >= IR_MAX_PAIRS) {
    problems.push(`raw must have fewer than ${IR_MAX_PAIRS} on/off pairs, got ${Math.ceil(raw.length / 2)}`);
  }
  return problems;
}

/** Problems of a whole `irCommands` map, each prefixed with the command key. */
export function validateIrCommands(commands: unknown): string[] {
  if (!isRecord(commands)) return ['irCommands must be an object of command key → IR command'];
  const problems: string[] = [];
  for (const [key, cmd] of Object.entries(commands)) {
    if (!isValidIrKey(key)) {
      problems.push(`command key ${JSON.stringify(key)} must be 1–${IR_KEY_MAX_LENGTH} characters of A-Z a-z 0-9 _ . : -`);
    }
    for (const p of validateIrCommand(cmd)) problems.push(`${key}: ${p}`);
  }
  return problems;
}

/** Carrier frequency in Hz, as the iTach wants it. */
export function carrierHz(cmd: IrCommand): number {
  return Math.round(cmd.freq_khz * 1000);
}

/** Each microsecond duration as a number of carrier cycles (at least 1). */
export function toCarrierCycles(cmd: IrCommand): number[] {
  const freqHz = carrierHz(cmd);
  return cmd.raw.map((us) => Math.max(1, Math.round((us * freqHz) / 1e6)));
}

/**
 * The iTach `sendir` line for `cmd`, terminated by `\r`: repeat count 1, offset 1.
 * `{freq_khz: 38, raw: [9000, 4500, 560, 560]}`, id 7 → `sendir,1:1,7,38000,1,1,342,171,21,21\r`.
 */
export function sendirLine(cmd: IrCommand, id: number, connector = '1:1'): string {
  return `sendir,${connector},${id},${carrierHz(cmd)},1,1,${toCarrierCycles(cmd).join(',')}\r`;
}
