import { XMLParser } from 'fast-xml-parser';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import type { DiscoveredEndpoint } from '../../domain/media/model.js';
import type { EndpointDiscovery } from '../../domain/media/ports.js';
import { mdnsBrowse, type MdnsService } from './mdns.js';
import { ssdpSearch, type SsdpResponse } from './ssdp.js';

export const ROKU_ST = 'roku:ecp';
export const MEDIA_RENDERER_ST = 'urn:schemas-upnp-org:device:MediaRenderer:1';
export const GOOGLECAST_SERVICE = '_googlecast._tcp';
export const ANDROIDTV_REMOTE_SERVICE = '_androidtvremote2._tcp';

export interface MediaDiscoveryOptions {
  /** Local interface address to send from and listen on; undefined: the OS's choice. */
  interfaceAddress: string | undefined;
  ssdp: { address: string; port: number };
  mdns: { address: string; port: number };
  /** Asks a Roku for its identity and name (the Roku integration's probe). */
  describeRoku(host: string, port: number): Promise<DiscoveredEndpoint>;
  /** Longest wait for the descriptions asked after the listening (ms). */
  describeTimeoutMs?: number;
  /** What the searches' time-outs and the descriptions' bounds are measured on. */
  clock: Clock;
  timers: Timers;
  log: { debug(obj: object, msg: string): void };
}

/** UPnP device descriptions: plain XML, no entities, text kept as text. */
const descriptionParser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, processEntities: true, htmlEntities: false });

function hostPort(location: string): { host: string; port: number } | null {
  try {
    const url = new URL(location);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
  } catch {
    return null;
  }
}

/** `uuid:roku:ecp:X0TEST000001` → `X0TEST000001`; `uuid:abc::urn:…` → `abc`. */
function usnKey(usn: string): string {
  const roku = /^uuid:roku:ecp:(.+)$/i.exec(usn);
  if (roku) return roku[1]!;
  return usn.replace(/^uuid:/i, '').split('::')[0]!;
}

/**
 * The LAN discovery of media endpoints: one SSDP search (Roku ECP, UPnP MediaRenderer) and one
 * mDNS browse (Google Cast, Android TV Remote v2) at the same time, both bounded by the round's
 * time-out; then, within a short extra bound, each Roku is asked its name (device-info) and each
 * renderer's description is read. A device that does not describe itself keeps what discovery said.
 */
export class MediaDiscovery implements EndpointDiscovery {
  constructor(private readonly options: MediaDiscoveryOptions) {}

  async discover({ timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal }): Promise<DiscoveredEndpoint[]> {
    const { clock, timers } = this.options;
    const bind = this.options.interfaceAddress === undefined ? {} : { bindAddress: this.options.interfaceAddress };
    const [ssdp, mdns] = await Promise.all([
      ssdpSearch({ searchTargets: [ROKU_ST, MEDIA_RENDERER_ST], timeoutMs, destination: this.options.ssdp, timers, ...bind, ...(signal ? { signal } : {}) }),
      mdnsBrowse({ serviceTypes: [GOOGLECAST_SERVICE, ANDROIDTV_REMOTE_SERVICE], timeoutMs, destination: this.options.mdns, clock, timers, ...bind, ...(signal ? { signal } : {}) }),
    ]);
    const describeBound = Math.min(this.options.describeTimeoutMs ?? 1500, timeoutMs);
    const fromSsdp = await this.fromSsdp(ssdp, describeBound);
    const fromMdns = this.fromMdns(mdns);
    // A Roku TV that also answers as a renderer is one endpoint: the Roku.
    const rokuHosts = new Set(fromSsdp.filter((e) => e.kind === 'roku').map((e) => e.host));
    return [...fromSsdp.filter((e) => e.kind !== 'dlna' || !rokuHosts.has(e.host)), ...fromMdns];
  }

  private async fromSsdp(responses: SsdpResponse[], boundMs: number): Promise<DiscoveredEndpoint[]> {
    const found = new Map<string, DiscoveredEndpoint>();
    for (const r of responses) {
      const at = hostPort(r.location);
      if (!at) continue;
      const roku = r.st.toLowerCase() === ROKU_ST;
      const kind = roku ? 'roku' : 'dlna';
      const key = usnKey(r.usn);
      found.set(`${kind}:${key}`, {
        kind,
        key,
        name: roku ? `Roku ${key}` : r.server ?? `Media renderer at ${at.host}`,
        host: at.host,
        port: at.port,
        model: null,
        origin: 'ssdp',
        details: { location: r.location, usn: r.usn, ...(r.server ? { server: r.server } : {}) },
      });
    }
    const described = await Promise.all(
      [...found.values()].map((endpoint) =>
        withBound(this.options.timers, endpoint.kind === 'roku' ? this.describeRoku(endpoint) : this.describeRenderer(endpoint), boundMs).catch((err: unknown) => {
          this.options.log.debug({ endpoint: `${endpoint.kind}:${endpoint.key}`, err: err instanceof Error ? err.message : String(err) }, 'endpoint did not describe itself');
          return endpoint;
        }),
      ),
    );
    return described;
  }

  private async describeRoku(endpoint: DiscoveredEndpoint): Promise<DiscoveredEndpoint> {
    const info = await this.options.describeRoku(endpoint.host, endpoint.port);
    // The serial number is the identity either way; device-info is what the device says of itself.
    return { ...info, key: endpoint.key, origin: 'ssdp', details: { ...endpoint.details, ...info.details } };
  }

  private async describeRenderer(endpoint: DiscoveredEndpoint): Promise<DiscoveredEndpoint> {
    const location = endpoint.details.location!;
    // The request itself is aborted after 1.5 s (as AbortSignal.timeout would, but on the hub's timers).
    const abort = new AbortController();
    const timer = this.options.timers.setTimeout(() => abort.abort(new DOMException('the description took over 1500 ms', 'TimeoutError')), 1500);
    let text: string;
    try {
      const response = await fetch(location, { signal: abort.signal, redirect: 'error' });
      if (!response.ok) throw new Error(`description answered HTTP ${response.status}`);
      text = await response.text();
    } finally {
      this.options.timers.clearTimeout(timer);
    }
    if (text.length > 256 * 1024) throw new Error('description is too large');
    const doc = descriptionParser.parse(text) as { root?: { device?: Record<string, unknown> } };
    const device = doc.root?.device ?? {};
    const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
    return {
      ...endpoint,
      name: str(device.friendlyName) ?? endpoint.name,
      model: str(device.modelName) ?? null,
      details: { ...endpoint.details, ...(str(device.manufacturer) ? { manufacturer: str(device.manufacturer)! } : {}) },
    };
  }

  private fromMdns(services: MdnsService[]): DiscoveredEndpoint[] {
    const androidTvs = new Map<string, DiscoveredEndpoint>();
    const casts: MdnsService[] = [];
    for (const s of services) {
      const address = s.addresses[0] ?? s.host;
      if (s.serviceType.startsWith(ANDROIDTV_REMOTE_SERVICE)) {
        const key = s.txt.bt ? s.txt.bt.toLowerCase() : s.instanceName;
        androidTvs.set(address, {
          kind: 'androidtv',
          key,
          name: s.instanceName,
          host: address,
          port: s.port,
          model: null,
          origin: 'mdns',
          details: { service: s.fqdn, ...(s.txt.bt ? { bt: s.txt.bt } : {}) },
        });
      } else if (s.serviceType.startsWith(GOOGLECAST_SERVICE)) {
        casts.push(s);
      }
    }
    const out: DiscoveredEndpoint[] = [];
    for (const s of casts) {
      const address = s.addresses[0] ?? s.host;
      const tv = androidTvs.get(address);
      if (tv) {
        // A Google TV answers both: one endpoint, paired and controlled over Remote v2.
        tv.model = s.txt.md ?? tv.model;
        tv.details = { ...tv.details, ...(s.txt.id ? { castId: s.txt.id } : {}), ...(s.txt.md ? { castModel: s.txt.md } : {}) };
        continue;
      }
      out.push({
        kind: 'cast',
        key: s.txt.id ?? s.instanceName,
        name: s.txt.fn ?? s.instanceName,
        host: address,
        port: s.port,
        model: s.txt.md ?? null,
        origin: 'mdns',
        details: { service: s.fqdn },
      });
    }
    return [...androidTvs.values(), ...out];
  }
}

function withBound<T>(timers: Timers, work: Promise<T>, ms: number): Promise<T> {
  let timer: TimerHandle | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = timers.setTimeout(() => reject(new Error(`no description within ${ms} ms`)), ms);
  });
  return Promise.race([work, bound]).finally(() => timers.clearTimeout(timer));
}
