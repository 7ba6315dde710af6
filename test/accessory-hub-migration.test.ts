import { createCipheriv, createDecipheriv, createHash, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomUUID, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findHomebridge } from '../src/adapters/hap/homebridge-install.js';
import { freePort } from './support/net.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';

/** The hub records the version once Homebridge says it runs (a moment after the status turns `running`). */
const recordSays = (hubDir: string, version: string) =>
  eventually(() => (readFileSync(path.join(hubDir, '.homebridge-version'), 'utf8').trim() === version ? true : undefined), 5000, `the version record saying ${version}`);

/**
 * Homebridge 1.x to 2: a hub folder (DATA_DIR/accessory-hub) that Homebridge 1.11.4 last ran on,
 * with a phone paired to its bridge, is taken over in place by the Homebridge 2 the hub now
 * manages, and the home stays paired.
 *
 * The folder is built as 1.11.4 leaves it: config.json, and in persist/ HAP-NodeJS's
 * AccessoryInfo (the bridge's ed25519 identity, setup ID, configuration number and the paired
 * controller, in the exact format HAP-NodeJS's AccessoryInfo.load reads: public keys as hex in
 * `pairedClients`, permissions apart in `pairedClientsPermission`) and IdentifierCache (the ids
 * HomeKit knows the bridge's characteristics by). Started on it, the hub reports the migration
 * (`migratedFrom`: the recorded 1.11.4, or 1.11 for a folder from before the record), records the
 * new version, leaves the bridge's identity in config.json alone, and Homebridge 2 keeps the
 * pairing, the accessory keys, the setup ID and the ids. A restart on the migrated folder no
 * longer reports a migration.
 *
 * That the pairing holds is asked of Homebridge's HAP server itself, the way a phone asks it:
 * pair-verify (HAP §5.7) with the controller's long-term key. The accessory's answer (M2) is
 * signed with the bridge's long-term key, which must be the one the folder held; its verdict (M4)
 * is no error only for a controller it has on record with that public key. A control Homebridge
 * with the same bridge keys but no paired controller answers M4 with Error=Authentication, so the
 * check tells a paired bridge from an unpaired one.
 *
 * Pair-setup cannot tell them apart here: the hub runs Homebridge with `-I` (insecure access, so
 * it can read and write accessories over plain HAP HTTP), and HAP-NodeJS's HAPServer.handlePairSetup
 * answers Error=Unavailable to a paired accessory only `if (!this.allowInsecureRequest &&
 * this.accessoryInfo.paired())`: under `-I` a paired and an unpaired bridge both answer M1 with M2
 * (salt and SRP public key). The test asserts that too, as HAP-NodeJS really does it.
 */

type Json = Record<string, unknown>;

const HOMEBRIDGE = findHomebridge()!;
/** HAP-NodeJS as Homebridge 2 loads it: it writes its own version into AccessoryInfo as `lastFirmwareVersion`. */
const HAP_NODEJS_VERSION = (() => {
  const manifest = path.join(path.dirname(HOMEBRIDGE.bin), '..', 'package.json');
  const found = (createRequire(manifest).resolve.paths('@homebridge/hap-nodejs') ?? []).map((dir) => path.join(dir, '@homebridge', 'hap-nodejs', 'package.json')).find((file) => existsSync(file));
  return (JSON.parse(readFileSync(found!, 'utf8')) as { version: string }).version;
})();

const USERNAME = '0E:AA:BB:CC:DD:07';
const PERSIST_ID = USERNAME.replace(/:/g, '');
const PIN = '031-45-154';
const SETUP_ID = 'Q4TZ';
const BRIDGE_NAME = 'Hallway Homebridge';
/** HAP-NodeJS 0.13, the one Homebridge 1.11 runs. */
const HB1_HAP_NODEJS = '0.13.1';
const ENV = { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_POLL_MS: '60000' };

// --- keys -----------------------------------------------------------------------------------

/** An ed25519 key pair as raw bytes (tweetnacl's: a 64-byte secret key, seed then public key). */
function ed25519() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pk = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  return { privateKey, pk, sk: Buffer.concat([seed, pk]) };
}

const okp = (crv: 'Ed25519' | 'X25519', raw: Buffer): KeyObject => createPublicKey({ key: { kty: 'OKP', crv, x: raw.toString('base64url') }, format: 'jwk' });

/** HAP-NodeJS's uuid.generate: a v4-shaped UUID from the SHA-1 of the text. */
function hapUuid(text: string): string {
  const s = createHash('sha1').update(text).digest('hex');
  let i = -1;
  return 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, (c) => {
    i += 1;
    return c === 'y' ? ((parseInt(s[i]!, 16) & 0x3) | 0x8).toString(16) : s[i]!;
  });
}

// --- TLV8 -----------------------------------------------------------------------------------

function tlvEncode(...items: Array<[number, Buffer | number]>): Buffer {
  const parts: Buffer[] = [];
  for (const [type, raw] of items) {
    const value = typeof raw === 'number' ? Buffer.from([raw]) : raw;
    // Values over 255 bytes go in fragments of the same type.
    for (let at = 0; at === 0 || at < value.length; at += 255) {
      const chunk = value.subarray(at, at + 255);
      parts.push(Buffer.from([type, chunk.length]), chunk);
    }
  }
  return Buffer.concat(parts);
}

function tlvDecode(data: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  let last: number | undefined;
  for (let at = 0; at + 2 <= data.length; ) {
    const type = data[at]!;
    const length = data[at + 1]!;
    const value = data.subarray(at + 2, at + 2 + length);
    out.set(type, type === last ? Buffer.concat([out.get(type)!, value]) : Buffer.from(value));
    last = type;
    at += 2 + length;
  }
  return out;
}

const TLV = { METHOD: 0, IDENTIFIER: 1, SALT: 2, PUBLIC_KEY: 3, ENCRYPTED_DATA: 5, STATE: 6, ERROR: 7, SIGNATURE: 10 } as const;
const TLV_ERROR = { AUTHENTICATION: 0x02, UNAVAILABLE: 0x06 } as const;

// --- HAP over plain HTTP, on one connection ---------------------------------------------------

interface HapResponse {
  status: number;
  contentType: string | undefined;
  body: Buffer;
  /** Whether it came over the connection the session's first request opened (pair-verify's M1 and M3 must). */
  reusedSocket: boolean;
}

/** One TCP connection to a HAP server (pair-verify keeps its state on the connection). */
class HapSession {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  constructor(private readonly port: number) {}

  request(method: 'GET' | 'POST', p: string, body?: Buffer): Promise<HapResponse> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: this.port, method, path: p, agent: this.agent, timeout: 5000, headers: body ? { 'content-type': 'application/pairing+tlv8', 'content-length': body.length } : {} },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks), reusedSocket: req.reusedSocket }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`HAP ${method} ${p} timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

const padNonce = (text: string) => Buffer.concat([Buffer.alloc(4), Buffer.from(text)]);

/** ChaCha20-Poly1305 as HAP uses it: an 8-byte nonce text padded to 12, the 16-byte tag after the ciphertext. */
function seal(key: Buffer, nonce: string, plain: Buffer): Buffer {
  const cipher = createCipheriv('chacha20-poly1305', key, padNonce(nonce), { authTagLength: 16 });
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

function open(key: Buffer, nonce: string, sealed: Buffer): Buffer {
  const decipher = createDecipheriv('chacha20-poly1305', key, padNonce(nonce), { authTagLength: 16 });
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]);
}

interface Controller {
  id: string;
  privateKey: KeyObject;
  pk: Buffer;
}

interface PairVerify {
  /** M2's State. */
  m2State: number | undefined;
  /** The accessory's pairing id, from M2's encrypted part. */
  accessoryId: string;
  /** Whether M2's proof is signed with the accessory long-term key given. */
  accessorySignatureValid: boolean;
  /** M4's State and Error (undefined: none). */
  m4State: number | undefined;
  m4Error: number | undefined;
  sameConnection: boolean;
}

/**
 * Pair-verify, as a paired phone does it on every connection: M1 (a fresh X25519 key), M2 (the
 * accessory's key, and its signed identity encrypted with the session key), M3 (the controller's
 * id and signature, encrypted), M4 (the verdict: no error only for a controller on record).
 */
async function pairVerify(port: number, controller: Controller, accessoryLtpk: Buffer): Promise<PairVerify> {
  const session = new HapSession(port);
  try {
    const ephemeral = generateKeyPairSync('x25519');
    const ourPk = Buffer.from(ephemeral.publicKey.export({ format: 'jwk' }).x!, 'base64url');
    const m1 = await session.request('POST', '/pair-verify', tlvEncode([TLV.STATE, 1], [TLV.PUBLIC_KEY, ourPk]));
    expect(m1.status).toBe(200);
    const m2 = tlvDecode(m1.body);
    const theirPk = m2.get(TLV.PUBLIC_KEY)!;
    const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: okp('X25519', theirPk) });
    const key = Buffer.from(hkdfSync('sha512', shared, 'Pair-Verify-Encrypt-Salt', 'Pair-Verify-Encrypt-Info', 32));
    const inner = tlvDecode(open(key, 'PV-Msg02', m2.get(TLV.ENCRYPTED_DATA)!));
    const accessoryId = inner.get(TLV.IDENTIFIER)!;
    const accessorySignatureValid = verify(null, Buffer.concat([theirPk, accessoryId, ourPk]), okp('Ed25519', accessoryLtpk), inner.get(TLV.SIGNATURE)!);

    const id = Buffer.from(controller.id);
    const proof = sign(null, Buffer.concat([ourPk, id, theirPk]), controller.privateKey);
    const m3 = await session.request('POST', '/pair-verify', tlvEncode([TLV.STATE, 3], [TLV.ENCRYPTED_DATA, seal(key, 'PV-Msg03', tlvEncode([TLV.IDENTIFIER, id], [TLV.SIGNATURE, proof]))]));
    expect(m3.status).toBe(200);
    const m4 = tlvDecode(m3.body);
    return {
      m2State: m2.get(TLV.STATE)?.[0],
      accessoryId: accessoryId.toString(),
      accessorySignatureValid,
      m4State: m4.get(TLV.STATE)?.[0],
      m4Error: m4.get(TLV.ERROR)?.[0],
      sameConnection: m3.reusedSocket,
    };
  } finally {
    session.close();
  }
}

/** Pair-setup's M1 (Method=PairSetup, State=1), as the brief's bytes: 00 01 00 06 01 01. */
async function pairSetupM1(port: number): Promise<Map<number, Buffer> & { httpStatus?: number; contentType?: string }> {
  const session = new HapSession(port);
  try {
    const res = await session.request('POST', '/pair-setup', Buffer.from([0x00, 0x01, 0x00, 0x06, 0x01, 0x01]));
    return Object.assign(tlvDecode(res.body), { httpStatus: res.status, ...(res.contentType ? { contentType: res.contentType } : {}) });
  } finally {
    session.close();
  }
}

// --- the 1.11.4 folder ------------------------------------------------------------------------

const BRIDGE_UUID = hapUuid('HomeBridge');
const ACCESSORY_INFORMATION = '0000003E-0000-1000-8000-0026BB765291';
const NAME = '00000023-0000-1000-8000-0026BB765291';
const SERIAL_NUMBER = '00000030-0000-1000-8000-0026BB765291';
/** Ids 1.x handed out that a fresh Homebridge would not (it counts up from 2): HomeKit knows the characteristics by them. */
const CACHED_IIDS = { [NAME]: 41, [SERIAL_NUMBER]: 43 };

interface Folder {
  dataDir: string;
  hubDir: string;
  hapPort: number;
  bridgeLtpk: Buffer;
  controller: Controller;
  bridge: Json;
}

/**
 * DATA_DIR/accessory-hub as Homebridge 1.11.4 leaves it after a phone paired (`paired`), or before
 * any did; with the hub's version record (`record`) or, like the hubs before it, without.
 */
async function homebridge1Folder(options: { paired: boolean; record?: string }): Promise<Folder> {
  const dataDir = tempDataDir();
  const hubDir = path.join(dataDir, 'accessory-hub');
  mkdirSync(path.join(hubDir, 'persist'), { recursive: true });
  mkdirSync(path.join(hubDir, 'accessories'), { recursive: true });
  const hapPort = await freePort();
  const bridge = { name: BRIDGE_NAME, username: USERNAME, port: hapPort, pin: PIN, advertiser: 'ciao' };
  writeFileSync(path.join(hubDir, 'config.json'), `${JSON.stringify({ bridge, accessories: [], platforms: [] }, null, 4)}\n`);
  if (options.record) writeFileSync(path.join(hubDir, '.homebridge-version'), `${options.record}\n`);

  const accessory = ed25519();
  const phone = ed25519();
  const controller: Controller = { id: randomUUID().toUpperCase(), privateKey: phone.privateKey, pk: phone.pk };
  // AccessoryInfo.save() of HAP-NodeJS (0.x and 2.x alike).
  const info = {
    displayName: `${BRIDGE_NAME} ${createHash('sha512').update(USERNAME, 'utf8').digest('hex').slice(0, 4).toUpperCase()}`,
    category: 2,
    pincode: PIN,
    signSk: accessory.sk.toString('hex'),
    signPk: accessory.pk.toString('hex'),
    pairedClients: options.paired ? { [controller.id]: controller.pk.toString('hex') } : {},
    pairedClientsPermission: options.paired ? { [controller.id]: 1 } : {},
    configVersion: 3,
    configHash: createHash('sha1').update('the bridge as 1.11.4 served it').digest('hex'),
    setupID: SETUP_ID,
    lastFirmwareVersion: HB1_HAP_NODEJS,
  };
  writeFileSync(path.join(hubDir, 'persist', `AccessoryInfo.${PERSIST_ID}.json`), JSON.stringify(info));
  // IdentifierCache.save(): the bridge's ids, keyed by accessory UUID, service UUID and characteristic UUID.
  const cache: Record<string, number> = { [`${BRIDGE_UUID}|nextIID`]: 50 };
  for (const [characteristic, iid] of Object.entries(CACHED_IIDS)) cache[`${BRIDGE_UUID}|${ACCESSORY_INFORMATION}|${characteristic}`] = iid;
  writeFileSync(path.join(hubDir, 'persist', `IdentifierCache.${PERSIST_ID}.json`), JSON.stringify({ cache }));
  return { dataDir, hubDir, hapPort, bridgeLtpk: accessory.pk, controller, bridge };
}

// --- the hub ----------------------------------------------------------------------------------

interface Hub {
  server: TestServer;
  token: string;
  status(): Promise<Json>;
}

async function startHub(dataDir: string): Promise<Hub> {
  const server = await startServer({ dataDir, env: ENV, timers: undefined });
  const token = await server.login();
  const status = async () => (await (await server.request('GET', '/v1/os/accessory-hub/status', { token })).json()) as Json;
  await eventually(async () => {
    const s = await status();
    if (s.state === 'failed') throw new Error(`Homebridge failed: ${String(s.lastError)}\n${(s.recentOutput as string[]).join('\n')}`);
    return s.state === 'running';
  }, 30_000, 'Homebridge running');
  return { server, token, status };
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Json;
const accessoryInfo = (f: Folder) => readJson(path.join(f.hubDir, 'persist', `AccessoryInfo.${PERSIST_ID}.json`));

/** The bridge's own accessory (aid 1) as its HAP server serves it (plain HTTP under `-I`). */
async function bridgeCharacteristicIids(port: number): Promise<Record<string, number>> {
  const session = new HapSession(port);
  try {
    const res = await session.request('GET', '/accessories');
    expect(res.status).toBe(200);
    const { accessories } = JSON.parse(res.body.toString()) as { accessories: Array<{ aid: number; services: Array<{ type: string; iid: number; characteristics: Array<{ type: string; iid: number }> }> }> };
    const info = accessories.find((a) => a.aid === 1)!.services.find((s) => s.iid === 1)!;
    return Object.fromEntries(info.characteristics.map((c) => [c.type, c.iid]));
  } finally {
    session.close();
  }
}

// --- the tests --------------------------------------------------------------------------------

describe('accessory hub: a Homebridge 1.11.4 folder (version recorded), paired, taken over by Homebridge 2', () => {
  let folder: Folder;
  let hub: Hub;
  let before: Json;

  beforeAll(async () => {
    folder = await homebridge1Folder({ paired: true, record: '1.11.4' });
    before = accessoryInfo(folder);
    hub = await startHub(folder.dataDir);
  }, 60_000);
  afterAll(async () => {
    await hub?.server.close();
    if (folder) rmSync(folder.dataDir, { recursive: true, force: true });
  });

  it('runs Homebridge 2 on the folder and reports the migration from 1.11.4; the record now says the new version', async () => {
    expect(HOMEBRIDGE.version).toMatch(/^2\./);
    const s = await hub.status();
    expect(s).toMatchObject({ state: 'running', version: HOMEBRIDGE.version, migratedFrom: '1.11.4', bridge: { name: BRIDGE_NAME, port: folder.hapPort, pin: PIN } });
    await recordSays(folder.hubDir, HOMEBRIDGE.version);
  });

  it("leaves the bridge's identity in config.json as 1.11.4 had it", () => {
    const { bridge } = readJson(path.join(folder.hubDir, 'config.json')) as { bridge: Json };
    expect(bridge).toMatchObject({ name: BRIDGE_NAME, username: USERNAME, port: folder.hapPort, pin: PIN, advertiser: 'ciao' });
  });

  it("keeps HAP-NodeJS's accessory info: the paired controller and its key, the bridge's keys and setup ID, re-saved by Homebridge 2's HAP-NodeJS", async () => {
    const after = accessoryInfo(folder);
    // Re-saved, not just left alone: Homebridge 2's HAP-NodeJS loaded it and wrote its own version in.
    expect(after.lastFirmwareVersion).toBe(HAP_NODEJS_VERSION);
    expect(HAP_NODEJS_VERSION).not.toBe(HB1_HAP_NODEJS);
    expect(after).toMatchObject({
      pairedClients: { [folder.controller.id]: folder.controller.pk.toString('hex') },
      pairedClientsPermission: { [folder.controller.id]: 1 },
      signPk: before.signPk,
      signSk: before.signSk,
      setupID: SETUP_ID,
      pincode: PIN,
    });
    expect(Object.keys(after.pairedClients as Json)).toEqual([folder.controller.id]);
    // The configuration number only grows (HomeKit re-reads the accessories when it does).
    expect(after.configVersion as number).toBeGreaterThanOrEqual(before.configVersion as number);
    // The setup code's payload ends with the setup ID it loaded.
    expect(((await hub.status()).bridge as Json).setupUri).toMatch(new RegExp(`^X-HM://[0-9A-Z]+${SETUP_ID}$`));
  });

  it("keeps the ids HomeKit knows the bridge's characteristics by (persist/IdentifierCache)", async () => {
    const iids = await bridgeCharacteristicIids(folder.hapPort);
    expect(iids['23']).toBe(CACHED_IIDS[NAME]);
    expect(iids['30']).toBe(CACHED_IIDS[SERIAL_NUMBER]);
    const { cache } = readJson(path.join(folder.hubDir, 'persist', `IdentifierCache.${PERSIST_ID}.json`)) as { cache: Record<string, number> };
    expect(cache[`${BRIDGE_UUID}|${ACCESSORY_INFORMATION}|${NAME}`]).toBe(CACHED_IIDS[NAME]);
  });

  it("its HAP server verifies the phone paired under 1.11.4 (pair-verify M4 without error), signing with the bridge's old key", async () => {
    const result = await pairVerify(folder.hapPort, folder.controller, folder.bridgeLtpk);
    expect(result).toEqual({ m2State: 2, accessoryId: USERNAME, accessorySignatureValid: true, m4State: 4, m4Error: undefined, sameConnection: true });
  });

  it('answers pair-setup M1 with M2 (salt, SRP key), not Unavailable: under -I HAP-NodeJS does not refuse pair-setup to a paired bridge', async () => {
    const m2 = await pairSetupM1(folder.hapPort);
    expect(m2.httpStatus).toBe(200);
    expect(m2.contentType).toBe('application/pairing+tlv8');
    expect(m2.get(TLV.STATE)?.[0]).toBe(2);
    expect(m2.get(TLV.ERROR)).toBeUndefined();
    expect(m2.get(TLV.SALT)?.length).toBe(16);
    expect(m2.get(TLV.PUBLIC_KEY)?.length).toBe(384);
  });

  it('restarted on the migrated folder, reports no migration and the pairing still holds', async () => {
    await hub.server.close();
    hub = await startHub(folder.dataDir);
    const s = await hub.status();
    expect(s).toMatchObject({ state: 'running', version: HOMEBRIDGE.version });
    expect(s).not.toHaveProperty('migratedFrom');
    await recordSays(folder.hubDir, HOMEBRIDGE.version);
    expect(await pairVerify(folder.hapPort, folder.controller, folder.bridgeLtpk)).toMatchObject({ accessorySignatureValid: true, m4State: 4, m4Error: undefined });
  }, 60_000);
});

describe('accessory hub: a paired Homebridge 1.11 folder from before the version record', () => {
  let folder: Folder;
  let hub: Hub;

  beforeAll(async () => {
    folder = await homebridge1Folder({ paired: true });
    hub = await startHub(folder.dataDir);
  }, 60_000);
  afterAll(async () => {
    await hub?.server.close();
    if (folder) rmSync(folder.dataDir, { recursive: true, force: true });
  });

  it('is taken as 1.11 (persist/ and no record): migratedFrom 1.11, and the record is written', async () => {
    expect(await hub.status()).toMatchObject({ state: 'running', version: HOMEBRIDGE.version, migratedFrom: '1.11' });
    await recordSays(folder.hubDir, HOMEBRIDGE.version);
    expect((readJson(path.join(folder.hubDir, 'config.json')) as { bridge: Json }).bridge).toMatchObject({ username: USERNAME, port: folder.hapPort, pin: PIN });
  });

  it('stays paired', async () => {
    expect(accessoryInfo(folder).pairedClients).toEqual({ [folder.controller.id]: folder.controller.pk.toString('hex') });
    expect(await pairVerify(folder.hapPort, folder.controller, folder.bridgeLtpk)).toMatchObject({ accessorySignatureValid: true, m4State: 4, m4Error: undefined });
  });
});

describe('accessory hub: the control, the same folder with no phone paired', () => {
  let folder: Folder;
  let hub: Hub;

  beforeAll(async () => {
    folder = await homebridge1Folder({ paired: false, record: '1.11.4' });
    hub = await startHub(folder.dataDir);
  }, 60_000);
  afterAll(async () => {
    await hub?.server.close();
    if (folder) rmSync(folder.dataDir, { recursive: true, force: true });
  });

  it('refuses the controller at pair-verify M4 (Error=Authentication): the pairing check tells paired from unpaired', async () => {
    expect(accessoryInfo(folder).pairedClients).toEqual({});
    const result = await pairVerify(folder.hapPort, folder.controller, folder.bridgeLtpk);
    // The bridge is the same (its key signs M2); only the controller is unknown to it.
    expect(result).toEqual({ m2State: 2, accessoryId: USERNAME, accessorySignatureValid: true, m4State: 4, m4Error: TLV_ERROR.AUTHENTICATION, sameConnection: true });
  });

  it('answers pair-setup M1 with M2 (salt, SRP key), never Unavailable, as the paired one does under -I', async () => {
    const m2 = await pairSetupM1(folder.hapPort);
    expect(m2.get(TLV.STATE)?.[0]).toBe(2);
    expect(m2.get(TLV.ERROR)?.[0]).not.toBe(TLV_ERROR.UNAVAILABLE);
    expect(m2.get(TLV.SALT)?.length).toBe(16);
    expect(m2.get(TLV.PUBLIC_KEY)?.length).toBe(384);
  });
});
