import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { DomainError } from '../src/platform/errors.js';
import { defineOperation, OperationRegistry, type Principal, type TokenKind } from '../src/platform/operations.js';

/**
 * The one call path every surface takes. The registry is exercised with a real in-memory
 * authenticator and real operations; surfaces are covered by the HTTP and Socket.IO suites.
 */
const principals: Record<string, Principal & { kind: TokenKind }> = {
  admin: { userId: 'u1', username: 'admin', role: 'admin', scope: 'os_api_admin', tokenHash: 'h1', kind: 'access' },
  member: { userId: 'u2', username: 'member', role: 'user', scope: 'app', tokenHash: 'h2', kind: 'access' },
  delegate: { userId: 'u3', username: 'delegate', role: 'user', scope: 'os_api_admin', tokenHash: 'h3', kind: 'access' },
  stream: { userId: 'u1', username: 'admin', role: 'admin', scope: 'os_api_admin', tokenHash: 'h4', kind: 'stream' },
};

function registry() {
  const logged: Array<{ obj: object; msg: string }> = [];
  const calls: unknown[] = [];
  const ops = new OperationRegistry(
    {
      authenticate(token, kinds) {
        const found = principals[token];
        return found && kinds.includes(found.kind) ? found : undefined;
      },
    },
    { error: (obj, msg) => logged.push({ obj, msg }) },
  );
  ops.register(
    defineOperation({
      name: 'test.echo',
      summary: 'Echo',
      access: { scopes: ['os_api_admin', 'app'] },
      input: Type.Object({
        id: Type.String(),
        count: Type.Optional(Type.Integer({ minimum: 1, default: 5 })),
        flag: Type.Optional(Type.Boolean()),
        note: Type.Optional(Type.String()),
      }),
      output: Type.Unknown(),
      async handler(input, ctx) {
        calls.push(input);
        return { input, user: ctx.principal?.username ?? null };
      },
    }),
    defineOperation({
      name: 'test.admin_only',
      summary: 'Admins',
      access: { scopes: ['os_api_admin'], roles: ['admin'] },
      input: Type.Object({}),
      output: Type.Unknown(),
      async handler() {
        return 'ok';
      },
    }),
    defineOperation({
      name: 'test.public',
      summary: 'Anyone',
      access: 'public',
      input: Type.Object({}),
      output: Type.Unknown(),
      async handler(_input, ctx) {
        return ctx.principal ?? null;
      },
    }),
    defineOperation({
      name: 'test.bug',
      summary: 'Fails',
      access: 'public',
      input: Type.Object({}),
      output: Type.Unknown(),
      async handler() {
        throw new TypeError('a real bug');
      },
    }),
  );
  return { ops, logged, calls };
}

const caller = (token?: string, extra: { kinds?: TokenKind[]; admits?: Array<'os_api_admin' | 'app'> } = {}) => ({
  credential: token ? { token, ...extra } : undefined,
  clientAddress: '127.0.0.1',
  requestId: 'r1',
});

async function failure(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected the call to fail');
}

describe('OperationRegistry.invoke', () => {
  it('authenticates before it validates, and checks scopes, token audience and roles', async () => {
    const { ops, calls } = registry();
    expect((await failure(ops.invoke('test.echo', { json: 'junk' }, caller()))).code).toBe('AUTH_REQUIRED');
    expect((await failure(ops.invoke('test.echo', {}, caller('nobody')))).code).toBe('INVALID_TOKEN');
    // A stream token is only taken where the surface says it takes one.
    expect((await failure(ops.invoke('test.echo', { json: { id: 'a' } }, caller('stream')))).code).toBe('INVALID_TOKEN');
    expect(await ops.invoke('test.echo', { json: { id: 'a' } }, caller('stream', { kinds: ['access', 'stream'] }))).toMatchObject({ user: 'admin' });
    // The operation admits app tokens, but the API they were presented to does not.
    const audience = await failure(ops.invoke('test.echo', { json: { id: 'a' } }, caller('member', { admits: ['os_api_admin'] })));
    expect([audience.kind, audience.code]).toEqual(['forbidden', 'INSUFFICIENT_SCOPE']);
    expect(await ops.invoke('test.echo', { json: { id: 'a' } }, caller('member', { admits: ['os_api_admin', 'app'] }))).toMatchObject({ user: 'member' });
    expect((await failure(ops.invoke('test.admin_only', {}, caller('member')))).code).toBe('INSUFFICIENT_SCOPE');
    expect((await failure(ops.invoke('test.admin_only', {}, caller('delegate')))).code).toBe('ROLE_REQUIRED');
    expect(await ops.invoke('test.admin_only', {}, caller('admin'))).toBe('ok');
    // Public operations run without a principal, even when a token is presented.
    expect(await ops.invoke('test.public', {}, caller('admin'))).toBeNull();
    expect(calls).toHaveLength(2);
  });

  it('converts text parts to the declared types, takes JSON as it is, and applies defaults once', async () => {
    const { ops, calls } = registry();
    await ops.invoke('test.echo', { text: { params: { id: 'a' }, querystring: { count: '3', flag: 'true', cacheBuster: '1' } } }, caller('admin'));
    expect(calls.at(-1)).toEqual({ id: 'a', count: 3, flag: true });
    // A default of the whole input does not override what the body carries.
    await ops.invoke('test.echo', { json: { count: 2 }, text: { params: { id: 'b' } } }, caller('admin'));
    expect(calls.at(-1)).toEqual({ id: 'b', count: 2 });
    await ops.invoke('test.echo', { json: { id: 'c' } }, caller('admin'));
    expect(calls.at(-1)).toEqual({ id: 'c', count: 5 });

    const typed = await failure(ops.invoke('test.echo', { json: { id: 'd', count: '3' }, jsonLabel: 'payload' }, caller('admin')));
    expect([typed.kind, typed.code, typed.details]).toEqual(['invalid', 'VALIDATION_FAILED', [{ field: 'payload.count', message: 'must be integer' }]]);
    const badText = await failure(ops.invoke('test.echo', { text: { params: { id: 'e' }, querystring: { count: 'many' } } }, caller('admin')));
    expect(badText.details).toEqual([{ field: 'querystring.count', message: 'must be integer' }]);
    const missing = await failure(ops.invoke('test.echo', { json: {} }, caller('admin')));
    expect(missing.message).toBe('body.id must have required property \'id\'');
    expect((await failure(ops.invoke('test.echo', { json: [1, 2] }, caller('admin')))).details).toEqual([{ field: 'body', message: 'must be object' }]);
    expect(calls).toHaveLength(3);
  });

  it('answers an unknown operation, and turns a bug into INTERNAL_ERROR logged once', async () => {
    const { ops, logged } = registry();
    expect((await failure(ops.invoke('test.nothing', {}, caller('admin')))).code).toBe('UNKNOWN_OPERATION');
    const bug = await failure(ops.invoke('test.bug', {}, caller()));
    expect([bug.kind, bug.code, bug.logged]).toEqual(['internal', 'INTERNAL_ERROR', true]);
    expect(bug.message).not.toContain('a real bug');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ msg: 'operation failed unexpectedly', obj: { operation: 'test.bug', requestId: 'r1' } });
  });
});

describe('answering in the same turn (OperationRegistry.call)', () => {
  it('returns a handler’s immediate answer as a value, throws its failures at once, and records both after answering', async () => {
    const ops = new OperationRegistry({ authenticate: (token) => (token === 'admin' ? principals.admin : undefined) }, { error: () => undefined });
    ops.register(
      defineOperation({
        name: 'test.now',
        summary: 'Answers at once',
        journal: 'activity',
        access: { scopes: ['os_api_admin'] },
        input: Type.Object({ id: Type.String() }),
        output: Type.Object({ id: Type.String() }),
        handler({ id }) {
          if (id === 'bad') throw new DomainError('conflict', 'NOPE', 'no');
          return { id };
        },
      }),
    );
    const records: Array<{ ok: boolean; code?: string; journal: string }> = [];
    ops.observeChanges((r) => records.push({ ok: r.ok, journal: r.journal, ...(r.code ? { code: r.code } : {}) }));
    const caller = { credential: { token: 'admin' }, clientAddress: '127.0.0.1', requestId: 'r' };
    // A value, not a promise: nothing waits for a microtask.
    expect(ops.call('test.now', { json: { id: 'a' } }, caller)).toEqual({ id: 'a' });
    expect(() => ops.call('test.now', { json: { id: 'bad' } }, caller)).toThrow(DomainError);
    // Validation and access fail at once too.
    expect(() => ops.call('test.now', { json: {} }, caller)).toThrow(/id/);
    expect(() => ops.call('test.now', { json: { id: 'a' } }, { ...caller, credential: { token: 'x' } })).toThrow(DomainError);
    // A use of the home is recorded once its answer is out (after the round), without a change
    // intent; a refused credential is not recorded.
    expect(records).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(records).toEqual([
      { ok: true, journal: 'activity' },
      { ok: false, code: 'NOPE', journal: 'activity' },
      { ok: false, code: 'VALIDATION_FAILED', journal: 'activity' },
    ]);
  });
});
