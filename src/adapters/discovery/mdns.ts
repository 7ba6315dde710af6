import { createSocket } from 'node:dgram';
import makeMdns from 'multicast-dns';
import type { Answer } from 'dns-packet';
import type { Clock, Timers } from '../../platform/clock.js';
import { bind, waitFor } from './ssdp.js';

/**
 * DNS-SD browsing over mDNS (RFC 6762, RFC 6763) with `multicast-dns`: one-shot queries (§5.1)
 * from an ephemeral port, so responders answer unicast to it; PTR for each service type, then
 * SRV, TXT and A for whatever the answers and their additional records left out.
 */

export interface MdnsBrowseOptions {
  /** e.g. `_googlecast._tcp` (`.local` implied). */
  serviceTypes: string[];
  timeoutMs: number;
  /** Local interface address to send from and listen on; default all. */
  bindAddress?: string;
  /** Default the mDNS group 224.0.0.251:5353; a unicast address is allowed (tests use loopback). */
  destination?: { address: string; port: number };
  signal?: AbortSignal;
  /** What the browse's time-out is measured on, and its waits run on. */
  clock: Clock;
  timers: Timers;
}

export interface MdnsService {
  serviceType: string;
  /** The instance's own name: the first label of its PTR target, unescaped. */
  instanceName: string;
  fqdn: string;
  /** SRV target host name. */
  host: string;
  port: number;
  /** IPv4 addresses first, then IPv6. */
  addresses: string[];
  txt: Record<string, string>;
  from: { address: string; port: number };
}

export const MDNS_GROUP = { address: '224.0.0.251', port: 5353 } as const;
/** Follow-up queries for missing records go out at most this often, this many times. */
const FOLLOW_UP_EVERY_MS = 150;
const MAX_FOLLOW_UPS = 5;

const lower = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** `Living Room TV._googlecast._tcp.local` → `Living Room TV` (DNS escapes `\.` and `\032` undone). */
function instanceLabel(fqdn: string, serviceName: string): string {
  const raw = fqdn.slice(0, fqdn.length - serviceName.length - 1);
  return raw.replace(/\\(\d{3})/g, (_, d: string) => String.fromCharCode(Number(d))).replace(/\\(.)/g, '$1');
}

function txtRecord(data: unknown): Record<string, string> {
  const parts = Array.isArray(data) ? data : [data];
  const out: Record<string, string> = {};
  for (const part of parts) {
    const text = Buffer.isBuffer(part) ? part.toString('utf8') : typeof part === 'string' ? part : '';
    if (text === '') continue;
    const eq = text.indexOf('=');
    if (eq === 0) continue;
    if (eq < 0) out[text.toLowerCase()] ??= '';
    else out[text.slice(0, eq).toLowerCase()] ??= text.slice(eq + 1);
  }
  return out;
}

interface PendingInstance {
  serviceType: string;
  fqdn: string;
  srv?: { host: string; port: number };
  txt?: Record<string, string>;
  from: { address: string; port: number };
}

/** Browses the service types; one service per instance name. */
export async function mdnsBrowse(options: MdnsBrowseOptions): Promise<MdnsService[]> {
  const destination = options.destination ?? MDNS_GROUP;
  const socket = createSocket({ type: 'udp4', reuseAddr: false });
  await bind(socket, options.bindAddress);
  if (options.bindAddress && destination.address === MDNS_GROUP.address) socket.setMulticastInterface(options.bindAddress);
  // Our own socket, bound already: the library encodes, decodes and sends; it joins no group.
  const mdns = makeMdns({ socket, multicast: false, bind: false, port: 0 });
  mdns.on('error', () => undefined);
  mdns.on('warning', () => undefined);

  const types = options.serviceTypes.map((t) => ({ type: t, name: `${t}.local` }));
  const instances = new Map<string, PendingInstance>();
  const addresses = new Map<string, string[]>();

  const addAddress = (host: string, address: string, v6: boolean) => {
    const list = addresses.get(host) ?? [];
    if (!list.includes(address)) {
      if (v6) list.push(address);
      else list.splice(list.filter((a) => !a.includes(':')).length, 0, address);
    }
    addresses.set(host, list);
  };

  mdns.on('response', (packet, rinfo) => {
    const records: Answer[] = [...(packet.answers ?? []), ...(packet.additionals ?? [])];
    for (const r of records) {
      const name = lower(r.name);
      if (r.type === 'PTR') {
        const type = types.find((t) => lower(t.name) === name);
        if (!type || typeof r.data !== 'string') continue;
        const fqdn = lower(r.data);
        if (!instances.has(fqdn)) instances.set(fqdn, { serviceType: type.type, fqdn: r.data.replace(/\.$/, ''), from: { address: rinfo.address, port: rinfo.port } });
      }
    }
    for (const r of records) {
      const name = lower(r.name);
      if (r.type === 'SRV') {
        const instance = instances.get(name);
        const data = r.data as { target?: string; port?: number };
        if (instance && typeof data.target === 'string' && typeof data.port === 'number') instance.srv = { host: lower(data.target), port: data.port };
      } else if (r.type === 'TXT') {
        const instance = instances.get(name);
        if (instance) instance.txt = txtRecord(r.data);
      } else if (r.type === 'A' && typeof r.data === 'string') {
        addAddress(name, r.data, false);
      } else if (r.type === 'AAAA' && typeof r.data === 'string') {
        addAddress(name, r.data, true);
      }
    }
  });

  const send = (questions: Array<{ name: string; type: 'PTR' | 'SRV' | 'TXT' | 'A' }>) => {
    if (questions.length > 0) mdns.query({ questions }, { port: destination.port, address: destination.address } as never, () => undefined);
  };

  try {
    send(types.map((t) => ({ name: t.name, type: 'PTR' as const })));
    const { clock, timers } = options;
    const started = clock.now();
    for (let round = 0; round < MAX_FOLLOW_UPS && !options.signal?.aborted; round++) {
      const left = options.timeoutMs - (clock.now() - started);
      if (left <= 0) break;
      await waitFor(timers, Math.min(FOLLOW_UP_EVERY_MS, left), options.signal);
      // Ask for what the answers did not carry: an instance's SRV/TXT, a host's address.
      const missing: Array<{ name: string; type: 'SRV' | 'TXT' | 'A' }> = [];
      for (const instance of instances.values()) {
        if (!instance.srv) missing.push({ name: instance.fqdn, type: 'SRV' });
        if (!instance.txt) missing.push({ name: instance.fqdn, type: 'TXT' });
        if (instance.srv && !addresses.has(instance.srv.host)) missing.push({ name: instance.srv.host, type: 'A' });
      }
      if (round === 0 && instances.size === 0) send(types.map((t) => ({ name: t.name, type: 'PTR' as const })));
      send(missing);
    }
    await waitFor(timers, Math.max(0, options.timeoutMs - (clock.now() - started)), options.signal);
  } finally {
    await new Promise<void>((resolve) => mdns.destroy(() => resolve()));
  }

  const out: MdnsService[] = [];
  for (const instance of instances.values()) {
    if (!instance.srv) continue;
    const serviceName = `${instance.serviceType}.local`;
    out.push({
      serviceType: instance.serviceType,
      instanceName: instanceLabel(instance.fqdn, serviceName),
      fqdn: instance.fqdn,
      host: instance.srv.host,
      port: instance.srv.port,
      addresses: addresses.get(instance.srv.host) ?? [],
      txt: instance.txt ?? {},
      from: instance.from,
    });
  }
  return out;
}
