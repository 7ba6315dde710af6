import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

export type RequestLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Methods that change something: always logged at `info` at least, as an audit trail. */
const CHANGING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The level of a request's line. Quick successful reads are `debug`: at `info`, writing one
 * line per request cost about as much as the rest of the request (docs/benchmarks.md). What an
 * operator needs at `info` stays: every change and every client error; slowness is a warning,
 * a server error an error. A line that fits several rules takes the most severe level. A
 * successful use of the home (a device command: `journaled`) is `debug` too: the activity log
 * records each one with who, what and the outcome, and a second line at `info` cost the command
 * path about 7 µs of its ~75 (issue 37).
 */
export function requestLogLevel(method: string, status: number, slow: boolean, failed = false, ordinary = false, journaled = false): RequestLogLevel {
  if (failed || (status >= 500 && !ordinary)) return 'error';
  if (slow) return 'warn';
  if (status >= 400 || (CHANGING_METHODS.has(method) && !journaled)) return 'info';
  return 'debug';
}

/**
 * One log line per request — id, method, route, status, duration and the error code when it
 * failed — instead of Fastify's two, at the level `requestLogLevel` picks. Query strings are left
 * out: SSE clients carry tokens there.
 */
export class OneLinePerRequest extends LogController {
  constructor(private readonly slowRequestMs: number) {
    super();
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const elapsedMs = reply.elapsedTime;
    const config = request.routeOptions.config;
    const ordinary = config.ordinaryStatuses?.includes(reply.statusCode) ?? false;
    const level = requestLogLevel(request.method, reply.statusCode, elapsedMs >= this.slowRequestMs, Boolean(error), ordinary, config.journaled === true);
    writeRequestLine(request, level, reply.statusCode, elapsedMs, error);
  }
}

/**
 * The line of a request whose reply a surface took over (an SSE stream), written when it ends.
 * Its duration is the stream's lifetime, not its latency, so only status and method set the level.
 */
export function logRequest(request: FastifyRequest, status: number, lifetimeMs: number): void {
  writeRequestLine(request, requestLogLevel(request.method, status, false), status, lifetimeMs);
}

function isEnabled(log: FastifyBaseLogger, level: RequestLogLevel): boolean {
  // The service's logger is pino; any other logger gets every line.
  const pinoLog = log as Partial<Pick<Logger, 'isLevelEnabled'>>;
  return pinoLog.isLevelEnabled ? pinoLog.isLevelEnabled(level) : true;
}

function writeRequestLine(request: FastifyRequest, level: RequestLogLevel, status: number, elapsedMs: number, error?: Error | null): void {
  // Decided before the line is built: most requests of a hub at `info` write nothing.
  if (!isEnabled(request.log, level)) return;
  const line = {
    method: request.method,
    route: request.routeOptions.url ?? null,
    path: request.url.split('?')[0],
    status,
    durationMs: Math.round(elapsedMs * 100) / 100,
    ...(request.failureCode ? { code: request.failureCode } : {}),
    ...(error ? { err: error } : {}),
  };
  request.log[level](line, 'request');
}

type LogMethod = (objOrMsg: unknown, ...rest: unknown[]) => void;

/**
 * A request's logger, made per request by Fastify with its `reqId` binding. Building pino's
 * child (its bindings serialised) cost about 2 µs a request, for a logger that most requests
 * never write to now that quick reads log at `debug`: this one makes the child on the first
 * line actually written, and answers the level checks from the parent until then.
 */
class RequestLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  private get real(): Logger {
    return (this.made ??= this.parent.child(this.bindings));
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  private write(level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    (this.real[level] as LogMethod)(...(args as [unknown, ...unknown[]]));
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a lazily made child, unless the route sets its own level or serializers. */
export const requestChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => {
  const parent = logger as unknown as Logger;
  const own = options.level !== undefined || options.serializers !== undefined;
  return (own ? parent.child(bindings, options) : new RequestLogger(parent, bindings)) as unknown as FastifyBaseLogger;
};
