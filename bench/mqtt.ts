/**
 * `npm run bench -- mqtt` (cases `discovery`, `state-ingest`, `command`): the MQTT integration
 * (issue 28) against a real broker, the hub started as `npm start` runs it (`node dist/main.js`,
 * DATA_DIR on disk, default LOG_LEVEL, an admin token) with `MQTT_URL=mqtt://127.0.0.1:<port>`.
 *
 * The broker is Debian's mosquitto when installed (a temp config on a free loopback port, no
 * persistence, its default queue limits and `set_tcp_nodelay false`), else aedes in a child
 * process of its own (this file started with `--bench-mqtt-role=aedes`), so that it never shares
 * an event loop with anything measured; `BENCH_MQTT_BROKER=mosquitto|aedes` picks one, and
 * `BENCH_MQTT_NODELAY=1` (investigation only) gives mosquitto `set_tcp_nodelay true`. The output
 * names the broker used.
 *
 * The MQTT clients run in two child processes (this file started with `--bench-mqtt-role=peer`,
 * driven over IPC like the agents of bench/agents/): the publisher (the devices' side: discovery
 * configs, availability, state floods) and the peer (the reference subscriber, the simulated
 * Tasmota switches and the command loop with its HTTP client). Their CPU is their own.
 *
 * The home: BENCH_MQTT_ENTITIES (1,000) retained discovery configs as the firmware writes them:
 * 40 % Zigbee2MQTT JSON-schema colour lights, 30 % Zigbee2MQTT climate sensors read through
 * `{{ value_json.temperature }}`, 20 % Zigbee2MQTT door contacts (binary_sensor), 10 % Tasmota
 * switches in the abbreviated legacy form (`stat_t`, `cmd_t`, `val_tpl`, `uniq_id`, `dev`), each
 * with its availability (z2m: bridge state + device availability, mode `all`; Tasmota: LWT)
 * retained online. Unique ids are distinct.
 *
 * - `discovery`: (live) a hub with an empty broker, then the configs published: time from the
 *   first (and from the last acknowledged) publication until `GET /v1/os/devices` lists all of
 *   them; (retained) a fresh hub started against the broker holding them: time from the hub's
 *   MQTT connection (its `MQTT: connected` log line) until the same. Then `GET /v1/os/devices`
 *   with those devices: the first GET after discovery, and sequential GETs. Target (absolute,
 *   the issue's): < 2,000 ms, both ways.
 * - `state-ingest`: BENCH_MQTT_MESSAGES (50,000) QoS 0 state messages, round-robin over the
 *   sensors' state topics, each with a counter as its temperature, published as fast as the
 *   broker takes them; time from the first publication until the hub shows, for every sensor,
 *   the last value published (GET /v1/os/devices/:id of the sensor sent the very last message,
 *   then the listing for all). Reference, same run, the same flood on a mirror of the topics: a
 *   plain MQTT.js subscriber counting them (the broker's own delivery rate). Target (absolute):
 *   ≥ 5,000 messages/s; the ratio is printed for information.
 * - `command`: BENCH_MQTT_COMMANDS (500) sequential commands a side after 100 discarded, in
 *   alternating blocks of 50, round-robin over the Tasmota switches, on/off alternating per
 *   switch. Reference: a plain MQTT.js client publishing `ON`/`OFF` with QoS 1 to the switch's
 *   `cmnd/<topic>/POWER`; hub: `POST /v1/os/devices/:id/command {"command":"turn_on"}`. Both
 *   timed until the simulated switch (its own MQTT.js client, in the same process as the sender,
 *   one clock) receives the publication; the switch answers as Tasmota does (tele STATE, stat
 *   RESULT and POWER). Target: hub p50 − reference p50 < 2 ms. The HTTP answer time (the hub
 *   answers after the broker's PUBACK) and the reference's PUBACK time are printed beside it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import mqtt, { type MqttClient } from 'mqtt';
import { assertLoopback, serveAgent } from './agents/runtime.js';
import { startAgent, type AgentHandle } from './lib/agent.js';
import { selectCases, type Benchmark, type BenchmarkContext, type BenchmarkOutcome } from './lib/benchmark.js';
import { makeTempDir, stopOnce, track, type Resource } from './lib/cleanup.js';
import { absoluteResult, targetLine, type Round, type TargetResult } from './lib/compare.js';
import { reportIfExited } from './lib/hub-setup.js';
import { LOOPBACK, freePort } from './lib/net.js';
import { baseEnv, cpuSecondsOf, memoryOf, spawnLogged, type ChildHandle } from './lib/proc.js';
import { format, median, table } from './lib/report.js';
import { REPO_ROOT, startService, type ServiceHandle, type Session } from './lib/service.js';
import { UsageError, integerSetting } from './lib/settings.js';
import { MiB, measureWindow, otherNote, undisturbed, type Participant, type WindowFigures } from './lib/window.js';

const OS_API = '/v1/os';
const HUB = 'hub';
const REFERENCE = 'reference';
const ROLE_FLAG = '--bench-mqtt-role=';

/** Issue 28's targets; all three are absolute (the reference figures are printed beside them). */
export const MQTT_TARGETS = {
  discoveryMs: 2000,
  discoveryEntities: 1000,
  ingestPerSecond: 5000,
  commandOverheadMs: 2,
} as const;

const CASES = [
  { name: 'discovery', what: '1,000 discovered entities listed by GET /v1/os/devices, published live and retained at start' },
  { name: 'state-ingest', what: 'QoS 0 state messages absorbed per second, the last value of every sensor visible, against a plain subscriber' },
  { name: 'command', what: 'a command through the broker to a simulated Tasmota switch, against a plain MQTT.js publisher' },
];

/** Clock shared by the processes of a run: epoch milliseconds with sub-millisecond resolution. */
const epochMs = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------
// Settings (BENCH_MQTT_*; BENCH_ROUNDS, BENCH_LOG_LEVEL, BENCH_CPU_PROF and the quiet settings as everywhere)

interface MqttSettings {
  entities: number;
  messages: number;
  commands: number;
  warmupCommands: number;
  broker: 'mosquitto' | 'aedes' | undefined;
  /** BENCH_MQTT_NODELAY=1 (investigation only): mosquitto with `set_tcp_nodelay true`, not its default. */
  noDelay: boolean;
}


function mqttSettings(): MqttSettings {
  const broker = process.env.BENCH_MQTT_BROKER?.trim() || undefined;
  if (broker !== undefined && broker !== 'mosquitto' && broker !== 'aedes') throw new UsageError(`BENCH_MQTT_BROKER must be mosquitto or aedes, got "${broker}"`);
  return {
    entities: integerSetting('BENCH_MQTT_ENTITIES', MQTT_TARGETS.discoveryEntities, 10, 20_000),
    messages: integerSetting('BENCH_MQTT_MESSAGES', 50_000, 100, 1_000_000),
    commands: integerSetting('BENCH_MQTT_COMMANDS', 500, 10, 20_000),
    warmupCommands: 100,
    broker,
    noDelay: process.env.BENCH_MQTT_NODELAY === '1',
  };
}

// ---------------------------------------------------------------------------------------------
// The home: discovery configs as Zigbee2MQTT and Tasmota write them

interface MqttMessage {
  topic: string;
  payload: string;
  retain?: boolean;
}

interface Fleet {
  counts: { lights: number; sensors: number; binarySensors: number; switches: number };
  /** Retained discovery configs (published with QoS 1, as the firmware does). */
  configs: MqttMessage[];
  /** Empty retained payloads on the same topics: removes the devices. */
  clear: MqttMessage[];
  /** Retained availability: every device online. */
  availability: MqttMessage[];
  uniqueIds: string[];
  sensors: Array<{ uniqueId: string; topic: string; referenceTopic: string }>;
  switches: Array<{ uniqueId: string; topic: string }>;
}

const Z2M_BASE = 'zigbee2mqtt';
const Z2M_BRIDGE_STATE = `${Z2M_BASE}/bridge/state`;
const Z2M_ORIGIN = { name: 'Zigbee2MQTT', sw: '2.12.1', url: 'https://www.zigbee2mqtt.io' };
const Z2M_COORDINATOR = '0x00124b0024c2b5a1';
const HUE_EFFECTS = ['blink', 'breathe', 'okay', 'channel_change', 'candle', 'fireplace', 'colorloop', 'sunrise', 'sparkle', 'finish_effect', 'stop_effect', 'stop_hue_effect'];
/** Mirror of the sensors' state topics for the reference subscriber: the hub subscribes to none of them. */
const REFERENCE_BASE = 'bench-reference';

/** z2m's stable stringify: keys sorted at every level. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

function makeFleet(entities: number, prefix = 'homeassistant'): Fleet {
  const lights = Math.round(entities * 0.4);
  const sensors = Math.round(entities * 0.3);
  const binarySensors = Math.round(entities * 0.2);
  const switches = entities - lights - sensors - binarySensors;
  const configs: MqttMessage[] = [];
  const availability: MqttMessage[] = [{ topic: Z2M_BRIDGE_STATE, payload: '{"state":"online"}', retain: true }];
  const uniqueIds: string[] = [];
  const fleet: Fleet = { counts: { lights, sensors, binarySensors, switches }, configs, clear: [], availability, uniqueIds, sensors: [], switches: [] };

  const z2m = (component: string, objectId: string, ieee: string, friendlyName: string, model: Record<string, string>, payload: Record<string, unknown>) => {
    const base = `${Z2M_BASE}/${friendlyName}`;
    const uniqueId = `${ieee}_${objectId}_${Z2M_BASE}`;
    const p = {
      ...payload,
      availability: [
        { topic: Z2M_BRIDGE_STATE, value_template: '{{ value_json.state }}' },
        { topic: `${base}/availability`, value_template: '{{ value_json.state }}' },
      ],
      availability_mode: 'all',
      device: { identifiers: [`zigbee2mqtt_${ieee}`], name: friendlyName, via_device: `zigbee2mqtt_bridge_${Z2M_COORDINATOR}`, ...model },
      default_entity_id: `${component}.${friendlyName}${objectId === component ? '' : `_${objectId}`}`,
      object_id: `${friendlyName}${objectId === component ? '' : `_${objectId}`}`,
      origin: Z2M_ORIGIN,
      state_topic: base,
      unique_id: uniqueId,
    };
    configs.push({ topic: `${prefix}/${component}/${ieee}/${objectId}/config`, payload: sortedJson(p), retain: true });
    availability.push({ topic: `${base}/availability`, payload: '{"state":"online"}', retain: true });
    uniqueIds.push(uniqueId);
    return { uniqueId, base };
  };

  for (let i = 0; i < lights; i++) {
    z2m('light', 'light', `0x00178801${hex(i, 8)}`, `light_${i}`, { manufacturer: 'Philips', model: 'Hue white and color ambiance E26/E27/E14', model_id: '9290012573A', sw_version: '1.116.3', hw_version: '1' }, {
      brightness: true,
      brightness_scale: 254,
      command_topic: `${Z2M_BASE}/light_${i}/set`,
      effect: true,
      effect_list: HUE_EFFECTS,
      max_mireds: 500,
      min_mireds: 153,
      name: null,
      schema: 'json',
      supported_color_modes: ['xy', 'color_temp'],
    });
  }
  for (let i = 0; i < sensors; i++) {
    const { uniqueId, base } = z2m('sensor', 'temperature', `0x00158d00${hex(i, 8)}`, `climate_${i}`, { manufacturer: 'Aqara', model: 'Temperature, humidity and pressure sensor', model_id: 'WSDCGQ11LM', sw_version: '3000-0001' }, {
      device_class: 'temperature',
      enabled_by_default: true,
      state_class: 'measurement',
      unit_of_measurement: '°C',
      value_template: '{{ value_json.temperature }}',
    });
    fleet.sensors.push({ uniqueId, topic: base, referenceTopic: `${REFERENCE_BASE}/climate_${i}` });
  }
  for (let i = 0; i < binarySensors; i++) {
    z2m('binary_sensor', 'contact', `0x00158d01${hex(i, 8)}`, `door_${i}`, { manufacturer: 'Aqara', model: 'Door and window sensor', model_id: 'MCCGQ11LM', sw_version: '3000-0001' }, {
      device_class: 'door',
      payload_off: true,
      payload_on: false,
      value_template: '{{ value_json.contact }}',
    });
  }
  for (let i = 0; i < switches; i++) {
    // Tasmota's legacy discovery (SetOption19 1): abbreviated keys, full topics, dev {ids}.
    const chip = hex(0x8d0000 + i, 6).toUpperCase();
    const topic = `tasmota_${chip}`;
    const uniqueId = `${chip}_RL_1`;
    configs.push({
      topic: `${prefix}/switch/${uniqueId}/config`,
      payload:
        `{"name":"Tasmota ${i}","stat_t":"tele/${topic}/STATE","avty_t":"tele/${topic}/LWT","pl_avail":"Online","pl_not_avail":"Offline",` +
        `"cmd_t":"cmnd/${topic}/POWER","pl_off":"OFF","pl_on":"ON","val_tpl":"{{value_json.POWER}}","uniq_id":"${uniqueId}","dev":{"ids":["${chip}"]}}`,
      retain: true,
    });
    availability.push({ topic: `tele/${topic}/LWT`, payload: 'Online', retain: true });
    uniqueIds.push(uniqueId);
    fleet.switches.push({ uniqueId, topic });
  }
  fleet.clear = configs.map((c) => ({ topic: c.topic, payload: '', retain: true }));
  return fleet;
}

/** What an Aqara climate sensor publishes through Zigbee2MQTT, the temperature carrying a counter. */
const climatePayload = (value: number) => `{"battery":97,"humidity":52.16,"linkquality":134,"power_outage_count":3,"pressure":1003.4,"temperature":${value},"voltage":3005}`;

// ---------------------------------------------------------------------------------------------
// Child processes: the broker and the MQTT peers (this file, in another role)

interface BrokerHandle extends Resource {
  kind: 'mosquitto' | 'aedes';
  version: string;
  url: string;
  pid: number;
  child: ChildHandle;
  /** Lines of the broker's log saying it dropped messages for a slow client (mosquitto). */
  dropNotices(): number;
  stop(): Promise<void>;
}

function mosquittoBinary(): string | null {
  for (const candidate of ['/usr/sbin/mosquitto', ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean).map((d) => path.join(d, 'mosquitto'))]) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, LOOPBACK);
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function startBroker(kind: 'mosquitto' | 'aedes', noDelay: boolean): Promise<BrokerHandle> {
  const tmp = makeTempDir('hcs-bench-mqtt-broker');
  const port = await freePort();
  const logPath = path.join(tmp.path, 'broker.log');
  let child: ChildHandle;
  let version: string;
  if (kind === 'mosquitto') {
    const binary = mosquittoBinary();
    if (!binary) throw new UsageError('BENCH_MQTT_BROKER=mosquitto, but mosquitto is not installed');
    const help = spawnSync(binary, ['-h'], { encoding: 'utf8', timeout: 5000 });
    version = /mosquitto version (\S+)/.exec(`${help.stdout}${help.stderr}`)?.[1] ?? 'unknown version';
    const conf = path.join(tmp.path, 'mosquitto.conf');
    // As test/support/mosquitto.ts: anonymous on loopback, no persistence; queue limits left at
    // their defaults (max_queued_messages 1000), as a household's mosquitto has them.
    const lines = [`listener ${port} ${LOOPBACK}`, 'persistence false', 'allow_anonymous true', 'log_dest stderr', `user ${os.userInfo().username}`, ...(noDelay ? ['set_tcp_nodelay true'] : [])];
    fs.writeFileSync(conf, `${lines.join('\n')}\n`);
    child = spawnLogged('mosquitto', binary, ['-c', conf], { cwd: tmp.path, env: baseEnv(), logPath });
  } else {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', 'aedes', 'package.json'), 'utf8')) as { version?: string };
    version = pkg.version ?? 'unknown version';
    child = spawnLogged('aedes', process.execPath, ['--import', 'tsx', path.join('bench', 'mqtt.ts'), `${ROLE_FLAG}aedes`], {
      cwd: REPO_ROOT,
      env: { ...baseEnv(), NODE_ENV: 'production', PORT: String(port) },
      logPath,
    });
  }
  const stop = stopOnce(() => handle, child, tmp, 3000);
  const handle: BrokerHandle = {
    label: `${kind} broker (pid ${child.pid}) on ${port}`,
    kind,
    version,
    url: `mqtt://${LOOPBACK}:${port}`,
    pid: child.pid,
    child,
    dropNotices() {
      try {
        return fs.readFileSync(logPath, 'utf8').split('\n').filter((l) => /dropped/i.test(l)).length;
      } catch {
        return 0;
      }
    },
    stop,
    dispose: stop,
    disposeSync() {
      child.disposeSync();
      tmp.disposeSync();
    },
  };
  track(handle);
  const deadline = Date.now() + 15_000;
  for (let i = 0; i < 300 && !(await canConnect(port)); i++) {
    if (!child.running() || Date.now() > deadline) {
      await stop();
      throw new Error(`${kind} did not listen on ${port} within 15 s; log tail:\n${child.logTail()}`);
    }
    await sleep(50);
  }
  return handle;
}

/** A peer: this file in its `peer` role, driven over IPC with bench/agents/runtime.ts's protocol. */
async function startPeer(name: string): Promise<AgentHandle> {
  return startAgent(name, 'mqtt-peer', { entry: { file: path.join('bench', 'mqtt.ts'), args: [`${ROLE_FLAG}peer`] } });
}

// ---------------------------------------------------------------------------------------------
// The peer role (runs in its own process)

interface Stats {
  count: number;
  mean: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!);
  return { count: sorted.length, mean: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null, p50: at(50), p90: at(90), p99: at(99), max: sorted.at(-1) ?? null };
}

interface FloodResult {
  sent: number;
  firstEpoch: number;
  lastEpoch: number;
}

interface ArmedResult {
  expected: number;
  received: number;
  firstEpoch: number | null;
  lastEpoch: number | null;
  /** Topics whose last payload was not the last value sent to them. */
  wrongLast: number;
}

interface CommandSide {
  receiveMs: Stats;
  answerMs: Stats;
  failed: number;
  firstError?: string;
}

interface CommandRun {
  order: string[];
  sides: Record<string, CommandSide>;
  /** CPU over the run (set by the harness). */
  window?: WindowFigures;
}

interface CommandParams {
  url: string;
  baseUrl: string;
  token: string;
  targets: Array<{ hubId: string; topic: string }>;
  perSide: number;
  warmup: number;
  block: number;
  first: string;
}

function connectClient(url: string, clientId: string): Promise<MqttClient> {
  assertLoopback(url);
  return mqtt.connectAsync(url, { clientId, clean: true, reconnectPeriod: 0, connectTimeout: 5000, protocolVersion: 4 });
}

function servePeer(): void {
  const clients: MqttClient[] = [];
  let publisher: MqttClient | undefined;
  let subscriber: MqttClient | undefined;
  let armed: { expected: number; received: number; firstEpoch: number | null; lastEpoch: number | null; last: Map<string, string> } | undefined;
  let device: MqttClient | undefined;
  let commander: MqttClient | undefined;
  let waiter: { topic: string; payload: string; resolve(t: number): void } | undefined;
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  const connect = async ({ url, clientId }: { url: string; clientId: string }) => {
    publisher = await connectClient(url, clientId);
    clients.push(publisher);
    return { connected: true };
  };

  /** Publishes with QoS 1 (all in flight at once), as a bridge announcing its devices does. */
  const publish = async ({ messages }: { messages: MqttMessage[] }) => {
    if (!publisher) throw new Error('not connected');
    const client = publisher;
    const firstEpoch = epochMs();
    await Promise.all(messages.map((m) => client.publishAsync(m.topic, m.payload, { qos: 1, retain: m.retain ?? false })));
    return { published: messages.length, firstEpoch, lastEpoch: epochMs() };
  };

  /** QoS 0 messages round-robin over `topics`, the k-th carrying `base + k`, as fast as the socket takes them. */
  const flood = async ({ topics, count, base }: { topics: string[]; count: number; base: number }): Promise<FloodResult> => {
    if (!publisher) throw new Error('not connected');
    const client = publisher;
    const batch = 500;
    const firstEpoch = epochMs();
    for (let k = 0; k < count; ) {
      const end = Math.min(count, k + batch);
      for (; k < end - 1; k++) client.publish(topics[k % topics.length]!, climatePayload(base + k), { qos: 0 });
      // The last of a batch waits for the socket to drain (MQTT.js calls back on 'drain' when the write was refused).
      await new Promise<void>((resolve, reject) => client.publish(topics[k % topics.length]!, climatePayload(base + k), { qos: 0 }, (err) => (err ? reject(err) : resolve())));
      k++;
    }
    return { sent: count, firstEpoch, lastEpoch: epochMs() };
  };

  /** The reference subscriber: subscribes to `topics` (once) and counts the next `count` messages. */
  const arm = async ({ url, topics, count }: { url: string; topics: string[]; count: number }) => {
    if (!subscriber) {
      const client = await connectClient(url, 'bench-reference-subscriber');
      clients.push(client);
      client.on('message', (topic, payload) => {
        const a = armed;
        if (!a) return;
        const now = epochMs();
        a.firstEpoch ??= now;
        a.lastEpoch = now;
        a.received++;
        a.last.set(topic, payload.toString());
      });
      await client.subscribeAsync(topics, { qos: 0 });
      subscriber = client;
    }
    armed = { expected: count, received: 0, firstEpoch: null, lastEpoch: null, last: new Map() };
    return { armed: true };
  };

  /** Until the armed count arrived, or nothing came for `idleMs` (what is missing was dropped). */
  const collect = async ({ idleMs, timeoutMs, lastValues }: { idleMs: number; timeoutMs: number; lastValues: Record<string, number> }): Promise<ArmedResult> => {
    const a = armed;
    if (!a) throw new Error('not armed');
    const deadline = Date.now() + timeoutMs;
    while (a.received < a.expected && Date.now() < deadline) {
      if (a.lastEpoch !== null && epochMs() - a.lastEpoch > idleMs) break;
      await sleep(10);
    }
    armed = undefined;
    let wrongLast = 0;
    for (const [topic, value] of Object.entries(lastValues)) {
      const payload = a.last.get(topic);
      if (payload === undefined || (JSON.parse(payload) as { temperature?: unknown }).temperature !== value) wrongLast++;
    }
    return { expected: a.expected, received: a.received, firstEpoch: a.firstEpoch, lastEpoch: a.lastEpoch, wrongLast };
  };

  const post = (url: string, token: string, body: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent: httpAgent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, timeout: 10_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('HTTP timeout')));
      req.on('error', reject);
      req.end(body);
    });

  /** The simulated Tasmota switches (one client subscribed to every `cmnd/+/POWER`) and the reference's publisher. */
  const ensureCommandClients = async (url: string) => {
    if (!device) {
      const client = await connectClient(url, 'bench-tasmota-switches');
      clients.push(client);
      client.on('message', (topic, payload) => {
        const t = performance.now();
        const text = payload.toString();
        const w = waiter;
        if (w && w.topic === topic && w.payload === text) {
          waiter = undefined;
          w.resolve(t);
        }
        // ExecuteCommandPower with SetOption59 (forced on by discovery): tele STATE, then stat RESULT and POWER.
        const name = topic.split('/')[1]!;
        const power = text.toUpperCase() === 'ON' ? 'ON' : 'OFF';
        client.publish(`tele/${name}/STATE`, `{"Time":"2026-11-27T07:00:00","Uptime":"0T01:02:03","UptimeSec":3723,"Heap":25,"SleepMode":"Dynamic","Sleep":50,"LoadAvg":19,"MqttCount":1,"POWER":"${power}","Wifi":{"AP":1,"SSId":"home","Channel":6,"RSSI":76,"Signal":-62}}`, { qos: 0 });
        client.publish(`stat/${name}/RESULT`, `{"POWER":"${power}"}`, { qos: 0 });
        client.publish(`stat/${name}/POWER`, power, { qos: 0 });
      });
      await client.subscribeAsync('cmnd/+/POWER', { qos: 1 });
      device = client;
    }
    if (!commander) {
      commander = await connectClient(url, 'bench-reference-commander');
      clients.push(commander);
    }
    return { device, commander };
  };

  const commands = async (p: CommandParams): Promise<CommandRun> => {
    assertLoopback(p.baseUrl);
    const { commander: pub } = await ensureCommandClients(p.url);
    const power = new Map<string, string>();
    const samples: Record<string, { receive: number[]; answer: number[]; failed: number; firstError?: string }> = {
      [REFERENCE]: { receive: [], answer: [], failed: 0 },
      [HUB]: { receive: [], answer: [], failed: 0 },
    };
    let visit = 0;
    const one = async (side: string, record: boolean) => {
      const target = p.targets[visit++ % p.targets.length]!;
      const next = power.get(target.topic) === 'ON' ? 'OFF' : 'ON';
      const topic = `cmnd/${target.topic}/POWER`;
      let timer: NodeJS.Timeout | undefined;
      const received = new Promise<number>((resolve, reject) => {
        waiter = { topic, payload: next, resolve };
        timer = setTimeout(() => reject(new Error(`the switch did not receive ${next} on ${topic} within 5 s`)), 5000);
      });
      const t0 = performance.now();
      const answered =
        side === REFERENCE
          ? new Promise<number>((resolve, reject) => pub.publish(topic, next, { qos: 1 }, (err) => (err ? reject(err) : resolve(performance.now()))))
          : post(`${p.baseUrl}${OS_API}/devices/${encodeURIComponent(target.hubId)}/command`, p.token, JSON.stringify({ command: next === 'ON' ? 'turn_on' : 'turn_off', params: {} })).then((r) => {
              const t = performance.now();
              if (r.status !== 200) throw new Error(`POST command answered ${r.status}: ${r.body.slice(0, 300)}`);
              return t;
            });
      try {
        const [tReceived, tAnswered] = await Promise.all([received, answered]);
        power.set(target.topic, next);
        if (record) {
          samples[side]!.receive.push(tReceived - t0);
          samples[side]!.answer.push(tAnswered - t0);
        }
      } catch (err) {
        const s = samples[side]!;
        s.failed++;
        s.firstError ??= err instanceof Error ? err.message : String(err);
        waiter = undefined;
        // A late answer must not be taken for the next command's.
        await sleep(200);
      } finally {
        clearTimeout(timer);
      }
    };
    const order = p.first === HUB ? [HUB, REFERENCE] : [REFERENCE, HUB];
    for (let i = 0; i < p.warmup; i++) for (const side of order) await one(side, false);
    for (let done = 0; done < p.perSide; done += p.block) {
      for (const side of order) for (let i = 0; i < Math.min(p.block, p.perSide - done); i++) await one(side, true);
    }
    const out: Record<string, CommandSide> = {};
    for (const [side, s] of Object.entries(samples)) out[side] = { receiveMs: stats(s.receive), answerMs: stats(s.answer), failed: s.failed, ...(s.firstError ? { firstError: s.firstError } : {}) };
    return { order, sides: out };
  };

  serveAgent(
    'mqtt peer',
    { connect: connect as never, publish: publish as never, flood: flood as never, arm: arm as never, collect: collect as never, commands: commands as never },
    () => {
      for (const c of clients) c.end(true);
      httpAgent.destroy();
    },
  );
}

/** The aedes role: a bare aedes broker on PORT, in its own process. */
async function serveAedes(): Promise<void> {
  const { Aedes } = await import('aedes');
  const broker = await Aedes.createBroker();
  const server = net.createServer(broker.handle);
  const port = Number(process.env.PORT);
  await new Promise<void>((resolve) => server.listen(port, LOOPBACK, resolve));
  process.stdout.write(`aedes listening on ${LOOPBACK}:${port}\n`);
  const quit = () => {
    setTimeout(() => process.exit(0), 1000).unref();
    broker.close(() => server.close(() => process.exit(0)));
  };
  process.once('SIGTERM', quit);
  process.once('SIGINT', quit);
}

// ---------------------------------------------------------------------------------------------
// The hub

interface ListedDevice {
  id: string;
  driverKey: string;
  driverDeviceId: string | null;
  online: boolean;
  reading: Record<string, unknown>;
}

interface HubRun {
  service: ServiceHandle;
  session: Session;
  spawnedEpoch: number;
  readyEpoch: number;
  /** CPU seconds of the hub and of the broker when /readyz answered. */
  cpuAtReady: { hub: number | undefined; broker: number | undefined };
  /** The admin's sign-in right after /readyz (it waits behind whatever the hub is doing). */
  loginMs: number;
}

async function startHub(ctx: BenchmarkContext, broker: BrokerHandle): Promise<HubRun> {
  const nodeArgs = ctx.settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.settings.cpuProfileDir}`] : [];
  const spawnedEpoch = epochMs();
  const service = await startService({ logLevel: ctx.settings.logLevel, nodeArgs, env: { MQTT_URL: broker.url } });
  const readyEpoch = epochMs();
  const cpuAtReady = { hub: cpuSecondsOf(service.pid), broker: cpuSecondsOf(broker.pid) };
  ctx.progress(`    hub pid ${service.pid} at ${service.baseUrl} (MQTT_URL=${broker.url})`);
  const session = await service.login();
  return { service, session, spawnedEpoch, readyEpoch, cpuAtReady, loginMs: epochMs() - readyEpoch };
}

async function stopHub(ctx: BenchmarkContext, hub: HubRun | undefined): Promise<void> {
  if (!hub) return;
  await reportIfExited(hub.service, ctx.progress);
  await hub.service.stop();
}

const cpuSince = (pid: number, before: number | undefined): number | null => {
  const now = cpuSecondsOf(pid);
  return now === undefined || before === undefined ? null : now - before;
};

/** The time of the hub's `MQTT: connected` log line (pino's epoch ms), waited for up to 10 s. */
async function connectedEpoch(service: ServiceHandle): Promise<number | null> {
  for (let i = 0; i < 200; i++) {
    try {
      for (const line of fs.readFileSync(service.logPath, 'utf8').split('\n')) {
        if (!line.includes('MQTT: connected')) continue;
        const time = (JSON.parse(line) as { time?: unknown }).time;
        if (typeof time === 'number') return time;
      }
    } catch {
      // not written yet
    }
    await sleep(50);
  }
  return null;
}

async function getJson<T>(hub: HubRun, pathname: string, timeoutMs = 30_000): Promise<{ body: T; ms: number; bytes: number }> {
  const t0 = performance.now();
  const answer = await hub.service.request(pathname, { headers: hub.session.headers, timeoutMs });
  const ms = performance.now() - t0;
  if (answer.status !== 200) throw new Error(`GET ${pathname} answered ${answer.status}: ${answer.body.slice(0, 500)}`);
  return { body: JSON.parse(answer.body) as T, ms, bytes: Buffer.byteLength(answer.body) };
}

async function listMqtt(hub: HubRun): Promise<{ byUniqueId: Map<string, ListedDevice>; ms: number; bytes: number; total: number }> {
  const { body, ms, bytes } = await getJson<{ devices: ListedDevice[] }>(hub, `${OS_API}/devices`);
  const byUniqueId = new Map<string, ListedDevice>();
  for (const d of body.devices) if (d.driverKey === 'mqtt' && d.driverDeviceId !== null) byUniqueId.set(d.driverDeviceId, d);
  return { byUniqueId, ms, bytes, total: body.devices.length };
}

/** Messages the hub's MQTT link received so far (GET /mqtt/status). */
async function hubMessages(hub: HubRun): Promise<number> {
  const { body } = await getJson<{ discovery?: { messages?: number } }>(hub, `${OS_API}/mqtt/status`);
  return body.discovery?.messages ?? 0;
}

interface Listed {
  /** When the GET /devices that listed every one of them answered. */
  listedEpoch: number;
  /** The slowest answer to a poll while the devices came in: how long the hub kept everyone waiting. */
  longestPollMs: number;
  /** That GET's own time (the first full listing after the devices arrived). */
  firstListMs: number;
  bodyBytes: number;
  polls: number;
}

/**
 * Until GET /v1/os/devices lists every one of `uniqueIds` as an mqtt device: GET /drivers (a
 * count, cheap) every 20 ms until the mqtt link counts them all, then the listing itself (again
 * until complete). Bounded by `timeoutMs`.
 */
async function waitListed(hub: HubRun, uniqueIds: string[], timeoutMs: number): Promise<Listed> {
  const deadline = Date.now() + timeoutMs;
  let polls = 0;
  let counted = 0;
  let longestPollMs = 0;
  while (Date.now() < deadline) {
    polls++;
    const { body, ms } = await getJson<{ connected: Array<{ driverKey: string; devices: number }> }>(hub, `${OS_API}/drivers`);
    longestPollMs = Math.max(longestPollMs, ms);
    counted = body.connected.filter((c) => c.driverKey === 'mqtt').reduce((a, c) => a + c.devices, 0);
    if (counted >= uniqueIds.length) break;
    await sleep(20);
  }
  let missing = uniqueIds.length;
  while (Date.now() < deadline) {
    polls++;
    const list = await listMqtt(hub);
    const listedEpoch = epochMs();
    longestPollMs = Math.max(longestPollMs, list.ms);
    missing = uniqueIds.filter((id) => !list.byUniqueId.has(id)).length;
    if (missing === 0) return { listedEpoch, longestPollMs, firstListMs: list.ms, bodyBytes: list.bytes, polls };
    await sleep(20);
  }
  throw new Error(`discovery: ${missing} of ${uniqueIds.length} devices still not listed after ${timeoutMs} ms (the mqtt link counted ${counted})`);
}

// ---------------------------------------------------------------------------------------------
// Cases

interface DiscoveryRound {
  round: number;
  live: { publishedMs: number; fromFirstPublishMs: number; fromLastPublishMs: number; firstListMs: number; polls: number; longestPollMs: number; cpuSeconds: Record<string, number | null>; otherCores: number | null };
  /** CPU from /readyz until listed (the hub's own start is not counted); other cores over the part after the sign-in. */
  retained: {
    fromConnectionMs: number | null;
    fromSpawnMs: number;
    connectAfterSpawnMs: number | null;
    readyAfterSpawnMs: number;
    loginMs: number;
    firstListMs: number;
    polls: number;
    longestPollMs: number;
    cpuSeconds: Record<string, number | null>;
    otherCores: number | null;
  };
  list: { bodyBytes: number; firstListMs: number; sequential: SequentialRun; afterChange: Stats; rssBytes: number | null };
}

interface SequentialRun {
  requests: number;
  statusCodes: Record<string, number>;
  bodyBytes: number;
  latencyMs: { mean: number | null; p50: number | null; p90: number | null; p99: number | null; max: number | null };
}

interface IngestSide {
  label: string;
  sent: number;
  /** Messages that reached the subscriber (reference) or the hub's MQTT link (hub). */
  received: number;
  seconds: number;
  perSecond: number;
  publishSeconds: number;
  /** Sensors not showing their last value (hub), or topics whose last payload was not the last sent (reference). */
  notAtLast: number;
  window: WindowFigures;
  attempts: number;
  disturbed: boolean;
}

const SEQUENTIAL_GETS = 200;
const AFTER_CHANGE_GETS = 20;

/**
 * `times` times: one state message to one sensor (QoS 1 from the publisher), waited for through
 * GET /devices/:id (which does not build the listing), then one GET /devices timed: what a client
 * refreshing the list pays while the home changes.
 */
async function listAfterOneChange(hub: HubRun, publisher: AgentHandle, fleet: Fleet, times: number): Promise<Stats> {
  const listing = await listMqtt(hub);
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const sensor = fleet.sensors[(i * 7) % fleet.sensors.length]!;
    const id = listing.byUniqueId.get(sensor.uniqueId)?.id;
    if (!id) throw new Error(`${sensor.uniqueId} is not listed`);
    const value = 900_000 + i;
    await publisher.call('publish', { messages: [{ topic: sensor.topic, payload: climatePayload(value) }] });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { body } = await getJson<{ reading?: { value?: unknown } }>(hub, `${OS_API}/devices/${encodeURIComponent(id)}`);
      if (body.reading?.value === value) break;
      if (Date.now() > deadline) throw new Error(`${sensor.uniqueId} did not show ${value} within 10 s`);
      await sleep(5);
    }
    samples.push((await listMqtt(hub)).ms);
  }
  return stats(samples);
}

async function run(ctx: BenchmarkContext): Promise<BenchmarkOutcome> {
  const { settings } = ctx;
  const cases = selectCases('mqtt', CASES, ctx.caseFilter);
  const wants = (name: string) => cases.some((c) => c.name === name);
  const s = mqttSettings();
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'main.js'))) throw new UsageError('dist/main.js is missing: run `npm run bench -- mqtt` (its prebench step builds dist/)');
  const kind = s.broker ?? (mosquittoBinary() ? 'mosquitto' : 'aedes');
  const fleet = makeFleet(s.entities);
  const { lights, sensors, binarySensors, switches } = fleet.counts;

  ctx.progress(`mqtt: starting the broker (${kind})...`);
  const broker = await startBroker(kind, s.noDelay);
  const brokerLine =
    kind === 'mosquitto'
      ? `broker: mosquitto ${broker.version} (Debian's, pid ${broker.pid}), anonymous on loopback, no persistence, default queue limits, ${s.noDelay ? 'set_tcp_nodelay true (BENCH_MQTT_NODELAY=1: investigation only, not the default)' : 'default set_tcp_nodelay false (Nagle on)'}`
      : `broker: aedes ${broker.version} in its own process (pid ${broker.pid})${s.broker === 'aedes' ? ' (BENCH_MQTT_BROKER=aedes)' : ' — mosquitto is not installed'}`;
  ctx.print(brokerLine);
  ctx.print(
    `home: ${format.int(s.entities)} retained discovery configs — ${lights} Zigbee2MQTT JSON-schema lights, ${sensors} Zigbee2MQTT temperature sensors ({{ value_json.temperature }}), ${binarySensors} Zigbee2MQTT door contacts, ${switches} Tasmota switches (abbreviated keys); availability retained online`,
  );

  let publisher: AgentHandle | undefined;
  let peer: AgentHandle | undefined;
  let loadgen: AgentHandle | undefined;
  let hub: HubRun | undefined;
  const results: Record<string, unknown> = { broker: { kind, version: broker.version }, home: fleet.counts, settings: s };
  const targetLines: string[] = [];
  let passed = true;
  const disturbedNotes: string[] = [];
  try {
    publisher = await startPeer('mqtt publisher');
    await publisher.call('connect', { url: broker.url, clientId: 'bench-publisher' });
    peer = await startPeer('mqtt peer');
    await publisher.call('publish', { messages: fleet.availability }, 60_000);

    // -------------------------------------------------------------------------------------------
    // discovery
    if (wants('discovery')) {
      loadgen = await startAgent('loadgen', 'loadgen');
      const rounds: DiscoveryRound[] = [];
      const discoveryParticipants = (h: HubRun): Participant[] => [
        { label: 'hub', pid: h.service.pid },
        { label: 'broker', pid: broker.pid },
      ];
      for (let round = 1; round <= settings.rounds; round++) {
        ctx.progress(`  discovery round ${round}/${settings.rounds}: live (the hub running, ${format.int(s.entities)} configs published)`);
        await stopHub(ctx, hub);
        hub = undefined;
        if (round > 1) await publisher.call('publish', { messages: fleet.clear }, 60_000);
        const liveHub = await startHub(ctx, broker);
        hub = liveHub;
        let published: Promise<{ firstEpoch: number; lastEpoch: number }> | undefined;
        if ((await connectedEpoch(liveHub.service)) === null) throw new Error(`the hub did not log "MQTT: connected" within 10 s; log tail:\n${liveHub.service.child.logTail()}`);
        // Past the birth message (500 ms after connecting): the hub is idle when the configs come.
        await sleep(800);
        const { result: listed, window: liveWindow } = await measureWindow(discoveryParticipants(liveHub), () => {
          published = publisher!.call<{ firstEpoch: number; lastEpoch: number }>('publish', { messages: fleet.configs }, 60_000);
          return waitListed(liveHub, fleet.uniqueIds, 60_000);
        });
        const pub = await published!;
        const live = {
          publishedMs: pub.lastEpoch - pub.firstEpoch,
          fromFirstPublishMs: listed.listedEpoch - pub.firstEpoch,
          fromLastPublishMs: listed.listedEpoch - pub.lastEpoch,
          firstListMs: listed.firstListMs,
          polls: listed.polls,
          longestPollMs: listed.longestPollMs,
          cpuSeconds: liveWindow.cpuSeconds,
          otherCores: liveWindow.otherCpuCores,
        };
        if ((liveWindow.otherCpuCores ?? 0) > settings.quietMaxBusyCores) disturbedNotes.push(`discovery round ${round} live: ${otherNote(liveWindow, settings.quietMaxBusyCores)}`);
        ctx.progress(`    listed ${live.fromFirstPublishMs.toFixed(0)} ms after the first publication (${live.fromLastPublishMs.toFixed(0)} ms after the last was acknowledged)`);
        await stopHub(ctx, liveHub);
        hub = undefined;

        ctx.progress(`  discovery round ${round}/${settings.rounds}: retained (a fresh hub started against the broker holding the configs)`);
        const retainedHub = await startHub(ctx, broker);
        hub = retainedHub;
        const { result: { connected, got }, window: retainedWindow } = await measureWindow(discoveryParticipants(retainedHub), async () => {
          const connected = await connectedEpoch(retainedHub.service);
          return { connected, got: await waitListed(retainedHub, fleet.uniqueIds, 60_000) };
        });
        const retained = {
          fromConnectionMs: connected === null ? null : got.listedEpoch - connected,
          fromSpawnMs: got.listedEpoch - retainedHub.spawnedEpoch,
          connectAfterSpawnMs: connected === null ? null : connected - retainedHub.spawnedEpoch,
          readyAfterSpawnMs: retainedHub.readyEpoch - retainedHub.spawnedEpoch,
          firstListMs: got.firstListMs,
          polls: got.polls,
          longestPollMs: Math.max(got.longestPollMs, retainedHub.loginMs),
          loginMs: retainedHub.loginMs,
          cpuSeconds: { hub: cpuSince(retainedHub.service.pid, retainedHub.cpuAtReady.hub), broker: cpuSince(broker.pid, retainedHub.cpuAtReady.broker) },
          otherCores: retainedWindow.otherCpuCores,
        };
        if ((retainedWindow.otherCpuCores ?? 0) > settings.quietMaxBusyCores) disturbedNotes.push(`discovery round ${round} retained: ${otherNote(retainedWindow, settings.quietMaxBusyCores)}`);
        ctx.progress(`    listed ${retained.fromConnectionMs?.toFixed(0) ?? '?'} ms after the hub connected (${retained.fromSpawnMs.toFixed(0)} ms after its start)`);
        const url = `${retainedHub.service.baseUrl}${OS_API}/devices`;
        await loadgen.call('sequential', { url, count: 5, headers: retainedHub.session.headers }, 60_000);
        const sequential = await loadgen.call<SequentialRun>('sequential', { url, count: SEQUENTIAL_GETS, headers: retainedHub.session.headers }, 120_000);
        const afterChange = await listAfterOneChange(retainedHub, publisher, fleet, AFTER_CHANGE_GETS);
        rounds.push({ round, live, retained, list: { bodyBytes: got.bodyBytes, firstListMs: got.firstListMs, sequential, afterChange, rssBytes: memoryOf(retainedHub.service.pid)?.rssBytes ?? null } });
      }

      ctx.print(`\n### discovery: ${format.int(s.entities)} configs until GET ${OS_API}/devices lists every one (hub: DATA_DIR on disk, LOG_LEVEL=${settings.logLevel}, admin token)`);
      ctx.print(
        table(
          ['round', 'how', 'published in ms', 'listed after ms', 'measured from', 'polls', 'slowest poll ms', 'first full GET /devices ms', 'hub CPU s', 'broker CPU s', 'other cores'],
          rounds.flatMap((r) => [
            [
              String(r.round),
              'live: hub running, configs published',
              r.live.publishedMs.toFixed(0),
              r.live.fromFirstPublishMs.toFixed(0),
              'first publication',
              String(r.live.polls),
              r.live.longestPollMs.toFixed(0),
              r.live.firstListMs.toFixed(1),
              format.fixed(2)(r.live.cpuSeconds.hub ?? null),
              format.fixed(2)(r.live.cpuSeconds.broker ?? null),
              format.fixed(2)(r.live.otherCores),
            ],
            ['', '', '', r.live.fromLastPublishMs.toFixed(0), 'last PUBACK', '', '', '', '', '', ''],
            [
              String(r.round),
              'retained: hub started',
              '',
              r.retained.fromConnectionMs === null ? '-' : r.retained.fromConnectionMs.toFixed(0),
              "hub's MQTT connection",
              String(r.retained.polls),
              r.retained.longestPollMs.toFixed(0),
              r.retained.firstListMs.toFixed(1),
              format.fixed(2)(r.retained.cpuSeconds.hub ?? null),
              format.fixed(2)(r.retained.cpuSeconds.broker ?? null),
              format.fixed(2)(r.retained.otherCores),
            ],
            ['', '', '', r.retained.fromSpawnMs.toFixed(0), `hub process start (/readyz at ${r.retained.readyAfterSpawnMs.toFixed(0)}, connected at ${r.retained.connectAfterSpawnMs?.toFixed(0) ?? '?'})`, '', '', '', '', '', ''],
          ]),
        ),
      );
      const mid = rounds[Math.floor((rounds.length - 1) / 2)]!;
      ctx.print('(hub and broker CPU: from the first publication, or from /readyz, until listed; polls: GET /drivers every 20 ms, then GET /devices; retained: the admin sign-in right after /readyz counts as a poll)');
      ctx.print(
        `\nGET ${OS_API}/devices with ${format.int(s.entities)} mqtt devices (${format.int(mid.list.bodyBytes / 1024)} KiB): the first after discovery; ${AFTER_CHANGE_GETS} times the first after one sensor's value changed (the change waited for through GET /devices/:id); ${SEQUENTIAL_GETS} sequential requests, nothing changing, from the loadgen agent after 5 discarded`,
      );
      ctx.print(
        table(
          ['round', 'first after discovery ms', 'after a change p50 ms', 'after a change max ms', 'unchanged p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-200', 'hub RSS MiB'],
          rounds.map((r) => [
            String(r.round),
            r.list.firstListMs.toFixed(1),
            format.fixed(2)(r.list.afterChange.p50),
            format.fixed(2)(r.list.afterChange.max),
            format.fixed(2)(r.list.sequential.latencyMs.p50),
            format.fixed(2)(r.list.sequential.latencyMs.p90),
            format.fixed(2)(r.list.sequential.latencyMs.p99),
            format.fixed(2)(r.list.sequential.latencyMs.max),
            String(Object.entries(r.list.sequential.statusCodes).filter(([code]) => code !== '200').reduce((a, [, n]) => a + n, 0)),
            MiB(r.list.rssBytes),
          ]),
        ),
      );
      const asRounds = (value: (r: DiscoveryRound) => number | null): Round<{ v: number | null }>[] => rounds.map((r) => ({ order: [HUB], results: { [HUB]: { v: value(r) } } }));
      const condition = s.entities === MQTT_TARGETS.discoveryEntities ? null : `${format.int(s.entities)} entities, not the target condition (${format.int(MQTT_TARGETS.discoveryEntities)})`;
      const discoveryTargets: TargetResult[] = [
        { kind: 'absolute', ...absoluteResult({ figure: 'discovery, live: ms from the first publication until all are listed (absolute, issue 28)', subject: HUB, bound: 'below', limit: MQTT_TARGETS.discoveryMs, unit: 'ms' }, asRounds((r) => r.live.fromFirstPublishMs), (m) => m.v) },
        { kind: 'absolute', ...absoluteResult({ figure: "discovery, retained: ms from the hub's connection until all are listed (absolute, issue 28)", subject: HUB, bound: 'below', limit: MQTT_TARGETS.discoveryMs, unit: 'ms' }, asRounds((r) => r.retained.fromConnectionMs), (m) => m.v) },
      ];
      for (const t of discoveryTargets) {
        if (condition) Object.assign(t, { verdict: 'FAIL', reasons: [...t.reasons, condition] });
        targetLines.push(targetLine(t));
        passed &&= t.verdict === 'PASS';
      }
      results.discovery = { targets: discoveryTargets, rounds };
    } else {
      ctx.progress(`  publishing ${format.int(s.entities)} retained configs and starting the hub...`);
      await publisher.call('publish', { messages: fleet.configs }, 60_000);
      hub = await startHub(ctx, broker);
      await waitListed(hub, fleet.uniqueIds, 60_000);
    }
    if (!hub) throw new Error('no hub running');
    const theHub = hub;
    const listing = await listMqtt(theHub);
    const hubIdOf = (uniqueId: string) => {
      const d = listing.byUniqueId.get(uniqueId);
      if (!d) throw new Error(`${uniqueId} is not listed by GET ${OS_API}/devices`);
      return d.id;
    };

    // -------------------------------------------------------------------------------------------
    // state-ingest
    if (wants('state-ingest')) {
      const participants: Participant[] = [
        { label: 'hub', pid: theHub.service.pid },
        { label: 'broker', pid: broker.pid },
        { label: 'publisher', pid: publisher.pid },
        { label: 'subscriber', pid: peer.pid },
      ];
      const hubTopics = fleet.sensors.map((x) => x.topic);
      const referenceTopics = fleet.sensors.map((x) => x.referenceTopic);
      const sensorHubIds = fleet.sensors.map((x) => hubIdOf(x.uniqueId));
      let counter = 1_000_000;
      /** The value the last message to each sensor carried: message k goes to sensor k % S with base + k. */
      const lastValues = (base: number, count: number) => {
        const n = fleet.sensors.length;
        return Array.from({ length: n }, (_, i) => (count - 1 < i ? null : base + i + n * Math.floor((count - 1 - i) / n)));
      };

      const floodReference = async (count: number, label: string): Promise<IngestSide> => {
        const base = counter;
        counter += count;
        const last = lastValues(base, count);
        const expectedLast: Record<string, number> = {};
        referenceTopics.forEach((t, i) => {
          if (last[i] !== null) expectedLast[t] = last[i]!;
        });
        return undisturbedIngest(ctx, label, participants, async () => {
          await peer!.call('arm', { url: broker.url, topics: referenceTopics, count });
          const flood = await publisher!.call<FloodResult>('flood', { topics: referenceTopics, count, base }, 300_000);
          const got = await peer!.call<ArmedResult>('collect', { idleMs: 3000, timeoutMs: 240_000, lastValues: expectedLast }, 300_000);
          const seconds = ((got.lastEpoch ?? epochMs()) - flood.firstEpoch) / 1000;
          return { label, sent: flood.sent, received: got.received, seconds, perSecond: got.received / seconds, publishSeconds: (flood.lastEpoch - flood.firstEpoch) / 1000, notAtLast: got.wrongLast };
        });
      };

      const floodHub = async (count: number, label: string): Promise<IngestSide> => {
        const base = counter;
        counter += count;
        const last = lastValues(base, count);
        const lastSensor = (count - 1) % fleet.sensors.length;
        return undisturbedIngest(ctx, label, participants, async () => {
          const before = await hubMessages(theHub);
          const flood = await publisher!.call<FloodResult>('flood', { topics: hubTopics, count, base }, 300_000);
          // The hub reads one connection in order: once the sensor sent the very last message shows
          // it, every earlier one has been read. Then the listing checks every sensor.
          let visibleEpoch: number | null = null;
          let notAtLast = fleet.sensors.length;
          let seen = before;
          let progressAt = Date.now();
          const deadline = Date.now() + 240_000;
          for (let i = 0; Date.now() < deadline; i++) {
            const { body } = await getJson<{ reading?: { value?: unknown } }>(theHub, `${OS_API}/devices/${encodeURIComponent(sensorHubIds[lastSensor]!)}`);
            if (body.reading?.value === last[lastSensor]) {
              visibleEpoch = epochMs();
              break;
            }
            if (i % 50 === 49) {
              const now = await hubMessages(theHub);
              if (now > seen) {
                seen = now;
                progressAt = Date.now();
              } else if (Date.now() - progressAt > 3000) break; // nothing more is coming: messages were dropped
            }
            await sleep(5);
          }
          for (let i = 0; i < 100; i++) {
            const list = await listMqtt(theHub);
            notAtLast = fleet.sensors.filter((x, k) => last[k] !== null && list.byUniqueId.get(x.uniqueId)?.reading.value !== last[k]).length;
            if (notAtLast === 0 || visibleEpoch === null) break;
            await sleep(20);
          }
          const received = (await hubMessages(theHub)) - before;
          const seconds = ((visibleEpoch ?? epochMs()) - flood.firstEpoch) / 1000;
          return { label, sent: flood.sent, received, seconds, perSecond: visibleEpoch === null ? 0 : flood.sent / seconds, publishSeconds: (flood.lastEpoch - flood.firstEpoch) / 1000, notAtLast };
        });
      };

      const warmup = Math.min(5000, Math.max(100, Math.round(s.messages / 10)));
      ctx.progress(`  state-ingest: warm-up, ${format.int(warmup)} messages a side (discarded)`);
      await floodReference(warmup, REFERENCE);
      await floodHub(warmup, HUB);
      const rounds: Round<IngestSide>[] = [];
      for (let round = 0; round < settings.rounds; round++) {
        const order = round % 2 === 0 ? [REFERENCE, HUB] : [HUB, REFERENCE];
        const r: Record<string, IngestSide> = {};
        for (const label of order) {
          ctx.progress(`  state-ingest round ${round + 1}/${settings.rounds}, ${label}: ${format.int(s.messages)} QoS 0 messages over ${fleet.sensors.length} sensor topics`);
          r[label] = label === HUB ? await floodHub(s.messages, HUB) : await floodReference(s.messages, REFERENCE);
          ctx.progress(`    ${format.int(r[label].perSecond)} messages/s (${format.int(r[label].received)} of ${format.int(r[label].sent)} received)`);
        }
        rounds.push({ order, results: r });
      }

      ctx.print(`\n### state-ingest: ${format.int(s.messages)} QoS 0 state messages (${Buffer.byteLength(climatePayload(counter))} bytes each) round-robin over ${fleet.sensors.length} sensor topics, as fast as the broker takes them`);
      ctx.print(
        table(
          ['round', 'side', 'sent', 'received', 'not at last value', 'publish s', 'last visible s', 'messages/s', 'hub cores', 'hub µs/msg', 'broker cores', 'publisher cores', 'subscriber cores', 'other cores'],
          rounds.flatMap((r, i) =>
            r.order.map((label) => {
              const m = r.results[label]!;
              const w = m.window;
              const hubCpu = w.cpuSeconds.hub ?? null;
              return [
                String(i + 1),
                label === HUB ? 'hub (last value visible)' : 'reference subscriber',
                format.int(m.sent),
                format.int(m.received),
                String(m.notAtLast),
                m.publishSeconds.toFixed(2),
                m.seconds.toFixed(2),
                format.int(m.perSecond),
                format.fixed(2)(w.cpuCores.hub ?? null),
                label === HUB ? format.fixed(1)(hubCpu === null ? null : (hubCpu / Math.max(1, m.received)) * 1e6) : '',
                format.fixed(2)(w.cpuCores.broker ?? null),
                format.fixed(2)(w.cpuCores.publisher ?? null),
                format.fixed(2)(w.cpuCores.subscriber ?? null),
                format.fixed(2)(w.otherCpuCores) + (m.disturbed ? ' DISTURBED' : ''),
              ];
            }),
          ),
        ),
      );
      for (const r of rounds) for (const m of Object.values(r.results)) if (m.disturbed) disturbedNotes.push(`state-ingest ${m.label}: ${otherNote(m.window, settings.quietMaxBusyCores)}`);
      const hubRates = rounds.map((r) => r.results[HUB]!.perSecond);
      const ratios = rounds.map((r) => r.results[HUB]!.perSecond / Math.max(1e-9, r.results[REFERENCE]!.perSecond));
      const rate = median(hubRates);
      const referenceRate = median(rounds.map((r) => r.results[REFERENCE]!.perSecond));
      const reasons: string[] = [];
      for (const r of rounds) {
        const h = r.results[HUB]!;
        if (h.notAtLast > 0) reasons.push(`${h.notAtLast} sensors not at their last value (${format.int(h.sent - h.received)} of ${format.int(h.sent)} messages never reached the hub)`);
      }
      if (rate < MQTT_TARGETS.ingestPerSecond) reasons.push(`${format.int(rate)}/s < ${format.int(MQTT_TARGETS.ingestPerSecond)}/s`);
      const verdict = reasons.length === 0 ? 'PASS' : 'FAIL';
      const roundsNote = rounds.length > 1 ? `; rounds ${hubRates.map((x) => format.int(x)).join(' ')}` : '';
      targetLines.push(
        `${verdict}  state messages absorbed/s, last value visible: hub ${format.int(rate)}/s vs reference subscriber ${format.int(referenceRate)}/s → ${median(ratios).toFixed(2)}× (information) (absolute target ≥ ${format.int(MQTT_TARGETS.ingestPerSecond)}/s, issue 28${roundsNote})` +
          (reasons.length > 0 ? ` — ${reasons.join('; ')}` : ''),
      );
      passed &&= verdict === 'PASS';
      results['state-ingest'] = { target: { figure: 'state messages absorbed/s', bound: 'atLeast', limit: MQTT_TARGETS.ingestPerSecond, value: rate, perRound: hubRates, verdict, reasons }, referencePerSecond: referenceRate, ratio: median(ratios), rounds, brokerDropNotices: broker.dropNotices() };
    }

    // -------------------------------------------------------------------------------------------
    // command
    if (wants('command')) {
      const targets = fleet.switches.map((x) => ({ hubId: hubIdOf(x.uniqueId), topic: x.topic }));
      const block = 50;
      const runs: CommandRun[] = [];
      for (let round = 0; round < settings.rounds; round++) {
        const first = round % 2 === 0 ? REFERENCE : HUB;
        ctx.progress(`  command round ${round + 1}/${settings.rounds}: ${s.warmupCommands} discarded, then ${s.commands} a side in alternating blocks of ${block}, ${first} first, over ${targets.length} switches`);
        const participants: Participant[] = [
          { label: 'hub', pid: theHub.service.pid },
          { label: 'broker', pid: broker.pid },
          { label: 'peer', pid: peer.pid },
        ];
        const m = await measureWindow(participants, () =>
          peer!.call<CommandRun>('commands', { url: broker.url, baseUrl: theHub.service.baseUrl, token: theHub.session.accessToken, targets, perSide: s.commands, warmup: s.warmupCommands, block, first }, 600_000),
        );
        if ((m.window.otherCpuCores ?? 0) > settings.quietMaxBusyCores) disturbedNotes.push(`command round ${round + 1}: ${otherNote(m.window, settings.quietMaxBusyCores)}`);
        runs.push({ ...m.result, window: m.window });
      }
      const ms = (n: number | null) => format.fixed(3)(n);
      ctx.print(`\n### command: ${s.commands} sequential commands a side (after ${s.warmupCommands} discarded), alternating blocks of ${block}, round-robin over ${targets.length} Tasmota switches, until the simulated switch receives the publication`);
      ctx.print(
        table(
          ['round', 'side', 'receive p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'answer p50 ms', 'answer p90 ms', 'answer p99 ms', 'failed'],
          runs.flatMap((r, i) =>
            [REFERENCE, HUB].map((label) => {
              const x = r.sides[label]!;
              return [
                String(i + 1),
                label === HUB ? 'hub: POST /devices/:id/command' : 'reference: MQTT.js publish QoS 1',
                ms(x.receiveMs.p50),
                ms(x.receiveMs.p90),
                ms(x.receiveMs.p99),
                ms(x.receiveMs.max),
                ms(x.answerMs.p50),
                ms(x.answerMs.p90),
                ms(x.answerMs.p99),
                String(x.failed),
              ];
            }),
          ),
        ),
      );
      ctx.print('(answer: the HTTP answer for the hub, sent once the broker acknowledged its publication; the PUBACK for the reference)');
      const overheadRounds: Round<{ overhead: number | null; failed: string | null }>[] = runs.map((r) => {
        const h = r.sides[HUB]!;
        const ref = r.sides[REFERENCE]!;
        const failed = h.failed + ref.failed > 0 ? `${h.failed} hub and ${ref.failed} reference commands failed (${h.firstError ?? ref.firstError})` : null;
        return { order: [HUB], results: { [HUB]: { overhead: h.receiveMs.p50 === null || ref.receiveMs.p50 === null ? null : h.receiveMs.p50 - ref.receiveMs.p50, failed } } };
      });
      const t: TargetResult = {
        kind: 'absolute',
        ...absoluteResult({ figure: 'command overhead, hub p50 − reference p50 until the switch receives it (absolute, issue 28)', subject: HUB, bound: 'below', limit: MQTT_TARGETS.commandOverheadMs, unit: 'ms' }, overheadRounds, (m) => m.overhead, (m) => m.failed),
      };
      targetLines.push(targetLine(t));
      passed &&= t.verdict === 'PASS';
      results.command = { target: t, rounds: runs };
    }
  } finally {
    await loadgen?.stop();
    await peer?.stop();
    await publisher?.stop();
    await stopHub(ctx, hub);
    await broker.stop();
  }

  if (disturbedNotes.length > 0) ctx.print(`warning: other work on the machine used more than ${settings.quietMaxBusyCores} cores during: ${disturbedNotes.join('; ')}`);
  for (const line of targetLines) ctx.print(line);
  return { passed, results };
}

/** One flood in `undisturbed()` + `measureWindow()`: repeated while other work disturbed it (BENCH_RETRIES). */
async function undisturbedIngest(ctx: BenchmarkContext, label: string, participants: Participant[], flood: () => Promise<Omit<IngestSide, 'window' | 'attempts' | 'disturbed'>>): Promise<IngestSide> {
  const r = await undisturbed(ctx, `state-ingest ${label}`, async (busy) => {
    const m = await measureWindow(participants, flood, busy);
    return { side: m.result, window: m.window };
  });
  return { ...r.side, window: r.window, attempts: r.attempts, disturbed: r.disturbed };
}

export const mqttBenchmark: Benchmark = {
  name: 'mqtt',
  description: 'MQTT (issue 28): 1,000 discovered entities listed, state messages absorbed against a plain subscriber, and a command through the broker against a plain publisher, on mosquitto (aedes when it is not installed)',
  run,
};

// This file is also the MQTT peer and the aedes broker of the benchmark, in child processes of their own.
const role = process.argv.find((a) => a.startsWith(ROLE_FLAG))?.slice(ROLE_FLAG.length);
if (role === 'peer') servePeer();
else if (role === 'aedes') {
  serveAedes().catch((err: unknown) => {
    process.stderr.write(`aedes: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
