import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { InviteView } from '../src/domain/auth/invites.js';
import type { UserView } from '../src/domain/auth/model.js';
import { ManualClock } from '../src/platform/clock.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';

interface ErrorBody {
  error: { code: string; message: string; details?: Array<{ field: string; message: string }> };
}
interface Envelope<T = unknown> {
  status: boolean;
  message: string;
  data: T;
  code?: string;
}
type UserRecord = UserView;
type InviteRecord = InviteView & { code?: string };
type Session = Envelope<{ token: string; tokenType: string; expiresIn: number; scope: string; csrfToken: string }>;

const HOUR = 3_600_000;
const ANNA = { username: 'anna', password: 'anna-password' };

let server: TestServer;
// Data directories of servers restarted on them: `close` removes only the ones it made.
const keptDirs: string[] = [];
afterEach(async () => {
  await server?.close();
  for (const dir of keptDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const body = async <T>(res: Response) => (await res.json()) as T;

/** Answers the status and the parsed body, so that a failing check shows what came back. */
async function call<T>(method: string, path: string, init: Parameters<TestServer['request']>[2] = {}) {
  const res = await server.request(method, path, init);
  return { status: res.status, headers: res.headers, body: await body<T>(res) };
}

async function createUser(admin: string, fields: { username: string; password: string; role?: 'admin' | 'user' }): Promise<UserRecord> {
  const created = await call<UserRecord>('POST', '/admin/users', { token: admin, body: fields });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function appLogin(credentials: { username: string; password: string }): Promise<string> {
  const res = await call<Session>('POST', '/app/auth/login', { body: credentials });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.token;
}

async function ownId(token: string): Promise<string> {
  return (await call<{ userId: string }>('GET', '/app/os/auth/me', { token })).body.userId;
}

async function createInvite(admin: string, fields: Record<string, unknown> = {}): Promise<InviteRecord & { code: string }> {
  const created = await call<InviteRecord & { code: string }>('POST', '/admin/invites', { token: admin, body: fields });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

const register = (fields: Record<string, unknown>, base = '/app') => call<Session>('POST', `${base}/auth/register`, { body: fields });

/** Stops the server and starts a new one on the same data directory, as a restart of the process. */
async function restart(clock: ManualClock, env: Record<string, string> = {}): Promise<void> {
  const { dataDir } = server;
  if (!keptDirs.includes(dataDir)) keptDirs.push(dataDir);
  await server.app.stop();
  server = await startServer({ dataDir, clock, env });
}

describe('admin user management', () => {
  it('creates, reads, updates, resets and removes accounts, never answering a password hash', async () => {
    server = await startServer();
    const events: string[] = [];
    for (const name of ['user.created', 'user.updated', 'user.removed'] as const) server.app.hub.events.on(events, name, () => events.push(name));
    const admin = await server.login();

    const created = await createUser(admin, { ...ANNA, role: 'user' });
    expect(Object.keys(created).sort()).toEqual(['createdAt', 'disabled', 'id', 'role', 'updatedAt', 'username']);
    expect(created).toMatchObject({ username: 'anna', role: 'user', disabled: false });

    const listed = await server.request('GET', '/admin/users', { token: admin });
    const text = await listed.text();
    expect(text).not.toMatch(/scrypt|passwordHash|password_hash/);
    expect((JSON.parse(text) as { users: UserRecord[] }).users.map((u) => u.username)).toEqual(['admin', 'anna']);
    expect((await call<UserRecord>('GET', `/admin/users/${created.id}`, { token: admin })).body).toEqual(created);

    const annaToken = await appLogin(ANNA);
    const promoted = await call<UserRecord>('POST', `/admin/users/${created.id}`, { token: admin, body: { role: 'admin' } });
    expect(promoted.body).toMatchObject({ id: created.id, role: 'admin', disabled: false });
    // A role change ends the sessions: the token carried the old role's scope.
    expect((await call('GET', '/app/auth/me', { token: annaToken })).status).toBe(401);
    const annaAdmin = await appLogin(ANNA);
    expect((await call<Session['data']>('GET', '/app/os/auth/me', { token: annaAdmin })).body).toMatchObject({ scope: 'os_api_admin' });

    const reset = await call<UserRecord>('POST', `/admin/users/${created.id}/password`, { token: admin, body: { password: 'fresh-password' } });
    expect(reset.status).toBe(200);
    expect(Object.keys(reset.body)).not.toContain('passwordHash');
    expect((await call('GET', '/app/os/auth/me', { token: annaAdmin })).status).toBe(401);
    expect((await call('POST', '/app/auth/login', { body: ANNA })).status).toBe(401);
    const fresh = await appLogin({ username: 'anna', password: 'fresh-password' });

    const removed = await call<{ removed: boolean; user: UserRecord }>('DELETE', `/admin/users/${created.id}`, { token: admin });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ removed: true, user: { id: created.id, username: 'anna' } });
    expect((await call('GET', '/app/auth/me', { token: fresh })).status).toBe(401);
    const gone = await call<ErrorBody>('GET', `/admin/users/${created.id}`, { token: admin });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('USER_NOT_FOUND');
    expect(events).toEqual(['user.created', 'user.updated', 'user.updated', 'user.removed']);
  });

  it('keeps names unique whatever their case, and holds names and passwords to their rules', async () => {
    server = await startServer();
    const admin = await server.login();
    await createUser(admin, ANNA);
    const taken = await call<ErrorBody>('POST', '/admin/users', { token: admin, body: { username: 'ANNA', password: 'other-password' } });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'USERNAME_TAKEN', details: { username: 'ANNA' } });
    // Logins find the account whatever the case, as the names are unique that way.
    expect((await call('POST', '/app/auth/login', { body: { username: 'Anna', password: ANNA.password } })).status).toBe(200);

    for (const [fields, field] of [
      [{ username: 'has space', password: 'long-enough' }, 'body.username'],
      [{ username: 'x'.repeat(65), password: 'long-enough' }, 'body.username'],
      [{ username: 'bob', password: 'short' }, 'body.password'],
      [{ username: 'bob', password: 'long-enough', role: 'owner' }, 'body.role'],
      [{ username: 'bob', password: 'long-enough', rol: 'admin' }, 'body.rol'],
    ] as const) {
      const res = await call<ErrorBody>('POST', '/admin/users', { token: admin, body: fields });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details?.map((d) => d.field)).toContain(field);
    }
  });

  it('guards every admin route: 401 without a token, 403 for a user account, 400 for a malformed body', async () => {
    server = await startServer();
    const admin = await server.login();
    const anna = await createUser(admin, ANNA);
    const userToken = await appLogin(ANNA);
    const invite = await createInvite(admin);
    const routes: Array<{ method: string; path: string; valid?: unknown }> = [
      { method: 'GET', path: '/admin/users' },
      { method: 'POST', path: '/admin/users', valid: { username: 'bob', password: 'bob-password' } },
      { method: 'GET', path: `/admin/users/${anna.id}` },
      { method: 'POST', path: `/admin/users/${anna.id}`, valid: { disabled: false } },
      { method: 'POST', path: `/admin/users/${anna.id}/password`, valid: { password: 'anna-password' } },
      { method: 'DELETE', path: `/admin/users/${anna.id}` },
      { method: 'GET', path: '/admin/invites' },
      { method: 'POST', path: '/admin/invites', valid: {} },
      { method: 'DELETE', path: `/admin/invites/${invite.id}` },
    ];
    for (const { method, path, valid } of routes) {
      const label = `${method} ${path}`;
      const bare = await call<ErrorBody>(method, path, valid === undefined ? {} : { body: valid });
      expect(bare.status, label).toBe(401);
      expect(bare.body.error.code, label).toBe('AUTH_REQUIRED');
      const asUser = await call<ErrorBody>(method, path, { token: userToken, ...(valid === undefined ? {} : { body: valid }) });
      expect(asUser.status, label).toBe(403);
      expect(asUser.body.error.code, label).toBe('INSUFFICIENT_SCOPE');
      if (method === 'GET') continue;
      const malformed = await call<ErrorBody>(method, path, { token: admin, body: '{"username":', headers: { 'content-type': 'application/json' } });
      expect(malformed.status, label).toBe(400);
      expect(malformed.body.error.code, label).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(typeof malformed.body.error.message, label).toBe('string');
      if (valid === undefined) continue;
      const wrongTypes = await call<ErrorBody>(method, path, { token: admin, body: { username: 1, password: [], role: 'root', disabled: 'yes', expiresInHours: 0 } });
      expect(wrongTypes.status, label).toBe(400);
      expect(wrongTypes.body.error.code, label).toBe('VALIDATION_FAILED');
      expect(wrongTypes.body.error.details?.[0]?.field, label).toMatch(/^body\./);
    }
    // Unknown ids: 404 with the aggregate's code.
    for (const [method, path, code] of [
      ['GET', '/admin/users/nobody', 'USER_NOT_FOUND'],
      ['POST', '/admin/users/nobody/password', 'USER_NOT_FOUND'],
      ['DELETE', '/admin/users/nobody', 'USER_NOT_FOUND'],
      ['DELETE', '/admin/invites/nothing', 'INVITE_NOT_FOUND'],
    ] as const) {
      const res = await call<ErrorBody>(method, path, { token: admin, ...(method === 'POST' ? { body: { password: 'long-enough' } } : {}) });
      expect(res.status, path).toBe(404);
      expect(res.body.error.code, path).toBe(code);
    }
    // Happy paths of the routes not walked above.
    expect((await call('POST', `/admin/users/${anna.id}`, { token: admin, body: { disabled: true } })).status).toBe(200);
    expect((await call('DELETE', `/admin/users/${anna.id}`, { token: admin })).status).toBe(200);
  });

  it('keeps one enabled admin: the last one can be neither demoted, disabled nor removed', async () => {
    server = await startServer();
    const admin = await server.login();
    const adminId = await ownId(admin);
    for (const [method, path, change] of [
      ['POST', `/admin/users/${adminId}`, { role: 'user' }],
      ['POST', `/admin/users/${adminId}`, { disabled: true }],
      ['DELETE', `/admin/users/${adminId}`, undefined],
    ] as const) {
      const res = await call<ErrorBody>(method, path, { token: admin, ...(change ? { body: change } : {}) });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('LAST_ADMIN');
    }
    expect((await call('GET', '/admin/users', { token: admin })).status).toBe(200);

    // A disabled admin does not count as the one that remains.
    const carol = await createUser(admin, { username: 'carol', password: 'carol-password', role: 'admin' });
    expect((await call('POST', `/admin/users/${carol.id}`, { token: admin, body: { disabled: true } })).status).toBe(200);
    expect((await call<ErrorBody>('POST', `/admin/users/${adminId}`, { token: admin, body: { role: 'user' } })).body.error.code).toBe('LAST_ADMIN');

    // With another enabled admin, an admin may step down: it ends their own sessions.
    await createUser(admin, { username: 'bob', password: 'bob-password', role: 'admin' });
    const demoted = await call<UserRecord>('POST', `/admin/users/${adminId}`, { token: admin, body: { role: 'user' } });
    expect(demoted.body).toMatchObject({ username: 'admin', role: 'user' });
    expect((await call('GET', '/admin/users', { token: admin })).status).toBe(401);
    const bob = await appLogin({ username: 'bob', password: 'bob-password' });
    const bobRemovesHimself = await call<ErrorBody>('DELETE', `/admin/users/${await ownId(bob)}`, { token: bob });
    expect(bobRemovesHimself.status).toBe(409);
    expect(bobRemovesHimself.body.error.code).toBe('LAST_ADMIN');
  });

  it('disabling an account ends its live sessions at once, in storage too, and refuses its login after the password check', async () => {
    const clock = new ManualClock(Date.now());
    server = await startServer({ clock });
    const admin = await server.login();
    const anna = await createUser(admin, ANNA);
    const live = await appLogin(ANNA);
    const other = await appLogin(ANNA);
    expect((await call('GET', '/app/auth/me', { token: live })).status).toBe(200);

    const disabled = await call<UserRecord>('POST', `/admin/users/${anna.id}`, { token: admin, body: { disabled: true } });
    expect(disabled.body).toMatchObject({ disabled: true });
    for (const token of [live, other]) {
      const refused = await call<Envelope>('GET', '/app/auth/me', { token });
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ status: false, code: 'INVALID_TOKEN', data: null });
    }
    const wrongPassword = await call<Envelope>('POST', '/app/auth/login', { body: { ...ANNA, password: 'not-her-password' } });
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body.code).toBe('INVALID_CREDENTIALS');
    const rightPassword = await call<Envelope>('POST', '/app/auth/login', { body: ANNA });
    expect(rightPassword.status).toBe(403);
    expect(rightPassword.body).toMatchObject({ status: false, code: 'ACCOUNT_DISABLED' });

    // The revocation reached storage: a restart does not bring the tokens back.
    await restart(clock);
    expect((await call('GET', '/app/auth/me', { token: live })).status).toBe(401);
    const again = await server.login();
    expect((await call('POST', `/admin/users/${anna.id}`, { token: again, body: { disabled: false } })).body).toMatchObject({ disabled: false });
    await appLogin(ANNA);
  });

  it('a login whose password check is still running when the account is demoted gets no admin token', async () => {
    server = await startServer();
    const admin = await server.login();
    const boss = await createUser(admin, { username: 'boss', password: 'boss-password', role: 'admin' });
    // The logins go first and wait on scrypt; the demotion, which hashes nothing, lands meanwhile.
    const logins = Array.from({ length: 3 }, () => call<{ accessToken?: string }>('POST', '/v1/os/auth/login', { body: { username: 'boss', password: 'boss-password' } }));
    const demoted = await call<UserRecord>('POST', `/admin/users/${boss.id}`, { token: admin, body: { role: 'user' } });
    expect(demoted.body).toMatchObject({ role: 'user' });
    for (const login of await Promise.all(logins)) {
      expect(login.status).toBe(200);
      const me = await call<ErrorBody>('GET', '/v1/os/auth/me', { token: login.body.accessToken! });
      expect(me.status, JSON.stringify(me.body)).toBe(403);
      expect((await call<Envelope<{ role: string }>>('GET', '/app/auth/me', { token: login.body.accessToken! })).body.data.role).toBe('user');
    }
  });
});

describe('registration', () => {
  it('is closed by default: 403 REGISTRATION_CLOSED under /app and /api', async () => {
    server = await startServer();
    for (const base of ['/app', '/api']) {
      const res = await register({ username: 'newbie', password: 'newbie-password' }, base);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: false, data: null, code: 'REGISTRATION_CLOSED' });
    }
  });

  it('in open mode, creates a user account, signs it in with a token and the session cookie', async () => {
    server = await startServer({ env: { APP_REGISTRATION: 'open' } });
    const res = await server.request('POST', '/api/auth/register', { body: { username: 'newbie', password: 'newbie-password', inviteCode: 'ignored' } });
    expect(res.status).toBe(201);
    const answer = await body<Session>(res);
    expect(answer).toMatchObject({ status: true, data: { tokenType: 'Bearer', scope: 'app', expiresIn: 3600 } });
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/hcs_session=.+HttpOnly/i);
    const me = await call<Envelope<{ username: string; role: string }>>('GET', '/app/auth/me', { headers: { cookie: cookie.split(';')[0]! } });
    expect(me.body.data).toMatchObject({ username: 'newbie', role: 'user' });
    // A user account has the App API only.
    expect((await call('GET', '/app/os/auth/me', { token: answer.data.token })).status).toBe(403);

    const taken = await register({ username: 'NEWBIE', password: 'other-password' });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ status: false, code: 'USERNAME_TAKEN' });
    const short = await register({ username: 'another', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ status: false, code: 'VALIDATION_FAILED' });
    const users = (await call<{ users: UserRecord[] }>('GET', '/admin/users', { token: await server.login() })).body.users;
    expect(users.map((u) => [u.username, u.role])).toEqual([['admin', 'admin'], ['newbie', 'user']]);
  });

  it('in invite mode, takes a code once, in any case and without dashes, and gives the invite its role', async () => {
    server = await startServer({ env: { APP_REGISTRATION: 'invite' } });
    const admin = await server.login();
    for (const inviteCode of [undefined, '', 'AAAA-BBBB-CCCC']) {
      const res = await register({ username: 'newbie', password: 'newbie-password', ...(inviteCode === undefined ? {} : { inviteCode }) });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: false, code: 'INVITE_INVALID' });
    }

    const invite = await createInvite(admin, { note: 'for the newbie' });
    expect(invite.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    expect(invite).toMatchObject({ role: 'user', note: 'for the newbie', createdBy: await ownId(admin), state: 'active', usedAt: null, usedBy: null });
    expect(invite.expiresAt - invite.createdAt).toBe(72 * HOUR);
    expect(Object.keys(invite)).not.toContain('codeHash');

    const typed = invite.code.replace(/-/g, '').toLowerCase();
    const joined = await register({ username: 'newbie', password: 'newbie-password', inviteCode: typed });
    expect(joined.status).toBe(201);
    expect(joined.body.data.scope).toBe('app');
    const reused = await register({ username: 'second', password: 'second-password', inviteCode: invite.code });
    expect(reused.status).toBe(403);
    expect(reused.body.code).toBe('INVITE_INVALID');

    const listed = await call<{ invites: InviteRecord[] }>('GET', '/admin/invites', { token: admin });
    expect(JSON.stringify(listed.body)).not.toContain(invite.code);
    const used = listed.body.invites.find((i) => i.id === invite.id)!;
    const newbieId = (await call<{ users: UserRecord[] }>('GET', '/admin/users', { token: admin })).body.users.find((u) => u.username === 'newbie')!.id;
    expect(used).toMatchObject({ state: 'used', usedBy: newbieId });
    expect(used.usedAt).toEqual(expect.any(Number));
    const revokeUsed = await call<ErrorBody>('DELETE', `/admin/invites/${invite.id}`, { token: admin });
    expect(revokeUsed.status).toBe(409);
    expect(revokeUsed.body.error.code).toBe('INVITE_USED');

    // Two registrations racing for one code: exactly one gets it.
    const raced = await createInvite(admin);
    const racers = await Promise.all(['racer1', 'racer2'].map((username) => register({ username, password: 'racer-password', inviteCode: raced.code })));
    expect(racers.map((r) => r.status).sort()).toEqual([201, 403]);

    // A taken name does not use the invite up.
    const adminInvite = await createInvite(admin, { role: 'admin' });
    expect((await register({ username: 'Newbie', password: 'newbie-password', inviteCode: adminInvite.code })).body.code).toBe('USERNAME_TAKEN');
    const promoted = await register({ username: 'deputy', password: 'deputy-password', inviteCode: adminInvite.code });
    expect(promoted.status).toBe(201);
    expect(promoted.body.data.scope).toBe('os_api_admin');
  });

  it('lets invites expire and be revoked (injected clock)', async () => {
    const clock = new ManualClock(Date.now());
    server = await startServer({ clock, env: { APP_REGISTRATION: 'invite' } });
    const admin = await server.login();
    const short = await createInvite(admin, { expiresInHours: 1 });
    expect(short.expiresAt - short.createdAt).toBe(HOUR);
    for (const expiresInHours of [0, 721, 1.5]) {
      expect((await call('POST', '/admin/invites', { token: admin, body: { expiresInHours } })).status, String(expiresInHours)).toBe(400);
    }
    clock.advance(HOUR - 1);
    expect((await call<InviteRecord[]>('GET', '/admin/invites', { token: admin })).body).toMatchObject({ invites: [{ state: 'active' }] });
    clock.advance(1);
    const expired = await register({ username: 'late', password: 'late-password', inviteCode: short.code });
    expect(expired.status).toBe(403);
    expect(expired.body.code).toBe('INVITE_INVALID');

    // The admin's token lived as long as the invite did.
    const again = await server.login();
    const revocable = await createInvite(again);
    const revoked = await call<InviteRecord>('DELETE', `/admin/invites/${revocable.id}`, { token: again });
    expect(revoked.body).toMatchObject({ id: revocable.id, state: 'revoked' });
    expect((await register({ username: 'late', password: 'late-password', inviteCode: revocable.code })).status).toBe(403);
    const states = (await call<{ invites: InviteRecord[] }>('GET', '/admin/invites', { token: again })).body.invites.map((i) => [i.id, i.state]);
    expect(states).toEqual(expect.arrayContaining([[short.id, 'expired'], [revocable.id, 'revoked']]));
  });

  it('counts wrong invite codes against the client in the login limiter: 429 with Retry-After', async () => {
    const clock = new ManualClock(Date.now());
    server = await startServer({ clock, env: { APP_REGISTRATION: 'invite', LOGIN_MAX_FAILURES_PER_CLIENT: '3', LOGIN_FAILURE_WINDOW_SECONDS: '60' } });
    const admin = await server.login();
    const invite = await createInvite(admin);
    for (let i = 0; i < 3; i++) expect((await register({ username: `guess${i}`, password: 'guess-password', inviteCode: `WRONG-${i}` })).status).toBe(403);

    const limited = await register({ username: 'newbie', password: 'newbie-password', inviteCode: invite.code });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body).toMatchObject({ status: false, code: 'TOO_MANY_LOGIN_ATTEMPTS' });
    // One limiter: the same client's logins wait too.
    expect((await call('POST', '/app/auth/login', { body: ADMIN })).status).toBe(429);

    clock.advance(61_000);
    expect((await register({ username: 'newbie', password: 'newbie-password', inviteCode: invite.code })).status).toBe(201);
  });
});

describe('sessions', () => {
  it('logout with only the session cookie ends that token for the cookie and the bearer form alike', async () => {
    server = await startServer();
    const res = await server.request('POST', '/app/auth/login', { body: ADMIN });
    const { token, csrfToken } = (await body<Session>(res)).data;
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie).toBe(`hcs_session=${token}`);
    const other = await server.login();

    const out = await server.request('POST', '/app/auth/logout', { headers: { cookie, 'x-csrf-token': csrfToken } });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/hcs_session=;/);
    for (const init of [{ headers: { cookie } }, { token }]) {
      const me = await call<Envelope>('GET', '/app/auth/me', init);
      expect(me.status).toBe(401);
      expect(me.body).toMatchObject({ status: false, code: 'INVALID_TOKEN' });
    }
    expect((await call('GET', '/app/os/auth/me', { token })).status).toBe(401);
    // Only the presented token ends.
    expect((await call('GET', '/app/os/auth/me', { token: other })).status).toBe(200);
  });

  it('logout with a bearer token and a session cookie holding another token ends both', async () => {
    server = await startServer();
    const res = await server.request('POST', '/app/auth/login', { body: ADMIN });
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const cookieToken = (await body<Session>(res)).data.token;
    const bearer = await appLogin(ADMIN);

    expect((await server.request('POST', '/app/auth/logout', { token: bearer, headers: { cookie } })).status).toBe(200);
    for (const token of [bearer, cookieToken]) expect((await call('GET', '/app/auth/me', { token })).status).toBe(401);
  });

  it('keeps tokens across a restart until they expire', async () => {
    const start = Date.now();
    const clock = new ManualClock(start);
    const env = { ACCESS_TOKEN_TTL_SECONDS: '600' };
    server = await startServer({ clock, env });
    const early = await appLogin(ADMIN);
    clock.advance(300_000);
    const later = await appLogin(ADMIN);

    await restart(new ManualClock(clock.now()), env);
    expect((await call('GET', '/app/auth/me', { token: early })).status).toBe(200);
    expect((await call('GET', '/app/auth/me', { token: later })).status).toBe(200);

    (server.clock as ManualClock).advance(301_000);
    expect((await call('GET', '/app/auth/me', { token: early })).status).toBe(401);
    expect((await call('GET', '/app/auth/me', { token: later })).status).toBe(200);

    // Started after the expiry, a server does not load it at all.
    await restart(new ManualClock(start + 601_000), env);
    expect((await call('GET', '/app/auth/me', { token: early })).status).toBe(401);
    expect((await call('GET', '/app/auth/me', { token: later })).status).toBe(200);
  });
});
