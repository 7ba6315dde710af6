/**
 * `npm run bench -- homekit`: state ingest with the Apple Home bridge on against the same hub
 * with it off, in the same run (issue 37). docs/benchmarks.md, "`homekit`", says what and why.
 *
 * Two hubs run side by side, each started as people run it (`ACCESSORY_HUB=auto`, the default,
 * bound to 127.0.0.1, a free HAP port each) with BENCH_HOMEKIT_DEVICES (1,000) dimmable lights
 * from one bench driver (category `light`, `turn_on`/`turn_off`/`toggle`/`set_brightness`, state
 * `{on, brightness}`: class light, HAP service Lightbulb with On and Brightness):
 *
 * - `bridge off`: Apple Home off, so Homebridge does not run (the status says `stopped`);
 * - `bridge on`: Apple Home turned on (`POST /accessory-hub/homekit {"exposed": true}`, every
 *   device): Homebridge runs with the hub's plugin, whose bridge shows the first 149 lights (a
 *   HomeKit bridge's limit) and follows the hub over its SSE stream.
 *
 * Each round floods both hubs in turn (never at once, the order rotating by one each round) the
 * same way for BENCH_FLOOD_SECONDS: STATE_UPDATEs round-robin over every light, as fast as the
 * driver's socket takes them, each `{n, brightness: n % 101, on: n % 2 === 0}` (n a per-device
 * counter): every update changes what HomeKit renders, so the bridge has work on each of its
 * devices. Absorbed/s = sent / (time until GET /state/snapshot shows every light's last `n` −
 * flood start). CPU and RSS of the hub, its driver and Homebridge are accounted per window; the
 * idle hub (and its Homebridge) are participants too, so that "other" stays other work.
 *
 * After each `bridge on` round the harness reads the bridge over HAP (`GET /accessory-hub/accessories`)
 * until each of the 149 accessories shows its light's last brightness and on/off (bounded): the
 * bridge did follow the flood.
 */
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentHandle } from './lib/agent.js';
import { selectCases, type Benchmark, type BenchmarkContext, type BenchmarkOutcome } from './lib/benchmark.js';
import { inRotation, ratioResult, targetLine, type TargetResult } from './lib/compare.js';
import { OS, discoverDevices, getJson, hubIdsByDriverId, postJson, reportIfExited, startBenchDriver } from './lib/hub-setup.js';
import { freePort } from './lib/net.js';
import { memoryOf } from './lib/proc.js';
import { format, table } from './lib/report.js';
import { startService, type ServiceHandle, type Session } from './lib/service.js';
import { integerSetting } from './lib/settings.js';
import { MiB, measureWindow, otherNote, undisturbed, type Participant, type WindowFigures } from './lib/window.js';

const OFF = 'bridge off';
const ON = 'bridge on';
const SIDES = [OFF, ON];
const PREFIX = 'hk-';

export const HOMEKIT_TARGETS = {
  devices: 1000,
  /** What a HomeKit bridge shows at most (HOMEKIT_BRIDGE_LIMIT in src/domain/accessory-hub/homekit.ts). */
  shown: 149,
  ingest: { figure: 'state updates absorbed/s at 1,000 devices', subject: ON, reference: OFF, bound: 'atLeast', limit: 0.8 },
} as const;

const CASES = [{ name: 'state-ingest', what: 'STATE_UPDATEs over 1,000 lights from one driver, absorbed/s with the Apple Home bridge (Homebridge, 149 lights shown) on against off' }];

/** How long Homebridge may take to run and show its 149 accessories, and then to catch up after a flood. */
const HOMEBRIDGE_READY_MS = 120_000;
const HAP_CATCH_UP_MS = 15_000;

interface AccessoryHubStatus {
  enabled: boolean;
  state: string;
  usedFor?: { plugins: boolean; homekit: boolean; environment: boolean };
  pid?: number;
  restarts?: number;
  lastError?: string;
  recentOutput?: string[];
}

interface HomeKitView {
  exposed: boolean;
  devices: 'all' | string[];
  shown: number;
  bridgeable: number;
  limit: number;
  state: string;
}

interface HapCharacteristic {
  iid: number;
  type: string;
  value?: unknown;
}

interface Accessories {
  accessories: Array<{ aid: number; name: string | null; services: Array<{ iid: number; type: string; characteristics: HapCharacteristic[] }> }>;
}

interface FloodResult {
  sent: number;
  finalCounts: number[];
  startedAt: number;
  endedAt: number;
  sendSeconds: number;
  waits: number;
}

interface Side {
  label: string;
  service: ServiceHandle;
  session: Session;
  driver: AgentHandle;
  /** Hub ids of the lights, in the driver's order (`hk-0`, `hk-1`, …). */
  hubIds: string[];
  driverIds: string[];
  discoverySeconds: number;
  rssAfterDiscovery: number | null;
  /** `bridge on` only. */
  homebridge?: { pid: number; restarts: number; startSeconds: number; shownSeconds: number; rssAtStart: number | null };
}

interface SideRun {
  label: string;
  sent: number;
  driverSendPerSecond: number;
  absorbSeconds: number;
  absorbedPerSecond: number;
  lagAfterLastSendMs: number;
  polls: number;
  serviceCpuMicrosPerUpdate: number | null;
  homebridgeCpuMicrosPerUpdate: number | null;
  driverStatusErrors: number;
  /** `bridge on`: the bridge's accessories seen showing every last value, and how long after the snapshot did. */
  hap: { current: number; of: number; afterMs: number | null } | null;
  problem: string | null;
  window: WindowFigures;
  attempts: number;
  disturbed: boolean;
}

const status = (side: { service: ServiceHandle; session: Session }) => getJson<AccessoryHubStatus>(side.service, side.session, `${OS}/accessory-hub/status`);
const homekitView = (side: { service: ServiceHandle; session: Session }) => getJson<HomeKitView>(side.service, side.session, `${OS}/accessory-hub/homekit`);

/** HAP's short form of an Apple-defined type (`8`, `25`, `30`), whichever form the server answered. */
function shortType(type: string): string {
  const m = /^0*([0-9A-F]+)-0000-1000-8000-0026BB765291$/i.exec(type);
  return (m ? m[1]! : type.replace(/^0+(?=.)/, '')).toUpperCase();
}

const HAP = { lightbulb: '43', on: '25', brightness: '8', serialNumber: '30' } as const;

/** The bridge's lights as HAP shows them: serial number (the hub device id) → On and Brightness. */
async function bridgedLights(side: Side): Promise<Map<string, { on: unknown; brightness: unknown }>> {
  const { accessories } = await getJson<Accessories>(side.service, side.session, `${OS}/accessory-hub/accessories`, 30_000);
  const lights = new Map<string, { on: unknown; brightness: unknown }>();
  for (const a of accessories) {
    const chars = (service: string) => a.services.filter((s) => shortType(s.type) === service).flatMap((s) => s.characteristics);
    const bulb = chars(HAP.lightbulb);
    if (bulb.length === 0) continue;
    const serial = a.services.flatMap((s) => s.characteristics).find((c) => shortType(c.type) === HAP.serialNumber)?.value;
    if (typeof serial !== 'string') continue;
    lights.set(serial, { on: bulb.find((c) => shortType(c.type) === HAP.on)?.value, brightness: bulb.find((c) => shortType(c.type) === HAP.brightness)?.value });
  }
  return lights;
}

/** Homebridge's process and any it started (none, as Homebridge 1.x runs without child bridges). */
function homebridgePids(pid: number): number[] {
  try {
    const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return [pid, ...(children === '' ? [] : children.split(/\s+/).map(Number))];
  } catch {
    return [pid];
  }
}

/** Polls GET /state/snapshot until every light shows the last counter the driver sent it; bounded by `timeoutMs`. */
async function waitApplied(side: Side, finalCounts: number[], timeoutMs: number): Promise<{ appliedAt: number; polls: number }> {
  const deadline = Date.now() + timeoutMs;
  let behind = side.hubIds.length;
  for (let polls = 1; polls <= timeoutMs / 10 && Date.now() < deadline; polls++) {
    const snap = await getJson<{ devices: Record<string, { state: { n?: number } }> }>(side.service, side.session, `${OS}/state/snapshot`);
    const seenAt = Date.now();
    behind = side.hubIds.filter((id, k) => snap.devices[id]?.state.n !== finalCounts[k]).length;
    if (behind === 0) return { appliedAt: seenAt, polls };
    await sleep(10);
  }
  throw new Error(`${side.label}: ${behind} lights still behind ${timeoutMs} ms after the flood`);
}

/**
 * Reads the bridge over HAP until each of its lights shows the last brightness and on/off its
 * device was sent (the counters `finalCounts`), at most `timeoutMs`.
 */
async function waitBridged(side: Side, finalCounts: number[], timeoutMs: number): Promise<{ current: number; of: number; afterMs: number | null }> {
  const t0 = Date.now();
  const index = new Map(side.hubIds.map((id, k) => [id.slice(0, 64), k]));
  let current = 0;
  let of = 0;
  for (let i = 0; i < timeoutMs / 100 && Date.now() - t0 < timeoutMs; i++) {
    const lights = await bridgedLights(side);
    current = 0;
    of = 0;
    for (const [serial, v] of lights) {
      const k = index.get(serial);
      if (k === undefined) continue;
      of++;
      const n = finalCounts[k]!;
      if (v.brightness === n % 101 && (v.on === (n % 2 === 0) || v.on === (n % 2 === 0 ? 1 : 0))) current++;
    }
    if (of > 0 && current === of) return { current, of, afterMs: Date.now() - t0 };
    await sleep(100);
  }
  return { current, of, afterMs: null };
}

async function setUpSide(ctx: BenchmarkContext, label: string, count: number, started: Side[], partial: { service?: ServiceHandle; driver?: AgentHandle }[]): Promise<Side> {
  const { settings } = ctx;
  const hapPort = await freePort();
  ctx.progress(`starting the ${label} hub (ACCESSORY_HUB=auto, HAP port ${hapPort}, LOG_LEVEL=${settings.logLevel})...`);
  const entry: { service?: ServiceHandle; driver?: AgentHandle } = {};
  partial.push(entry);
  const service = await startService({
    logLevel: settings.logLevel,
    nodeArgs: settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`] : [],
    // Both hubs as people run them, so that the comparison is the Apple Home switch alone.
    env: { ACCESSORY_HUB: 'auto', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_PORT: String(hapPort) },
  });
  entry.service = service;
  ctx.progress(`  ${label} hub pid ${service.pid} at ${service.baseUrl}`);
  const session = await service.login();
  const instanceId = label === ON ? 'homekit-on' : 'homekit-off';
  const driver = await startBenchDriver(service, instanceId);
  entry.driver = driver;

  const fresh = await status({ service, session });
  if (!fresh.enabled || fresh.state !== 'stopped' || fresh.usedFor?.homekit) throw new Error(`${label}: a fresh hub's accessory hub should be enabled and stopped, got ${JSON.stringify(fresh).slice(0, 300)}`);

  const discovery = await discoverDevices(service, session, driver, {
    instanceId,
    prefix: PREFIX,
    count,
    batch: 500,
    category: 'light',
    commands: ['turn_on', 'turn_off', 'toggle', { name: 'set_brightness', params: { brightness: { type: 'integer', minimum: 0, maximum: 100 } } }],
    properties: { model: 'BenchLight 2000', vendor: 'Bench' },
    state: { on: false, brightness: 0 },
  });
  const byDriverId = await hubIdsByDriverId(service, session);
  const driverIds = Array.from({ length: count }, (_, i) => `${PREFIX}${i}`);
  const hubIds = driverIds.map((d) => {
    const id = byDriverId.get(d);
    if (!id) throw new Error(`${label}: light ${d} not listed by GET /devices`);
    return id;
  });
  const rssAfterDiscovery = memoryOf(service.pid)?.rssBytes ?? null;
  ctx.progress(`  ${label}: ${format.int(count)} lights discovered in ${discovery.seconds.toFixed(1)} s; hub RSS ${MiB(rssAfterDiscovery)} MiB`);
  const side: Side = { label, service, session, driver, hubIds, driverIds, discoverySeconds: discovery.seconds, rssAfterDiscovery };

  if (label === ON) {
    const t0 = performance.now();
    const view = await postJson<HomeKitView>(service, session, `${OS}/accessory-hub/homekit`, { exposed: true });
    if (!view.exposed) throw new Error(`${label}: Apple Home not on after POST /accessory-hub/homekit: ${JSON.stringify(view).slice(0, 300)}`);
    let s = await status(side);
    for (let i = 0; i < HOMEBRIDGE_READY_MS / 200 && s.state !== 'running'; i++) {
      if (performance.now() - t0 > HOMEBRIDGE_READY_MS) break;
      await sleep(200);
      s = await status(side);
    }
    if (s.state !== 'running' || s.pid === undefined) throw new Error(`${label}: Homebridge not running ${HOMEBRIDGE_READY_MS} ms after Apple Home was turned on: ${JSON.stringify({ ...s, recentOutput: s.recentOutput?.slice(-10) })}`);
    const startSeconds = (performance.now() - t0) / 1000;
    // Running is Homebridge's "is running on port"; the plugin then bootstraps and registers its accessories.
    let shown = 0;
    for (let i = 0; i < HOMEBRIDGE_READY_MS / 250 && performance.now() - t0 < HOMEBRIDGE_READY_MS; i++) {
      shown = (await bridgedLights(side).catch(() => new Map())).size;
      if (shown >= HOMEKIT_TARGETS.shown) break;
      await sleep(250);
    }
    const shownSeconds = (performance.now() - t0) / 1000;
    const after = await homekitView(side);
    if (shown !== Math.min(HOMEKIT_TARGETS.shown, count) || after.shown !== Math.min(HOMEKIT_TARGETS.shown, count)) {
      throw new Error(`${label}: the bridge shows ${shown} lights over HAP (GET /accessory-hub/homekit: shown ${after.shown}, bridgeable ${after.bridgeable}), not ${Math.min(HOMEKIT_TARGETS.shown, count)}`);
    }
    side.homebridge = { pid: s.pid, restarts: s.restarts ?? 0, startSeconds, shownSeconds, rssAtStart: memoryOf(s.pid)?.rssBytes ?? null };
    ctx.progress(`  ${label}: Homebridge pid ${s.pid} running ${startSeconds.toFixed(1)} s after Apple Home was turned on; ${shown} lights over HAP after ${shownSeconds.toFixed(1)} s (bridgeable ${after.bridgeable}); RSS ${MiB(side.homebridge.rssAtStart)} MiB`);
  } else {
    const s = await status(side);
    const view = await homekitView(side);
    if (s.state !== 'stopped' || s.pid !== undefined || view.exposed) throw new Error(`${label}: Homebridge should not run with Apple Home off: ${JSON.stringify({ state: s.state, pid: s.pid, exposed: view.exposed })}`);
  }
  started.push(side);
  return side;
}

async function stateIngest(ctx: BenchmarkContext) {
  const { settings } = ctx;
  const count = integerSetting('BENCH_HOMEKIT_DEVICES', HOMEKIT_TARGETS.devices, 1, 10_000);
  const { floodSeconds } = settings.devices;
  const started: Side[] = [];
  const partial: { service?: ServiceHandle; driver?: AgentHandle }[] = [];
  try {
    const off = await setUpSide(ctx, OFF, count, started, partial);
    const on = await setUpSide(ctx, ON, count, started, partial);
    const sides: Record<string, Side> = { [OFF]: off, [ON]: on };
    const hb = on.homebridge!;
    const hbPids = homebridgePids(hb.pid);
    if (hbPids.length > 1) ctx.progress(`  Homebridge has child processes ${hbPids.slice(1).join(', ')}: counted as Homebridge`);
    const hbParticipants = (prefix: string): Participant[] => hbPids.map((pid, i) => ({ label: i === 0 ? `${prefix}homebridge` : `${prefix}homebridge child ${pid}`, pid }));
    const sumOf = (w: WindowFigures, prefix: string, key: 'cpuSeconds' | 'cpuCores' | 'rssBytes') => {
      const values = Object.entries(w[key]).filter(([k]) => k === `${prefix}homebridge` || k.startsWith(`${prefix}homebridge child `));
      return values.length === 0 || values.some(([, v]) => v === null) ? null : values.reduce((a, [, v]) => a + v!, 0);
    };

    const flood = (side: Side, seconds: number) => side.driver.call<FloodResult>('flood', { deviceIds: side.driverIds, seconds, light: true }, (seconds + 60) * 1000);
    if (settings.warmupSeconds > 0) {
      for (const label of SIDES) {
        const side = sides[label]!;
        ctx.progress(`  warm-up: ${label}, ${settings.warmupSeconds} s flood (discarded)`);
        const w = await flood(side, settings.warmupSeconds);
        await waitApplied(side, w.finalCounts, 120_000);
        if (label === ON) await waitBridged(side, w.finalCounts, HAP_CATCH_UP_MS);
      }
    }

    const rounds = await inRotation(SIDES, settings.rounds, async (label, round): Promise<SideRun> => {
      const side = sides[label]!;
      const other = sides[label === ON ? OFF : ON]!;
      const participants: Participant[] = [
        { label: 'service', pid: side.service.pid },
        { label: 'driver', pid: side.driver.pid },
        ...(label === ON ? hbParticipants('') : []),
        { label: 'idle service', pid: other.service.pid },
        { label: 'idle driver', pid: other.driver.pid },
        ...(label === OFF ? hbParticipants('idle ') : []),
      ];
      const errorsBefore = (await side.driver.call<{ statusErrors: number }>('stats', {})).statusErrors;
      ctx.progress(`  round ${round}/${settings.rounds}, ${label}: ${floodSeconds} s flood over ${format.int(count)} lights`);
      const r = await undisturbed(ctx, `${label} flood`, async (busy) => {
        const m = await measureWindow(
          participants,
          async () => {
            const f = await flood(side, floodSeconds);
            return { f, applied: await waitApplied(side, f.finalCounts, 120_000) };
          },
          busy,
        );
        return { ...m.result, window: m.window };
      });
      const driverStatusErrors = (await side.driver.call<{ statusErrors: number }>('stats', {})).statusErrors - errorsBefore;
      const problems: string[] = [];
      if (driverStatusErrors > 0) problems.push(`${driverStatusErrors} driver status errors`);
      let hap: SideRun['hap'] = null;
      if (label === ON) {
        hap = await waitBridged(side, r.f.finalCounts, HAP_CATCH_UP_MS);
        if (hap.of !== Math.min(HOMEKIT_TARGETS.shown, count)) problems.push(`the bridge showed ${hap.of} lights, not ${Math.min(HOMEKIT_TARGETS.shown, count)}`);
        if (hap.afterMs === null) problems.push(`${hap.of - hap.current} of the bridge's lights not current ${HAP_CATCH_UP_MS} ms after the flood was absorbed`);
        const s = await status(side);
        if (s.state !== 'running' || s.pid !== hb.pid || (s.restarts ?? 0) !== hb.restarts) problems.push(`Homebridge ${s.state}, pid ${s.pid ?? '-'} (was ${hb.pid}), ${s.restarts ?? 0} restarts (was ${hb.restarts})`);
      } else {
        const s = await status(side);
        if (s.state !== 'stopped') problems.push(`Homebridge ${s.state} on the hub with Apple Home off`);
      }
      const absorbSeconds = (r.applied.appliedAt - r.f.startedAt) / 1000;
      const srvCpu = r.window.cpuSeconds.service ?? null;
      const hbCpu = label === ON ? sumOf(r.window, '', 'cpuSeconds') : null;
      return {
        label,
        sent: r.f.sent,
        driverSendPerSecond: r.f.sent / r.f.sendSeconds,
        absorbSeconds,
        absorbedPerSecond: r.f.sent / absorbSeconds,
        lagAfterLastSendMs: r.applied.appliedAt - r.f.endedAt,
        polls: r.applied.polls,
        serviceCpuMicrosPerUpdate: srvCpu === null ? null : (srvCpu / r.f.sent) * 1e6,
        homebridgeCpuMicrosPerUpdate: hbCpu === null ? null : (hbCpu / r.f.sent) * 1e6,
        driverStatusErrors,
        hap,
        problem: problems.length > 0 ? `${label}: ${problems.join('; ')}` : null,
        window: r.window,
        attempts: r.attempts,
        disturbed: r.disturbed,
      };
    });

    // ---- report ---------------------------------------------------------------------------------
    const endStatus = await status(on);
    const streamDrops = (endStatus.recentOutput ?? []).filter((l) => l.includes('state stream ended')).length;
    let tooSlow = 0;
    try {
      tooSlow = fs.readFileSync(on.service.logPath, 'utf8').split('\n').filter((l) => l.includes('SSE client too slow')).length;
    } catch {
      // the log is read for a note only
    }
    const hbRssEnd = memoryOf(hb.pid)?.rssBytes ?? null;

    ctx.print(
      `\n### state ingest: ${format.int(count)} lights (Lightbulb with On and Brightness) from one bench driver on each hub, ACCESSORY_HUB=auto; ${ON}: Apple Home on, Homebridge pid ${hb.pid}, the bridge showing ${Math.min(HOMEKIT_TARGETS.shown, count)}; ${OFF}: Apple Home off, Homebridge stopped`,
    );
    ctx.print(`flood: STATE_UPDATEs {n, brightness: n % 101, on: n % 2 === 0} round-robin over every light, as fast as the driver's socket takes them, ${floodSeconds} s a window, ${settings.rounds} round(s), order rotating`);
    const f1 = format.fixed(1);
    const f2 = format.fixed(2);
    const rows = rounds.flatMap((r, i) =>
      r.order.map((label) => {
        const x = r.results[label]!;
        const w = x.window;
        const hbCores = label === ON ? sumOf(w, '', 'cpuCores') : null;
        const hbRss = label === ON ? sumOf(w, '', 'rssBytes') : null;
        return [
          String(i + 1),
          label,
          format.int(x.sent),
          format.int(x.driverSendPerSecond),
          format.int(x.absorbedPerSecond),
          format.int(x.lagAfterLastSendMs),
          f1(x.serviceCpuMicrosPerUpdate),
          f2(w.cpuCores.service ?? null),
          label === ON ? f2(hbCores) : '-',
          label === ON ? f1(x.homebridgeCpuMicrosPerUpdate) : '-',
          f2(w.cpuCores.driver ?? null),
          f2(w.otherCpuCores),
          MiB(w.rssBytes.service),
          label === ON ? MiB(hbRss) : '-',
        ];
      }),
    );
    ctx.print(
      table(
        ['round', 'side', 'sent', 'driver send/s', 'absorbed/s', 'lag ms', 'srv CPU µs/update', 'srv cores', 'Homebridge cores', 'Homebridge µs/update', 'driver cores', 'other cores', 'srv RSS MiB', 'Homebridge RSS MiB'],
        rows,
      ),
    );
    ctx.print("(absorbed/s: sent / time from the first send until GET /state/snapshot showed every light's last update; lag: after the driver's last send; 'other' excludes the idle hub, its driver and its Homebridge)");
    for (const [i, r] of rounds.entries()) {
      const x = r.results[ON];
      if (x?.hap) ctx.print(`round ${i + 1}: the bridge's ${x.hap.of} lights over HAP showed every last brightness and on/off ${x.hap.afterMs === null ? `— only ${x.hap.current} did within ${HAP_CATCH_UP_MS} ms` : `${x.hap.afterMs} ms after the snapshot did`}`);
      for (const [label, y] of Object.entries(r.results)) if (y.disturbed) ctx.print(`warning: round ${i + 1} ${label}: ${otherNote(y.window, settings.quietMaxBusyCores)}`);
    }
    ctx.print(
      `setup: ${OFF} ${format.int(count)} lights in ${off.discoverySeconds.toFixed(1)} s, ${ON} in ${on.discoverySeconds.toFixed(1)} s; Homebridge running ${hb.startSeconds.toFixed(1)} s after POST /accessory-hub/homekit {"exposed":true}, ${Math.min(HOMEKIT_TARGETS.shown, count)} lights over HAP after ${hb.shownSeconds.toFixed(1)} s`,
    );
    ctx.print(
      `RSS: hub after discovery ${OFF} ${MiB(off.rssAfterDiscovery)} MiB, ${ON} ${MiB(on.rssAfterDiscovery)} MiB (before Apple Home); Homebridge ${MiB(hb.rssAtStart)} MiB once it showed its lights, ${MiB(hbRssEnd)} MiB at the end; plugin stream drops in Homebridge's last output: ${streamDrops}; "SSE client too slow" in the hub's log: ${tooSlow}`,
    );

    const offTarget = count !== HOMEKIT_TARGETS.devices ? [`${format.int(count)} devices, not ${format.int(HOMEKIT_TARGETS.devices)}`] : [];
    const ingest: TargetResult = { kind: 'ratio', ...ratioResult(HOMEKIT_TARGETS.ingest, rounds, (x) => x.absorbedPerSecond, (x) => x.problem) };
    if (offTarget.length > 0) Object.assign(ingest, { verdict: 'FAIL', reasons: [...ingest.reasons, ...offTarget] });
    ctx.print(targetLine(ingest));

    return {
      passed: ingest.verdict === 'PASS',
      devices: count,
      floodSeconds,
      targets: { ingest },
      setup: {
        [OFF]: { discoverySeconds: off.discoverySeconds, rssAfterDiscovery: off.rssAfterDiscovery },
        [ON]: { discoverySeconds: on.discoverySeconds, rssAfterDiscovery: on.rssAfterDiscovery, homebridge: { ...hb, pids: hbPids, rssEnd: hbRssEnd } },
      },
      notes: { streamDropsInRecentOutput: streamDrops, sseTooSlowLines: tooSlow },
      rounds,
    };
  } finally {
    for (const entry of partial.reverse()) {
      await entry.driver?.stop();
      if (!entry.service) continue;
      await reportIfExited(entry.service, ctx.progress);
      ctx.progress(`stopping the hub (pid ${entry.service.pid})...`);
      await entry.service.stop();
    }
    const hbPid = started.find((s) => s.homebridge)?.homebridge?.pid;
    if (hbPid !== undefined && fs.existsSync(`/proc/${hbPid}`)) ctx.progress(`warning: Homebridge (pid ${hbPid}) still there after its hub stopped`);
  }
}

async function run(ctx: BenchmarkContext): Promise<BenchmarkOutcome> {
  const cases = selectCases('homekit', CASES, ctx.caseFilter);
  const results: Record<string, unknown> = { targets: HOMEKIT_TARGETS };
  let passed = true;
  for (const c of cases) {
    ctx.progress(`homekit:${c.name}: ${c.what}`);
    const r = await stateIngest(ctx);
    results[c.name] = r;
    passed &&= r.passed;
  }
  return { passed, results };
}

export const homekitBenchmark: Benchmark = {
  name: 'homekit',
  description: 'state ingest at 1,000 lights with the Apple Home bridge (Homebridge, 149 lights shown) on, against the same hub with it off, in the same run',
  run,
};
