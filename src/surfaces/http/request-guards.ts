import FindMyWay from 'find-my-way';
import type { DomainError } from '../../platform/errors.js';
import { httpErrors } from './failures.js';

/**
 * Longest URL (path and query) the service reads, as common servers do (8 KiB). Longer ones are
 * 414; Node itself stops at 16 KiB of request line and headers together (see clientErrorHandler).
 */
export const MAX_URL_LENGTH = 8192;

/**
 * Longest path parameter, as sent (percent-encoded). Ids are at most 200 characters, which is
 * 1,800 once encoded when every one is a three-byte UTF-8 character; Fastify's default (100)
 * would refuse valid ones. Longer parameters are 414.
 */
export const MAX_PARAM_LENGTH = 2048;

const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** A `.` or `..` segment (plain or percent-encoded) in the path: never resolved, so refused. */
function hasDotSegment(url: string): boolean {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  // Most paths have no dot at all: decided without splitting.
  if (!path.includes('.') && !path.includes('%2')) return false;
  return path.split('/').some((segment) => DOT_SEGMENT.test(segment));
}

/** What is wrong with a request's URL before routing matters, if anything. */
export function urlProblem(url: string): DomainError | undefined {
  if (url.length > MAX_URL_LENGTH) return httpErrors.URI_TOO_LONG({ part: 'The URL' }, { details: { maxLength: MAX_URL_LENGTH } });
  if (hasDotSegment(url)) return httpErrors.DOT_SEGMENT_IN_PATH();
  return undefined;
}

/**
 * The methods each registered path answers, so that a known path asked with another method is
 * 405 with `Allow` rather than 404. Fastify keeps one route tree per method and does not say
 * which other methods a path has, so a second find-my-way router (the one Fastify uses, with
 * Fastify's matching options) holds the same routes; it is built at the first miss, since only
 * misses ask it.
 */
export class RouteMethods {
  readonly #routes: Array<{ method: string; url: string }> = [];
  #router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1> | undefined;
  #methods: string[] = [];

  add(method: string, url: string): void {
    this.#routes.push({ method, url });
    this.#router = undefined;
  }

  /** The methods a concrete path (query string allowed) is routed for, sorted; empty when none. */
  allowedAt(url: string): string[] {
    const router = this.#build();
    return this.#methods.filter((method) => router.find(method as FindMyWay.HTTPMethod, url) !== null);
  }

  #build(): FindMyWay.Instance<FindMyWay.HTTPVersion.V1> {
    if (this.#router) return this.#router;
    const router = FindMyWay({
      caseSensitive: true,
      ignoreTrailingSlash: false,
      ignoreDuplicateSlashes: false,
      maxParamLength: MAX_PARAM_LENGTH,
    });
    const noop = () => {};
    for (const { method, url } of this.#routes) {
      // find-my-way throws on a duplicate, which would turn a 404 into a 500.
      if (!router.hasRoute(method as FindMyWay.HTTPMethod, url)) router.on(method as FindMyWay.HTTPMethod, url, noop);
    }
    this.#methods = [...new Set(this.#routes.map((r) => r.method))].sort();
    this.#router = router;
    return router;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route's method and URL, for 405 answers; decorated on the root instance. */
    routeMethods?: RouteMethods;
  }
}
