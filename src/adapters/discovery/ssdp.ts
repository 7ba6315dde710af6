import { createSocket, type Socket } from 'node:dgram';
import type { Timers } from '../../platform/clock.js';

/**
 * SSDP search (UPnP Device Architecture 1.1, §1.3.2): M-SEARCH datagrams to the SSDP group, or
 * to one address (unicast M-SEARCH), from an ephemeral port on the configured interface; answers
 * come back unicast to that port. Written on `node:dgram`: the SSDP packages (`@achingbrain/ssdp`,
 * `node-ssdp`) join the destination as a multicast group (which refuses a unicast destination),
 * resolve every answer's LOCATION themselves and keep a process-wide cache across searches, and
 * `node-ssdp` is unmaintained since 2019 with a vulnerable `ip` dependency. The protocol here is one
 * datagram out and header lines back.
 */

export interface SsdpSearchOptions {
  searchTargets: string[];
  /** The whole search settles by then. */
  timeoutMs: number;
  /** Local interface address to send from (multicast goes out of that interface only); default all. */
  bindAddress?: string;
  /** Default the SSDP group 239.255.255.250:1900; a unicast address is allowed (tests use loopback). */
  destination?: { address: string; port: number };
  /** MX header: seconds a device may wait before answering (default 1, at most the time-out). */
  mx?: number;
  signal?: AbortSignal;
  /** What the search's waits run on. */
  timers: Timers;
}

export interface SsdpResponse {
  st: string;
  usn: string;
  location: string;
  server?: string;
  /** Every header, names in lower case. */
  headers: Record<string, string>;
  from: { address: string; port: number };
}

export const SSDP_GROUP = { address: '239.255.255.250', port: 1900 } as const;
const MAX_DATAGRAM_BYTES = 8192;
/** UDP is lossy: each search goes out again after this long (once). */
const REPEAT_AFTER_MS = 250;

/** An SSDP answer (`HTTP/1.1 200 OK` + headers) as headers, or null when it is none. */
export function parseSsdpResponse(datagram: Buffer): Record<string, string> | null {
  if (datagram.length > MAX_DATAGRAM_BYTES) return null;
  const lines = datagram.toString('utf8').split(/\r?\n/);
  if (!/^HTTP\/1\.[01]\s+200\b/i.test(lines[0] ?? '')) return null;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    if (line.trim() === '') break;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

export function mSearch(target: string, destination: { address: string; port: number }, mx: number): Buffer {
  return Buffer.from(
    ['M-SEARCH * HTTP/1.1', `HOST: ${destination.address}:${destination.port}`, 'MAN: "ssdp:discover"', `MX: ${mx}`, `ST: ${target}`, 'USER-AGENT: Node.js UPnP/1.1 HomeControlService/1', '', ''].join('\r\n'),
  );
}

function isMulticast(address: string): boolean {
  const first = Number(address.split('.')[0]);
  return first >= 224 && first <= 239;
}

/** Searches for each target; one answer per (USN, ST), the first one wins. */
export async function ssdpSearch(options: SsdpSearchOptions): Promise<SsdpResponse[]> {
  const destination = options.destination ?? SSDP_GROUP;
  const mx = Math.max(1, Math.min(options.mx ?? 1, Math.floor(options.timeoutMs / 1000) || 1));
  const socket = createSocket({ type: 'udp4', reuseAddr: false });
  const found = new Map<string, SsdpResponse>();
  const wanted = new Set(options.searchTargets.map((t) => t.toLowerCase()));
  // Searching ssdp:all asks every device for everything it is: each answer names its own ST.
  const anyTarget = wanted.has('ssdp:all');

  socket.on('message', (datagram, rinfo) => {
    const headers = parseSsdpResponse(datagram);
    if (!headers) return;
    const { st, usn, location } = headers;
    if (!st || !usn || !location) return;
    // A device answering another target than asked is not what this search is for (unless all were asked).
    if (!anyTarget && !wanted.has(st.toLowerCase())) return;
    const key = `${usn}\u0000${st}`;
    if (found.has(key)) return;
    found.set(key, { st, usn, location, ...(headers.server ? { server: headers.server } : {}), headers, from: { address: rinfo.address, port: rinfo.port } });
  });

  await bind(socket, options.bindAddress);
  try {
    if (isMulticast(destination.address)) {
      socket.setMulticastTTL(2);
      if (options.bindAddress) socket.setMulticastInterface(options.bindAddress);
    }
    const sendAll = () => {
      for (const target of options.searchTargets) socket.send(mSearch(target, destination, mx), destination.port, destination.address, () => undefined);
    };
    sendAll();
    await waitFor(options.timers, Math.min(REPEAT_AFTER_MS, options.timeoutMs), options.signal);
    if (!options.signal?.aborted) sendAll();
    await waitFor(options.timers, Math.max(0, options.timeoutMs - REPEAT_AFTER_MS), options.signal);
  } finally {
    socket.close();
  }
  return [...found.values()];
}

/** Binds an ephemeral port on the address; a bad address (not this machine's) is a clear error. */
export function bind(socket: Socket, address: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error) => {
      socket.close();
      reject(new Error(`cannot listen on ${address ?? 'all interfaces'}: ${err.message}`));
    };
    socket.once('error', failed);
    socket.bind({ port: 0, ...(address ? { address } : {}), exclusive: true }, () => {
      socket.off('error', failed);
      // Later socket errors (an ICMP unreachable after a send) must not crash anything.
      socket.on('error', () => undefined);
      resolve();
    });
  });
}

/** Resolves after `ms` on `timers`, or at once when the signal aborts. */
export function waitFor(timers: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      timers.clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = timers.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
