import SerializerSelector, { type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Route schemas compiled on first use instead of at start-up.
 *
 * Fastify compiles a validator for every request part and a serializer for every response
 * status of every route while it starts; with four route families mounted under several bases
 * that is hundreds of ajv and fast-json-stringify compilations, about a second of CPU before the
 * server listens (docs/benchmarks.md, "Start-up"). A supervisor-restarted hub is down for that
 * long. Compiling each schema the first time a request needs it moves that cost to the first
 * request of each route (a few milliseconds), and most routes of a given hub are never called.
 *
 * A schema that does not compile is then found by its first request rather than at start-up, so
 * `compileAll` compiles every schema seen so far; the route-table test calls it.
 */
export class LazySchemas {
  /** Each route schema's compile-once function; calling one again is free. */
  readonly #pending = new Set<() => unknown>();

  /** Wraps a validator compiler (such as the one in validation.ts). */
  validators<T>(compile: FastifySchemaCompiler<T>): FastifySchemaCompiler<T> {
    return (routeSchema) => {
      type Validate = ReturnType<FastifySchemaCompiler<T>> & { errors?: unknown; schemaEnv?: unknown };
      let compiled: Validate | undefined;
      const get = () => (compiled ??= compile(routeSchema) as Validate);
      this.#pending.add(get);
      const validate = function (this: unknown, ...args: unknown[]) {
        return (get() as (...a: unknown[]) => unknown).apply(this, args);
      };
      // Fastify reads `errors` after a failed call, and passes the parent object (so that ajv
      // can coerce or default a whole request part) only to functions that have `schemaEnv`.
      Object.defineProperties(validate, {
        errors: { get: () => compiled?.errors },
        schemaEnv: { get: () => get().schemaEnv },
      });
      return validate as unknown as ReturnType<FastifySchemaCompiler<T>>;
    };
  }

  /**
   * Fastify's own serializer factory (fast-json-stringify, with the schemas added by
   * `addSchema`), compiling each response schema on first use. For the `schemaController`
   * option: `{ compilersFactory: { buildSerializer: lazy.serializers() } }`.
   */
  serializers(): SerializerFactory {
    const build = SerializerSelector();
    return (externalSchemas, options) => {
      const compile = build(externalSchemas, options);
      return (routeSchema) => {
        let compiled: ReturnType<typeof compile> | undefined;
        const get = () => (compiled ??= compile(routeSchema));
        this.#pending.add(get);
        return (data: unknown) => get()(data);
      };
    };
  }

  /** Compiles every schema not compiled yet; throws the first compilation error. */
  compileAll(): void {
    for (const compile of this.#pending) compile();
  }
}
