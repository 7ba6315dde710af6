/**
 * Reading a server-sent event stream in the bench clients without parsing every frame: frames are
 * found by their blank line, and the few numbers a client needs are read in place.
 */

/** Where one complete frame with an `event:` line sits in `text`. */
export interface SseFrame {
  text: string;
  /** Start of the frame. */
  start: number;
  /** Start of its `event: ` line. */
  eventAt: number;
  /** Index of the blank line ending it. */
  end: number;
}

/** Buffers a stream's chunks and hands each complete frame that names an event to `onFrame`. */
export class SseFrameReader {
  private buffer = '';

  constructor(private readonly onFrame: (frame: SseFrame) => void) {}

  /** Characters of an incomplete frame held for the next chunk. */
  get held(): number {
    return this.buffer.length;
  }

  push(chunk: string): void {
    const text = this.buffer + chunk;
    let start = 0;
    for (let end = text.indexOf('\n\n', start); end !== -1; end = text.indexOf('\n\n', start)) {
      const eventAt = text.indexOf('event: ', start);
      if (eventAt !== -1 && eventAt < end) this.onFrame({ text, start, eventAt, end });
      start = end + 2;
    }
    this.buffer = start === text.length ? '' : text.slice(start);
  }
}

/** The event name of a frame. */
export function eventName({ text, eventAt }: SseFrame): string {
  return text.slice(eventAt + 7, text.indexOf('\n', eventAt));
}

/** The number after `key` in `text` between `from` and `until`, or -1. */
export function numberAfter(text: string, key: string, from: number, until: number): number {
  const at = text.indexOf(key, from);
  if (at === -1 || at > until) return -1;
  let n = 0;
  let digits = 0;
  for (let i = at + key.length; i < text.length; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    n = n * 10 + c;
    digits++;
  }
  return digits === 0 ? -1 : n;
}
