/**
 * The key names Roku's External Control Protocol accepts in `keypress`, `keydown` and `keyup`,
 * as the firmware spells them. The device matches them without regard to case; the hub always
 * sends the canonical spelling, so logs and the emulator see one name per key.
 */
export const ECP_KEYS = [
  'Home',
  'Rev',
  'Fwd',
  'Play',
  'Select',
  'Left',
  'Right',
  'Down',
  'Up',
  'Back',
  'InstantReplay',
  'Info',
  'Backspace',
  'Search',
  'Enter',
  'VolumeDown',
  'VolumeMute',
  'VolumeUp',
  'PowerOff',
  'PowerOn',
  'Power',
  // Roku TVs only; a streaming player answers them but does nothing.
  'ChannelUp',
  'ChannelDown',
  'InputTuner',
  'InputHDMI1',
  'InputHDMI2',
  'InputHDMI3',
  'InputHDMI4',
  'InputAV1',
  'FindRemote',
] as const;

export type EcpKey = (typeof ECP_KEYS)[number];

/** Text entry: `Lit_` and one character (the path carries it URL-encoded, e.g. `Lit_%E2%82%AC`). */
export type EcpLiteralKey = `Lit_${string}`;

const CANONICAL = new Map<string, EcpKey>(ECP_KEYS.map((key) => [key.toLowerCase(), key]));
const LITERAL_PREFIX = 'lit_';

/**
 * The path segment for a key (`select` → `Select`, `Lit_é` → `Lit_%C3%A9`), or undefined when
 * the firmware would not know it. A literal carries exactly one character (one code point).
 */
export function ecpKeySegment(key: string): string | undefined {
  const canonical = CANONICAL.get(key.toLowerCase());
  if (canonical) return canonical;
  if (key.slice(0, LITERAL_PREFIX.length).toLowerCase() !== LITERAL_PREFIX) return undefined;
  const chars = [...key.slice(LITERAL_PREFIX.length)];
  if (chars.length !== 1) return undefined;
  return `Lit_${encodeURIComponent(chars[0] as string)}`;
}

/** A received path segment (`select`, `Lit_%C3%A9`) back to its key (`Select`, `Lit_é`); undefined when unknown. */
export function parseEcpKeySegment(segment: string): EcpKey | EcpLiteralKey | undefined {
  const canonical = CANONICAL.get(segment.toLowerCase());
  if (canonical) return canonical;
  if (segment.slice(0, LITERAL_PREFIX.length).toLowerCase() !== LITERAL_PREFIX) return undefined;
  let text: string;
  try {
    text = decodeURIComponent(segment.slice(LITERAL_PREFIX.length));
  } catch {
    return undefined;
  }
  return [...text].length === 1 ? `Lit_${text}` : undefined;
}
