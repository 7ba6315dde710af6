import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprintOf, generateClientIdentity, type ClientIdentity } from '../src/adapters/androidtv/identity.js';
import { AndroidTvPairing } from '../src/adapters/androidtv/pairing.js';
import { AndroidTvRemote, type AndroidTvState } from '../src/adapters/androidtv/remote.js';
import { AndroidTvError } from '../src/adapters/androidtv/session.js';
import { systemClock, systemTimers } from '../src/platform/clock.js';
import { startAndroidTvEmulator, type AndroidTvEmulator } from './support/androidtv-emulator.js';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function tv(options: { silentPairing?: boolean } = {}) {
  const e = await startAndroidTvEmulator(options);
  closers.push(() => e.close());
  return e;
}

let sharedIdentity: ClientIdentity | undefined;
const identity = () => (sharedIdentity ??= generateClientIdentity('hub test', systemClock));

async function failure(p: Promise<unknown>): Promise<AndroidTvError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AndroidTvError);
    return err as AndroidTvError;
  }
  throw new Error('expected a failure');
}

async function pair(e: AndroidTvEmulator, id = identity()) {
  const pairing = await AndroidTvPairing.start({ timers: systemTimers, host: e.host, port: e.pairingPort, identity: id, clientName: 'Hub', timeoutMs: 3000 });
  const code = e.shownCode();
  expect(code).toMatch(/^[0-9A-F]{6}$/);
  return { pairing, code: code! };
}

/** A code that fails the local check (its first byte is not the secret's). */
function wrongFirstByte(code: string): string {
  const first = (Number.parseInt(code.slice(0, 2), 16) + 1) % 256;
  return first.toString(16).padStart(2, '0').toUpperCase() + code.slice(2);
}

async function remote(e: AndroidTvEmulator, onState?: (s: AndroidTvState) => void, onClose?: (err: AndroidTvError) => void) {
  const r = new AndroidTvRemote({ timers: systemTimers, host: e.host, port: e.remotePort, identity: identity(), timeoutMs: 3000, ...(onState ? { onState } : {}), ...(onClose ? { onClose } : {}) });
  closers.push(() => r.close());
  return r;
}

/** Waits (bounded) until `check` holds. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never: ${what}`);
}

describe('Android TV Remote v2: pairing', () => {
  it('pairs with the code the TV shows, and the TV remembers the client certificate', async () => {
    const e = await tv();
    const { pairing, code } = await pair(e);
    const { serverCertificatePem } = await pairing.finish(code);
    expect(serverCertificatePem).toContain('BEGIN CERTIFICATE');
    expect(e.pairedClients).toEqual([fingerprintOf(identity().certificatePem)]);
  });

  it('a mistyped code is refused before it is sent, and the right one still works', async () => {
    const e = await tv();
    const { pairing, code } = await pair(e);
    expect((await failure(pairing.finish(wrongFirstByte(code)))).failure).toBe('wrong_code');
    expect((await failure(pairing.finish('XYZ'))).failure).toBe('wrong_code');
    await pairing.finish(code.toLowerCase());
    expect(e.pairedClients).toHaveLength(1);
  });

  it('an unreachable port is unreachable; a TV that never answers is a time-out within the bound', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect((await failure(AndroidTvPairing.start({ timers: systemTimers, host: '127.0.0.1', port, identity: identity(), clientName: 'Hub', timeoutMs: 2000 }))).failure).toBe('unreachable');

    const silent = await tv({ silentPairing: true });
    const started = Date.now();
    expect((await failure(AndroidTvPairing.start({ timers: systemTimers, host: silent.host, port: silent.pairingPort, identity: identity(), clientName: 'Hub', timeoutMs: 300 }))).failure).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1500);
  });
});

describe('Android TV Remote v2: remote channel', () => {
  it('with the paired identity: handshake, state, keys changing it, app links, pings', async () => {
    const e = await tv();
    const { pairing, code } = await pair(e);
    await pairing.finish(code);
    const states: AndroidTvState[] = [];
    const r = await remote(e, (s) => states.push(s));
    const first = await r.connect();
    expect(first.poweredOn).toBe(true);
    expect(r.connected).toBe(true);
    await until(() => r.state.volume?.level === 20 && r.state.currentApp === 'com.google.android.tvlauncher', 'initial volume and app');

    await r.sendKey('VOLUME_UP');
    await r.sendKey('VOLUME_UP');
    await until(() => r.state.volume?.level === 22, 'volume 22');
    await r.sendKey('VOLUME_MUTE');
    await until(() => r.state.volume?.muted === true, 'muted');
    await r.sendKey('POWER');
    await until(() => r.state.poweredOn === false, 'powered off');
    await r.launchAppLink('market://launch?id=com.netflix.ninja');
    await until(() => r.state.currentApp === 'com.netflix.ninja', 'app');
    expect(e.keys).toEqual([24, 24, 164, 26]);
    expect(e.appLinks).toEqual(['market://launch?id=com.netflix.ninja']);
    e.setVolume(40);
    await until(() => r.state.volume?.level === 40, 'volume pushed by the TV');
    expect(await e.ping()).toBe(1);
    expect(states.length).toBeGreaterThan(3);
  });

  it('an identity the TV never paired is rejected', async () => {
    const e = await tv();
    const r = new AndroidTvRemote({ timers: systemTimers, host: e.host, port: e.remotePort, identity: generateClientIdentity('stranger', systemClock), timeoutMs: 2000 });
    closers.push(() => r.close());
    expect((await failure(r.connect())).failure).toBe('rejected');
  });

  it('the TV going away is reported; garbage from it ends the session as a protocol failure', async () => {
    const e = await tv();
    const { pairing, code } = await pair(e);
    await pairing.finish(code);
    const ends: AndroidTvError[] = [];
    const r = await remote(e, undefined, (err) => ends.push(err));
    await r.connect();
    e.sendRaw(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
    await until(() => ends.length === 1, 'onClose');
    expect(ends[0]?.failure).toBe('protocol');
    expect(r.connected).toBe(false);
    await expect(r.sendKey('HOME')).rejects.toThrow(/not connected/);

    const r2 = await remote(e, undefined, (err) => ends.push(err));
    await r2.connect();
    await e.close();
    await until(() => ends.length === 2, 'onClose after the TV closed');
    expect(ends[1]?.failure).toBe('closed');
  });
});
