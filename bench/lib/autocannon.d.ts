/**
 * Minimal types for the parts of autocannon@8 the benchmarks use (the package ships none).
 * Shapes follow node_modules/autocannon/lib/aggregateResult.js and lib/init.js.
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Stop after this many requests instead of after `duration`. */
      amount?: number;
      /** Per-request timeout in seconds. */
      timeout?: number;
      pipelining?: number;
      method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';
      headers?: Record<string, string>;
      body?: string | Buffer;
      title?: string;
      /** Seconds between samples; defaults to 1000 ms (the option is in ms). */
      sampleInt?: number;
      /** Stop after this many errors. */
      bailout?: number;
      /** The requests each connection sends in turn; `setupRequest` may rewrite each one as it goes out. */
      requests?: Array<Partial<Request> & { setupRequest?: (request: Request) => Request }>;
    }

    /** A request as autocannon sends it (lib/requestIterator.js). */
    interface Request {
      method: string;
      path: string;
      headers: Record<string, string>;
      body?: string | Buffer;
    }

    /** A histogram summary: percentiles are keyed p50, p97_5, p99, p99_9, ... */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p0_001: number;
      p0_01: number;
      p0_1: number;
      p1: number;
      p2_5: number;
      p10: number;
      p25: number;
      p50: number;
      p75: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
      p99_99: number;
      p99_999: number;
    }

    interface Result {
      title?: string;
      url: string;
      connections: number;
      pipelining: number;
      /** Seconds, as measured. */
      duration: number;
      samples: number;
      start: Date;
      finish: Date;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      '1xx': number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
      /** Milliseconds, recorded at 1 ms resolution. */
      latency: Histogram & { totalCount: number };
      /** Requests per one-second sample; `total` is the number of completed requests. */
      requests: Histogram & { sent: number };
      /** Bytes per one-second sample. */
      throughput: Histogram;
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      /** Ends the run early; the promise then resolves with what was measured. */
      stop(): void;
    }
  }

  /** Without a callback the returned instance is also a promise of the result. */
  function autocannon(options: autocannon.Options): autocannon.Instance;

  export = autocannon;
}
