import { createSocket } from 'node:dgram';

export interface SsdpDevice {
  st: string;
  usn: string;
  location: string;
  server?: string;
}

export interface SsdpResponder {
  readonly address: '127.0.0.1';
  readonly port: number;
  /** Every M-SEARCH received, as text. */
  readonly requests: string[];
  setDevices(devices: SsdpDevice[]): void;
  /** Sends a datagram to whoever searched last (a rogue answer). */
  sendRaw(text: string): void;
  close(): Promise<void>;
}

/**
 * An SSDP responder on 127.0.0.1 for tests, written from UPnP Device Architecture 1.1 §1.3.3:
 * a valid M-SEARCH (`MAN: "ssdp:discover"`) gets one unicast answer per device whose ST matches
 * (or every device for `ssdp:all`), with CACHE-CONTROL, EXT, LOCATION, SERVER, ST and USN.
 */
export async function startSsdpResponder(options: { devices: SsdpDevice[] }): Promise<SsdpResponder> {
  let devices = options.devices;
  const requests: string[] = [];
  let lastSearcher: { address: string; port: number } | null = null;
  const socket = createSocket('udp4');
  socket.on('message', (datagram, rinfo) => {
    const text = datagram.toString('utf8');
    requests.push(text);
    const lines = text.split('\r\n');
    if (lines[0] !== 'M-SEARCH * HTTP/1.1') return;
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toUpperCase(), line.slice(colon + 1).trim());
    }
    if (headers.get('MAN') !== '"ssdp:discover"' || !headers.get('ST')) return;
    lastSearcher = { address: rinfo.address, port: rinfo.port };
    const st = headers.get('ST')!;
    for (const device of devices) {
      if (st !== 'ssdp:all' && st !== device.st) continue;
      const answer = [
        'HTTP/1.1 200 OK',
        'CACHE-CONTROL: max-age=1800',
        'EXT:',
        `LOCATION: ${device.location}`,
        `SERVER: ${device.server ?? 'Linux/4.9 UPnP/1.1 TestDevice/1.0'}`,
        `ST: ${device.st}`,
        `USN: ${device.usn}`,
        '',
        '',
      ].join('\r\n');
      socket.send(answer, rinfo.port, rinfo.address);
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: '127.0.0.1',
    port: socket.address().port,
    requests,
    setDevices(next) {
      devices = next;
    },
    sendRaw(text) {
      if (lastSearcher) socket.send(text, lastSearcher.port, lastSearcher.address);
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
