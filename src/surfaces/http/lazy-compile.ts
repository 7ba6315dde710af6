import SerializerSelector, { type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/**
 * Response schemas compiled on first use instead of at start-up. (Operation inputs are
 * validated by the operation registry, which also compiles each validator on first use.)
 *
 * Fastify compiles a serializer for every response status of every route while it starts; with four route families mounted under several bases
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
