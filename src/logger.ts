import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { Config } from './config.js';

const SECRET_KEYS = new Set(['password', 'token', 'accesstoken', 'authorization', 'cookie', 'apikey', 'secret']);

/** Masks secret-named fields (two levels deep) of a log object; cheap enough for every line. */
function maskSecrets(obj: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in obj) {
    const value = obj[key];
    if (SECRET_KEYS.has(key.toLowerCase())) {
      out ??= { ...obj };
      out[key] = '[redacted]';
    } else if (value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Error)) {
      for (const inner in value as Record<string, unknown>) {
        if (!SECRET_KEYS.has(inner.toLowerCase())) continue;
        out ??= { ...obj };
        out[key] = { ...(value as Record<string, unknown>), [inner]: '[redacted]' };
      }
    }
  }
  return out ?? obj;
}

/** How long a log line may wait in the buffer before it is written. */
const LOG_FLUSH_INTERVAL_MS = 200;

/** The service's logger; `to` replaces standard output (tests read the lines); `ring` keeps the newest lines too. */
export function createLogger(config: Pick<Config, 'logLevel'>, to?: DestinationStream, ring?: LogRing): Logger {
  if (to) return pino(loggerOptions(config), ring ? ring.teeTo(to) : to);
  // Buffered, asynchronous stdout: lines are gathered into 4 KiB writes, and whatever is
  // buffered is written at least every 200 ms and at exit. Measured on `GET /auth/me`, a
  // synchronous write per request line cost about as much as the rest of the request.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  // Node's own timer, not the injected clock: flushing log output is about the process's
  // stdout, not domain time, and it must keep running when a test's ManualClock stands still.
  const flush = setInterval(() => {
    try {
      destination.flush();
    } catch {
      // Not open yet: nothing to flush.
    }
  }, LOG_FLUSH_INTERVAL_MS);
  flush.unref();
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // Not open yet (nothing was written): nothing to flush.
    }
  });
  return pino(loggerOptions(config), ring ? ring.teeTo(destination) : destination);
}

function loggerOptions(config: Pick<Config, 'logLevel'>): LoggerOptions {
  // Secrets are masked by a formatter rather than pino's `redact`, whose per-request child
  // loggers cost several µs a request.
  // No hostname on every line: a hub is one box, and the bytes are paid per request.
  return { level: config.logLevel, base: { pid: process.pid }, formatters: { log: maskSecrets } };
}

/**
 * The newest log lines, kept in memory for the admin panel (bounded in lines and in each line's
 * length). It is a pino destination of its own: `teeTo` writes every line to it as well.
 */
export class LogRing {
  // A circular buffer: dropping the oldest line is moving an index, not shifting 2,000 strings
  // (a splice per line cost 8 µs a request on the command path).
  private readonly lines: string[] = [];
  private next = 0;

  constructor(
    private readonly maxLines = 2000,
    private readonly maxLineChars = 8192,
  ) {}

  write(line: string): void {
    const kept = line.length > this.maxLineChars ? `${line.slice(0, this.maxLineChars)}…` : line;
    if (this.lines.length < this.maxLines) this.lines.push(kept);
    else this.lines[this.next] = kept;
    this.next = (this.next + 1) % this.maxLines;
  }

  /** Oldest first. */
  recent(): readonly string[] {
    if (this.lines.length < this.maxLines) return this.lines.slice();
    return [...this.lines.slice(this.next), ...this.lines.slice(0, this.next)];
  }

  /** A destination that writes to `to` and keeps each line here too. */
  teeTo(to: DestinationStream): DestinationStream {
    return {
      write: (line: string) => {
        this.write(line);
        return to.write(line);
      },
    } as DestinationStream;
  }
}
