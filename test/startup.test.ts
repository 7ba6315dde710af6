import { afterEach, describe, expect, it } from 'vitest';
import { LazySchemas } from '../src/surfaces/http/lazy-compile.js';
import { validatorCompiler } from '../src/surfaces/http/validation.js';
import { startServer, type TestServer } from './support/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('route schemas compiled on first use', () => {
  it('compiles every route schema of the service without error', async () => {
    server = await startServer();
    expect(() => server!.app.http.compileAllSchemas()).not.toThrow();
    // Validation behaves as it did when schemas were compiled at start: coerced, then checked.
    const res = await server.request('GET', '/app/os/devices?includeRemoved=maybe', { token: await server.login() });
    expect(res.status).toBe(400);
  });

  it('reports a schema that does not compile when asked, not when the route is added', () => {
    const lazy = new LazySchemas();
    const validate = lazy.validators(validatorCompiler)({ schema: { type: 'no-such-type' }, method: 'POST', url: '/x', httpPart: 'body' });
    expect(typeof validate).toBe('function');
    expect(() => lazy.compileAll()).toThrow(/no-such-type|type/);
  });

  it('keeps the errors and the parent-data call of the compiled validator', () => {
    const lazy = new LazySchemas();
    const schema = { type: 'object', properties: { n: { type: 'integer', default: 3 } }, required: ['n'], additionalProperties: false };
    const validate = lazy.validators(validatorCompiler)({ schema, method: 'GET', url: '/x', httpPart: 'querystring' }) as unknown as ((data: unknown) => boolean) & {
      errors?: { instancePath: string }[];
      schemaEnv?: unknown;
    };
    // Fastify passes the parent object (so ajv may replace a coerced root) only when schemaEnv is set.
    expect(validate.schemaEnv).toBeTruthy();
    const query: Record<string, unknown> = { n: '12' };
    expect(validate(query)).toBe(true);
    expect(query.n).toBe(12);
    const defaulted: Record<string, unknown> = {};
    expect(validate(defaulted)).toBe(true);
    expect(defaulted.n).toBe(3);
    expect(validate({ n: 'twelve' })).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe('/n');
  });
});
