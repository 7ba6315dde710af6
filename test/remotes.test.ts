/**
 * Remote controllers: pairing over Socket.IO and REST (household confirmation and code entry),
 * expiry, wrong-code limits, revocation, key dispatch through action maps and the active source,
 * and the remote route family's guard rules. Real server, real sockets, a real WebSocket driver.
 */
import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { TestDriver, eventually, type Message } from './support/ws-driver.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

let server: TestServer;
let admin: string;
let driver: TestDriver;
const actions: Array<{ device: string; command: string; params: Record<string, unknown> }> = [];
const ids = { tv: '', lamp: '' };
const spaces = { living: '', kitchen: '' };
const closers: Array<() => void> = [];

const TV_SOURCE = () => `${ids.tv}:tuner`;
const LAMP_SOURCE = () => `${ids.lamp}:light`;

async function call(method: string, path: string, body?: unknown, token?: string): Promise<Answer> {
  const res = await server.request(method, path, { ...(token ? { token } : {}), ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {}, headers: res.headers };
}
const os = (method: string, path: string, body?: unknown) => call(method, `/v1/os${path}`, body, admin);

function socket(namespace: string, auth: Record<string, unknown> = {}): Socket {
  const s = connect(`${server.url}${namespace}`, { transports: ['websocket'], auth, reconnection: false, forceNew: true });
  closers.push(() => s.disconnect());
  return s;
}

function next<T>(s: Socket, event: string, match: (payload: T) => boolean = () => true, timeoutMs = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no matching ${event} within ${timeoutMs} ms`)), timeoutMs);
    const listener = (payload: T) => {
      if (!match(payload)) return;
      clearTimeout(timer);
      s.off(event, listener);
      resolve(payload);
    };
    s.on(event, listener);
  });
}

async function codeOf(requestId: string): Promise<string> {
  const { body } = await os('GET', '/remotes/pairing');
  const request = (body.requests as Json[]).find((r) => r.requestId === requestId);
  if (!request) throw new Error(`request ${requestId} is not pending`);
  return request.code as string;
}

const otherCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(code.length, '0');

/** The CSRF token a web UI page carries for its session. */
const csrfOf = (page: string) => /<meta name="csrf-token" content="([^"]+)">/.exec(page)![1]!;

/** Pairs a remote over REST by entering the code; answers its id and token. */
async function pairRemote(name: string, spaceId = spaces.living): Promise<{ id: string; token: string }> {
  const started = await call('POST', '/remote/pair/start', { name });
  expect(started.status).toBe(201);
  const paired = await call('POST', `/remote/pair/${started.body.requestId}/code`, { code: await codeOf(started.body.requestId) });
  expect(paired.status, JSON.stringify(paired.body)).toBe(200);
  const remote = { id: paired.body.remote.id as string, token: paired.body.token as string };
  expect((await call('POST', '/remote/space', { spaceId }, remote.token)).status).toBe(200);
  return remote;
}

async function saveMap(body: Json): Promise<Json> {
  const res = await os('POST', '/action-maps/save', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

beforeAll(async () => {
  // Timers on the manual clock too: request expiry fires when the test moves time.
  const clock = new ManualClock();
  server = await startServer({ clock, timers: clock });
  admin = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.remote');
  driver.serveActions((action: Message) => {
    actions.push({ device: String(action.deviceId), command: String(action.command), params: (action.params ?? {}) as Record<string, unknown> });
    return undefined;
  });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'tv', name: 'TV', commands: ['power_on', 'power_off', 'volume_up', 'mute'] } });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Lamp', commands: ['turn_on', 'turn_off'] } });
  const devices = await eventually(async () => {
    const list = (await os('GET', '/devices')).body.devices as Json[];
    return list.length === 2 ? list : undefined;
  });
  for (const device of devices) ids[device.driverDeviceId as 'tv' | 'lamp'] = device.id as string;
  spaces.living = (await os('POST', '/spaces/save', { name: 'Living' })).body.id;
  spaces.kitchen = (await os('POST', '/spaces/save', { name: 'Kitchen' })).body.id;
  await os('POST', `/devices/${ids.tv}/metadata`, { room: spaces.living, remoteSources: [{ id: 'tuner', label: 'TV' }] });
  await os('POST', `/devices/${ids.lamp}/metadata`, { room: spaces.living, remoteSources: [{ id: 'light', label: 'Light' }] });
});

afterEach(async () => {
  for (const close of closers.splice(0)) close();
  actions.length = 0;
  // Past every request's life and the wrong-code window, so each test starts with clean limits.
  (server.clock as ManualClock).advance(11 * 60_000);
  admin = await server.login();
});

afterAll(async () => {
  driver?.close();
  await server?.close();
});

describe('pairing', () => {
  it('pairs over Socket.IO: token-less connect, code on the hub, household confirmation, token on the remote socket', async () => {
    const hubSocket = socket('/socket/hub-protocol', { token: admin });
    await next(hubSocket, 'connect');
    const remote = socket('/socket/remote-connect');
    await next(remote, 'connect');

    const requested = next<Json>(hubSocket, 'hub:event', (e) => e.type === 'remote.pairing_requested');
    const opened = next<Json>(remote, 'remote:pairing:status');
    remote.emit('remote:pairing', { name: 'Wall panel', kind: 'wall-panel' });
    const pending = await opened;
    expect(pending).toMatchObject({ status: 'pending', codeLength: 6, attemptsLeft: 5 });
    expect(pending).not.toHaveProperty('code');
    expect(Date.parse(pending.expiresAt) - server.clock.now()).toBe(120_000);

    const event = (await requested).data as Json;
    expect(event).toMatchObject({ requestId: pending.requestId, name: 'Wall panel', kind: 'wall-panel', expiresAt: pending.expiresAt });
    expect(event.code).toMatch(/^\d{6}$/);
    expect(await codeOf(pending.requestId)).toBe(event.code);

    const delivered = next<Json>(remote, 'remote:pairing:status', (s) => s.status === 'paired');
    const confirmed = await os('POST', `/remotes/pairing/${pending.requestId}/confirm`, { name: 'Hall panel', spaceId: spaces.living });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ requestId: pending.requestId, status: 'paired', remote: { name: 'Hall panel', kind: 'wall-panel', activeSpaceId: spaces.living } });
    expect(confirmed.body).not.toHaveProperty('token');
    expect(confirmed.body.remote).not.toHaveProperty('tokenHash');

    const paired = await delivered;
    expect(paired).toMatchObject({ requestId: pending.requestId, status: 'paired', remote: { id: confirmed.body.remote.id, name: 'Hall panel' } });
    expect(paired.token).toEqual(expect.any(String));
    // Handed over once: a poll afterwards says it was.
    const poll = await call('GET', `/remote/pair/${pending.requestId}`);
    expect(poll.body).toMatchObject({ status: 'paired', tokenDelivered: true });
    expect(poll.body).not.toHaveProperty('token');

    const session = await call('GET', '/remote/session', undefined, paired.token);
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ remote: { id: confirmed.body.remote.id, name: 'Hall panel', pairedBy: expect.any(String) }, space: { id: spaces.living } });
    expect(session.body.sources.map((s: Json) => s.id).sort()).toEqual([LAMP_SOURCE(), TV_SOURCE()].sort());
    expect((await os('GET', '/remotes')).body.remotes.map((r: Json) => r.id)).toContain(confirmed.body.remote.id);
  });

  it('pairs over REST by entering the code, under both bases, and answers the token once', async () => {
    const started = await call('POST', '/v1/remote/pair/start', { name: 'Handheld' });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ status: 'pending', codeLength: 6 });
    expect((await call('GET', `/remote/pair/${started.body.requestId}`)).body).toMatchObject({ status: 'pending', attemptsLeft: 5 });

    const code = await codeOf(started.body.requestId);
    const paired = await call('POST', `/remote/pair/${started.body.requestId}/code`, { code });
    expect(paired.status).toBe(200);
    expect(paired.body).toMatchObject({ status: 'paired', token: expect.any(String), remote: { name: 'Handheld' } });
    expect((await os('GET', '/remotes')).body.remotes.find((r: Json) => r.id === paired.body.remote.id)).toMatchObject({ pairedBy: 'code' });

    const poll = await call('GET', `/v1/remote/pair/${started.body.requestId}`);
    expect(poll.body).toMatchObject({ status: 'paired', tokenDelivered: true });
    expect(poll.body).not.toHaveProperty('token');
    const again = await call('POST', `/remote/pair/${started.body.requestId}/code`, { code });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'PAIRING_CLOSED', details: { status: 'paired' } });
    // No space asked for and no default space: the remote starts in none.
    const session = await call('GET', '/v1/remote/session', undefined, paired.body.token);
    expect(session.body).toMatchObject({ remote: { activeSpaceId: null }, space: null, activeSourceId: null, sources: [] });
    const noSpace = await call('POST', '/remote/source', { sourceId: TV_SOURCE() }, paired.body.token);
    expect(noSpace.status).toBe(409);
    expect(noSpace.body.error.code).toBe('NO_ACTIVE_SPACE');
    expect((await call('POST', '/remote/keys/power', {}, paired.body.token)).body.error).toMatchObject({ code: 'KEY_NOT_MAPPED', details: { spaceId: null, sourceId: null } });

    const unknown = await call('GET', '/remote/pair/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('PAIRING_REQUEST_NOT_FOUND');
    expect((await call('GET', '/remote/pair/not-a-uuid')).status).toBe(400);
  });

  it('expires a request two minutes after it opened, telling the socket that opened it', async () => {
    const remote = socket('/socket/remote-connect');
    const opened = next<Json>(remote, 'remote:pairing:status');
    remote.emit('remote:pairing', { name: 'Late remote' });
    const { requestId } = await opened;
    const rest = (await call('POST', '/remote/pair/start', { name: 'Late too' })).body.requestId as string;

    const expired = next<Json>(remote, 'remote:pairing:status', (s) => s.status === 'expired');
    (server.clock as ManualClock).advance(119_999);
    expect((await call('GET', `/remote/pair/${rest}`)).body.status).toBe('pending');
    (server.clock as ManualClock).advance(1);
    expect(await expired).toMatchObject({ requestId, status: 'expired' });
    expect((await call('GET', `/remote/pair/${rest}`)).body.status).toBe('expired');

    const late = await call('POST', `/remote/pair/${rest}/code`, { code: '123456' });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('PAIRING_EXPIRED');
    expect((await os('POST', `/remotes/pairing/${requestId}/confirm`, {})).body.error.code).toBe('PAIRING_EXPIRED');
    expect((await os('GET', '/remotes/pairing')).body.requests).toEqual([]);
  });

  it('rejects a request after five wrong codes, limits wrong codes per address and open requests per address', async () => {
    const first = (await call('POST', '/remote/pair/start', { name: 'Guesser' })).body.requestId as string;
    const wrong = otherCode(await codeOf(first));
    for (let attempt = 1; attempt <= 5; attempt++) {
      const res = await call('POST', `/remote/pair/${first}/code`, { code: wrong });
      expect(res.status, `attempt ${attempt}`).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'PAIRING_CODE_INVALID', details: { attemptsLeft: 5 - attempt } });
    }
    const sixth = await call('POST', `/remote/pair/${first}/code`, { code: wrong });
    expect(sixth.status).toBe(429);
    expect(sixth.body.error).toMatchObject({ code: 'PAIRING_RATE_LIMITED', details: { status: 'rejected' } });
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await call('GET', `/remote/pair/${first}`)).body).toMatchObject({ status: 'rejected', reason: 'too_many_attempts' });

    // Ten wrong codes per address in ten minutes, whichever requests they were for.
    const second = (await call('POST', '/remote/pair/start', { name: 'Guesser 2' })).body.requestId as string;
    const secondWrong = otherCode(await codeOf(second));
    for (let attempt = 1; attempt <= 4; attempt++) expect((await call('POST', `/remote/pair/${second}/code`, { code: secondWrong })).status).toBe(403);
    const third = (await call('POST', '/remote/pair/start', { name: 'Guesser 3' })).body.requestId as string;
    expect((await call('POST', `/remote/pair/${third}/code`, { code: otherCode(await codeOf(third)) })).status).toBe(403);
    const limited = await call('POST', `/remote/pair/${third}/code`, { code: await codeOf(third) });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('PAIRING_RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    // The household can still decide; a rejected request says so.
    const rejected = await os('POST', `/remotes/pairing/${third}/reject`);
    expect(rejected.body).toMatchObject({ status: 'rejected', reason: 'rejected_by_household' });
    expect((await os('POST', `/remotes/pairing/${third}/reject`)).body.error.code).toBe('PAIRING_CLOSED');

    // At most five open requests per address (one is still open here).
    for (let i = 0; i < 4; i++) expect((await call('POST', '/remote/pair/start', { name: `Extra ${i}` })).status).toBe(201);
    const crowded = await call('POST', '/remote/pair/start', { name: 'One too many' });
    expect(crowded.status).toBe(429);
    expect(crowded.body.error.code).toBe('TOO_MANY_PAIRING_REQUESTS');
    expect(Number(crowded.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('answers socket pairing failures as status events with the error code, and pairs by code over the socket', async () => {
    const remote = socket('/socket/remote-connect');
    const opened = next<Json>(remote, 'remote:pairing:status');
    remote.emit('remote:pairing', { name: 'Socket typist' });
    const { requestId } = await opened;
    const code = await codeOf(requestId);
    const wrong = await remote.emitWithAck('remote:pairing', { requestId, code: otherCode(code) });
    expect(wrong).toMatchObject({ requestId, status: 'pending', error: { code: 'PAIRING_CODE_INVALID' } });
    const invalid = await remote.emitWithAck('remote:pairing', { name: '' });
    expect(invalid).toMatchObject({ status: 'failed', error: { code: 'INVALID_PAYLOAD' } });
    const seen: Json[] = [];
    remote.on('remote:pairing:status', (s: Json) => seen.push(s));
    const paired = await remote.emitWithAck('remote:pairing', { requestId, code });
    expect(paired).toMatchObject({ requestId, status: 'paired', token: expect.any(String) });
    // One answer only: the push that follows a change is not repeated to the socket that caused it.
    await eventually(() => seen.length === 1);
    expect(seen[0]).toEqual(paired);
  });

  it('lists pending requests with their codes in the web UI, whose buttons decide through the session', async () => {
    const login = await server.request('POST', '/app/auth/login', { body: ADMIN });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const requestId = (await call('POST', '/remote/pair/start', { name: 'Kitchen tablet' })).body.requestId as string;
    const page = await (await server.request('GET', '/os/', { headers: { cookie } })).text();
    expect(page).toContain('Kitchen tablet');
    expect(page).toContain(await codeOf(requestId));
    // The page's forms carry the session's CSRF token; a POST without it is refused.
    const csrf = csrfOf(page);
    expect((await server.request('POST', `/os/remotes/pairing/${requestId}/confirm`, { headers: { cookie }, body: {} })).status).toBe(403);
    const confirm = await server.request('POST', `/os/remotes/pairing/${requestId}/confirm`, { headers: { cookie, 'x-csrf-token': csrf }, body: {} });
    expect(confirm.status).toBe(200);
    expect((await call('GET', `/remote/pair/${requestId}`)).body).toMatchObject({ status: 'paired', token: expect.any(String) });
    expect((await server.request('POST', `/os/remotes/pairing/${requestId}/reject`, { body: {} })).status).toBe(401);
  });

  it('answers the token to whoever enters the right code, even when a socket opened the request', async () => {
    const remote = socket('/socket/remote-connect');
    await next(remote, 'connect');
    const opened = (await remote.emitWithAck('remote:pairing', { name: 'Two-handed remote' })) as Json;
    const pushed = next<Json>(remote, 'remote:pairing:status', (s) => s.status === 'paired');
    const paired = await call('POST', `/remote/pair/${opened.requestId}/code`, { code: await codeOf(opened.requestId) });
    expect(paired.status).toBe(200);
    expect(paired.body).toMatchObject({ status: 'paired', token: expect.any(String) });
    // The opener hears of the outcome, but the token was the code's answer and is not handed over twice.
    const told = await pushed;
    expect(told).toMatchObject({ requestId: opened.requestId, status: 'paired', tokenDelivered: true });
    expect(told).not.toHaveProperty('token');
    expect((await call('GET', '/remote/session', undefined, paired.body.token)).status).toBe(200);
  });
});

describe('revocation', () => {
  it('closes the remote socket and refuses its token at once', async () => {
    const { id, token } = await pairRemote('Doomed');
    const bad = socket('/socket/remote-connect', { token: 'forged' });
    expect((await next<Error & { data?: Json }>(bad, 'connect_error')).data?.code).toBe('INVALID_TOKEN');
    const live = socket('/socket/remote-connect', { token });
    await next(live, 'connect');
    await saveMap({ name: 'Ping', controlKey: 'ping', deviceId: ids.lamp, command: 'turn_on', spaceId: spaces.living });
    expect(await live.emitWithAck('remote:key', { key: 'ping' })).toMatchObject({ ok: true, data: { key: 'ping', ok: true } });

    const gone = next<string>(live, 'disconnect');
    const revoked = await os('DELETE', `/remotes/${id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ revoked: true, remote: { id, name: 'Doomed' } });
    expect(await gone).toBe('io server disconnect');
    const refused = await call('GET', '/remote/session', undefined, token);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_TOKEN');
    expect((await os('GET', '/remotes')).body.remotes.map((r: Json) => r.id)).not.toContain(id);
    expect((await os('DELETE', `/remotes/${id}`)).body.error.code).toBe('REMOTE_NOT_FOUND');
    const again = socket('/socket/remote-connect', { token });
    expect((await next<Error & { data?: Json }>(again, 'connect_error')).data?.code).toBe('INVALID_TOKEN');

    const other = await pairRemote('Survivor');
    const viaAdmin = await call('DELETE', `/admin/remotes/${other.id}`, undefined, admin);
    expect(viaAdmin.status).toBe(200);
    expect((await call('GET', '/admin/remotes', undefined, admin)).body.remotes.map((r: Json) => r.id)).not.toContain(other.id);
  });
});

describe('key dispatch', () => {
  it('runs an action map of the active space on the driver, falls back to the source device, and says what ran', async () => {
    const { id, token } = await pairRemote('Couch remote');
    const hubSocket = socket('/socket/hub-protocol', { token: admin });
    await next(hubSocket, 'connect');
    const map = await saveMap({ name: 'Power', controlKey: 'power', deviceId: ids.tv, command: 'power_on', params: { delay: 0 }, spaceId: spaces.living });

    const pressed = next<Json>(hubSocket, 'hub:event', (e) => e.type === 'remote.key_pressed');
    const res = await call('POST', '/remote/keys/power', { params: { source: 'remote' } }, token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      key: 'power',
      resolvedBy: 'action_map',
      actionMapId: map.id,
      target: { kind: 'device_command', deviceId: ids.tv, command: 'power_on', params: { delay: 0 } },
      ok: true,
    });
    expect(actions).toEqual([{ device: 'tv', command: 'power_on', params: { delay: 0, source: 'remote' } }]);
    expect((await pressed).data).toEqual({ remoteId: id, key: 'power', ok: true });
    const listed = (await os('GET', '/remotes')).body.remotes.find((r: Json) => r.id === id);
    expect(listed).toMatchObject({ lastSeenAt: server.clock.now(), lastAddress: '127.0.0.1' });

    const unmapped = await call('POST', '/remote/keys/volume_up', {}, token);
    expect(unmapped.status).toBe(404);
    expect(unmapped.body.error).toMatchObject({ code: 'KEY_NOT_MAPPED', details: { key: 'volume_up', spaceId: spaces.living, sourceId: null } });

    const activated = await call('POST', '/remote/source', { sourceId: TV_SOURCE() }, token);
    expect(activated.status).toBe(200);
    expect(activated.body.source).toMatchObject({ id: TV_SOURCE(), active: true });
    actions.length = 0;
    const fallback = await call('POST', '/v1/remote/keys/volume_up', undefined, token);
    expect(fallback.body).toEqual({ key: 'volume_up', resolvedBy: 'source_device', target: { kind: 'device_command', deviceId: ids.tv, command: 'volume_up' }, ok: true });
    expect(actions).toEqual([{ device: 'tv', command: 'volume_up', params: {} }]);
    expect((await call('POST', '/remote/keys/nothing_here', {}, token)).body.error.details).toEqual({ key: 'nothing_here', spaceId: spaces.living, sourceId: TV_SOURCE() });

    actions.length = 0;
    const batch = await call('POST', '/remote/keys', { keys: ['power', { key: 'volume_up', params: { step: 2 } }, 'nothing_here', 'power'] }, token);
    expect(batch.status).toBe(200);
    expect(batch.body.ok).toBe(false);
    expect(batch.body.results.map((r: Json) => [r.key, r.ok, r.resolvedBy ?? r.error?.code])).toEqual([
      ['power', true, 'action_map'],
      ['volume_up', true, 'source_device'],
      ['nothing_here', false, 'KEY_NOT_MAPPED'],
      ['power', true, 'action_map'],
    ]);
    expect(actions.map((a) => a.command)).toEqual(['power_on', 'volume_up', 'power_on']);
    const stopped = await call('POST', '/remote/keys', { keys: ['nothing_here', 'power'], stopOnError: true }, token);
    expect(stopped.body.results).toEqual([
      { key: 'nothing_here', ok: false, error: expect.objectContaining({ code: 'KEY_NOT_MAPPED' }) },
      { key: 'power', ok: false, skipped: true },
    ]);
    const tooMany = await call('POST', '/remote/keys', { keys: Array.from({ length: 21 }, () => 'power') }, token);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe('VALIDATION_FAILED');

    expect((await call('POST', '/remote/space', { spaceId: 'nowhere' }, token)).body.error.code).toBe('SPACE_NOT_FOUND');
    expect((await call('POST', '/remote/source', { sourceId: 'nowhere' }, token)).body.error.code).toBe('REMOTE_SOURCE_NOT_FOUND');
    await os('POST', `/action-maps/${map.id}/remove`);
  });

  it('prefers a map of the active source over one of the space over a global one', async () => {
    const { token } = await pairRemote('Picky remote');
    const global = await saveMap({ name: 'Red everywhere', controlKey: 'red', deviceId: ids.lamp, command: 'turn_off' });
    const space = await saveMap({ name: 'Red in the living room', controlKey: 'red', deviceId: ids.lamp, command: 'turn_on', spaceId: spaces.living });
    const source = await saveMap({ name: 'Red on TV', controlKey: 'red', deviceId: ids.tv, command: 'mute', spaceId: spaces.living, sourceId: TV_SOURCE() });
    expect(source).toMatchObject({ sourceId: TV_SOURCE(), spaceId: spaces.living });
    const red = async () => (await call('POST', '/remote/keys/red', {}, token)).body.actionMapId as string;

    expect((await call('POST', '/remote/source', { sourceId: TV_SOURCE() }, token)).status).toBe(200);
    expect(await red()).toBe(source.id);
    expect((await call('POST', '/remote/source', { sourceId: LAMP_SOURCE() }, token)).status).toBe(200);
    expect(await red()).toBe(space.id);
    const moved = await call('POST', '/remote/space', { spaceId: spaces.kitchen }, token);
    expect(moved.body).toMatchObject({ remote: { activeSpaceId: spaces.kitchen }, space: { id: spaces.kitchen }, sources: [] });
    expect(await red()).toBe(global.id);
    const noSource = await call('POST', '/remote/source', { sourceId: TV_SOURCE() }, token);
    expect(noSource.body.error.code).toBe('REMOTE_SOURCE_NOT_FOUND');
    for (const map of [global, space, source]) await os('POST', `/action-maps/${map.id}/remove`);
  });

  it('runs macro and program targets, and validates action map targets', async () => {
    const { token } = await pairRemote('Scene remote');
    const macro = (await os('POST', '/macros/save', { name: 'Movie', steps: [{ deviceId: ids.lamp, command: 'turn_off' }, { deviceId: ids.tv, command: 'power_on' }] })).body;
    const program = (await os('POST', '/programs/save', { name: 'Night', steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_off' }] })).body;
    const movie = await saveMap({ name: 'Movie key', controlKey: 'movie', macroId: macro.id });
    const night = await saveMap({ name: 'Night key', controlKey: 'night', programId: program.id, spaceId: spaces.living });
    expect(movie).not.toHaveProperty('deviceId');

    const ranMacro = await call('POST', '/remote/keys/movie', {}, token);
    expect(ranMacro.body).toMatchObject({ resolvedBy: 'action_map', actionMapId: movie.id, target: { kind: 'macro', macroId: macro.id }, ok: true, result: { macroId: macro.id, ok: true } });
    expect(actions.map((a) => `${a.device}.${a.command}`)).toEqual(['lamp.turn_off', 'tv.power_on']);
    actions.length = 0;
    const ranProgram = await call('POST', '/remote/keys/night', {}, token);
    expect(ranProgram.body).toMatchObject({ target: { kind: 'program', programId: program.id }, ok: true, result: { programId: program.id, trigger: 'action_map' } });
    await eventually(() => actions.some((a) => a.device === 'lamp' && a.command === 'turn_off'));

    // The same runner answers the OS API's trigger and activity presets.
    const triggered = await os('POST', `/action-maps/${movie.id}/trigger`);
    expect(triggered.body).toMatchObject({ actionMapId: movie.id, target: { kind: 'macro' }, ok: true });
    const preset = await os('POST', `/activity-presets/${encodeURIComponent(`action:${movie.id}`)}/run`);
    expect(preset.body).toMatchObject({ presetId: `action:${movie.id}`, macro: { macroId: macro.id, ok: true } });

    const twoTargets = await os('POST', '/action-maps/save', { name: 'Both', controlKey: 'x', macroId: macro.id, programId: program.id });
    expect(twoTargets.status).toBe(400);
    expect(twoTargets.body.error.code).toBe('ACTION_MAP_TARGET_INVALID');
    expect((await os('POST', '/action-maps/save', { name: 'None', controlKey: 'x' })).body.error.code).toBe('ACTION_MAP_TARGET_INVALID');
    expect((await os('POST', '/action-maps/save', { name: 'Half', controlKey: 'x', deviceId: ids.tv })).body.error.code).toBe('ACTION_MAP_TARGET_INVALID');
    expect((await os('POST', '/action-maps/save', { name: 'Ghost', controlKey: 'x', macroId: 'ghost' })).body.error.code).toBe('MACRO_NOT_FOUND');
    expect((await os('POST', '/action-maps/save', { name: 'Ghost', controlKey: 'x', programId: 'ghost' })).body.error.code).toBe('PROGRAM_NOT_FOUND');
    const badSource = await os('POST', '/action-maps/save', { name: 'Ghost', controlKey: 'x', deviceId: ids.tv, command: 'mute', sourceId: 'ghost:tuner' });
    expect(badSource.status).toBe(404);
    expect(badSource.body.error.code).toBe('UNKNOWN_REMOTE_SOURCE');
    const inUse = await os('POST', `/macros/${macro.id}/remove`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error).toMatchObject({ code: 'MACRO_IN_USE', details: { users: [{ kind: 'action_map', id: movie.id, name: 'Movie key' }] } });
    for (const map of [movie, night]) await os('POST', `/action-maps/${map.id}/remove`);
  });
});

describe('a remote paired by a household member', () => {
  it('reaches only what that member sees, hides the codes from them, and goes when the member is removed', async () => {
    const created = await call('POST', '/admin/users', { username: 'nina', password: 'nina-password', role: 'user' }, admin);
    expect(created.status).toBe(201);
    const nina = created.body.id as string;
    expect((await call('POST', `/admin/users/${nina}/access`, { spaceIds: [spaces.kitchen], deviceIds: [ids.tv] }, admin)).status).toBe(200);
    const login = await server.request('POST', '/app/auth/login', { body: { username: 'nina', password: 'nina-password' } });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const requestId = (await call('POST', '/remote/pair/start', { name: "Nina's remote" })).body.requestId as string;
    const page = await (await server.request('GET', '/os/', { headers: { cookie } })).text();
    const asNina = (path: string, body: unknown) => server.request('POST', path, { headers: { cookie, 'x-csrf-token': csrfOf(page) }, body });
    expect(page).toContain("Nina&#39;s remote");
    expect(page).not.toContain(await codeOf(requestId));

    const elsewhere = await asNina(`/os/remotes/pairing/${requestId}/confirm`, { spaceId: spaces.living });
    expect(elsewhere.status).toBe(404);
    expect(((await elsewhere.json()) as Json).error.code).toBe('SPACE_NOT_FOUND');
    expect((await asNina(`/os/remotes/pairing/${requestId}/confirm`, { spaceId: spaces.kitchen })).status).toBe(200);
    const paired = (await call('GET', `/remote/pair/${requestId}`)).body;
    expect(paired.remote).toMatchObject({ activeSpaceId: spaces.kitchen });
    const token = paired.token as string;

    expect((await call('POST', '/remote/space', { spaceId: spaces.living }, token)).body.error.code).toBe('SPACE_NOT_FOUND');
    await saveMap({ name: 'Lamp anywhere', controlKey: 'nina_lamp', deviceId: ids.lamp, command: 'turn_on' });
    await saveMap({ name: 'TV anywhere', controlKey: 'nina_mute', deviceId: ids.tv, command: 'mute' });
    const lamp = await call('POST', '/remote/keys/nina_lamp', {}, token);
    expect(lamp.status).toBe(404);
    expect(lamp.body.error.code).toBe('KEY_NOT_MAPPED');
    const mute = await call('POST', '/remote/keys/nina_mute', {}, token);
    expect(mute.body).toMatchObject({ ok: true, target: { deviceId: ids.tv, command: 'mute' } });
    expect(actions).toContainEqual(expect.objectContaining({ device: 'tv', command: 'mute' }));
    const lampMacro = (await os('POST', '/macros/save', { name: 'Lamp macro', steps: [{ deviceId: ids.lamp, command: 'turn_on' }] })).body.id as string;
    await saveMap({ name: 'Lamp by macro', controlKey: 'nina_macro', macroId: lampMacro });
    expect((await call('POST', '/remote/keys/nina_macro', {}, token)).body.error.code).toBe('KEY_NOT_MAPPED');
    expect(actions.some((a) => a.device === 'lamp')).toBe(false);

    // On the App API she lists the remotes she paired, not the household's, and sees no codes.
    const asNinaGet = async (path: string) => (await (await server.request('GET', path, { headers: { cookie } })).json()) as Json;
    const mine = (await asNinaGet('/app/integration/remotes')).data as Json[];
    expect(mine.map((r) => r.pairedBy)).toEqual([nina]);
    expect((await os('GET', '/remotes')).body.remotes.length).toBeGreaterThan(1);
    const pending = (await call('POST', '/remote/pair/start', { name: 'Second' })).body.requestId as string;
    const listed = ((await asNinaGet('/app/integration/remotes/pairing')).data as Json[]).find((r) => r.requestId === pending);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty('code');

    expect((await call('DELETE', `/admin/users/${nina}`, undefined, admin)).status).toBe(200);
    await eventually(async () => (await call('GET', '/remote/session', undefined, token)).status === 401, 2000, 'remote of a removed member refused');
  });
});

describe('pairing limits are settings', () => {
  it('takes its limits from REMOTE_PAIRING_*: wrong codes per request, open requests per address, lifetime', async () => {
    const clock = new ManualClock(Date.now());
    const limited = await startServer({ clock, timers: clock, env: { REMOTE_PAIRING_MAX_WRONG_CODES: '2', REMOTE_PAIRING_MAX_OPEN_PER_CLIENT: '1', REMOTE_PAIRING_LIFETIME_SECONDS: '30' } });
    try {
      const ask = async (method: string, path: string, body?: unknown) => {
        const res = await limited.request(method, path, body === undefined ? {} : { body });
        return { status: res.status, body: (await res.json()) as Json };
      };
      const opened = await ask('POST', '/remote/pair/start', { name: 'Panel' });
      expect(opened.status).toBe(201);
      expect(opened.body).toMatchObject({ status: 'pending', attemptsLeft: 2 });
      expect(Date.parse(opened.body.expiresAt as string) - clock.now()).toBe(30_000);
      const second = await ask('POST', '/remote/pair/start', { name: 'Panel 2' });
      expect(second.status).toBe(429);
      expect((second.body.error as Json).code).toBe('TOO_MANY_PAIRING_REQUESTS');
      const requestId = opened.body.requestId as string;
      expect((await ask('POST', `/remote/pair/${requestId}/code`, { code: '000000' })).status).toBe(403);
      expect((await ask('POST', `/remote/pair/${requestId}/code`, { code: '000001' })).status).toBeGreaterThanOrEqual(403);
      expect((await ask('GET', `/remote/pair/${requestId}`)).body).toMatchObject({ status: 'rejected', reason: 'too_many_attempts' });
    } finally {
      await limited.close();
    }
  });
});
