import net from 'node:net';
import type { HapAccessory, HapClient } from '../../domain/accessory-hub/ports.js';

/**
 * HAP's HTTP API of a Homebridge started in insecure mode (`-I`): `GET /accessories` and
 * `PUT /characteristics`, authorized by the bridge PIN, on loopback only. Calls are bounded.
 */
export class HttpHapClient implements HapClient {
  subscribe = subscribeHapEvents;

  constructor(private readonly timeoutMs = 3000) {}

  async accessories(port: number, pin: string): Promise<HapAccessory[]> {
    const res = await fetch(`http://127.0.0.1:${port}/accessories`, { headers: { authorization: pin }, signal: AbortSignal.timeout(this.timeoutMs) });
    if (!res.ok) throw new Error(`HAP answered ${res.status}`);
    return ((await res.json()) as { accessories: HapAccessory[] }).accessories;
  }

  async write(port: number, pin: string, writes: Array<{ aid: number; iid: number; value: unknown }>): Promise<void> {
    const res = await fetch(`http://127.0.0.1:${port}/characteristics`, {
      method: 'PUT',
      headers: { authorization: pin, 'content-type': 'application/json' },
      body: JSON.stringify({ characteristics: writes }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    // 204: every write done; 207: per-characteristic statuses.
    if (res.status === 204) return;
    const body = (await res.json().catch(() => ({}))) as { characteristics?: Array<{ status?: number }> };
    const failed = body.characteristics?.find((c) => c.status && c.status !== 0);
    if (!res.ok || failed) throw new Error(`HAP refused the write (${failed?.status ?? res.status})`);
  }
}

/**
 * HAP characteristic events (insecure mode): one keep-alive connection that asked `ev: true` for
 * the characteristics; Homebridge then pushes `EVENT/1.0 200 OK` messages on it. `onClose` tells
 * the caller to subscribe again (Homebridge restarted, or the connection dropped).
 */
export function subscribeHapEvents(
  port: number,
  pin: string,
  ids: Array<{ aid: number; iid: number }>,
  onEvent: (changes: Array<{ aid: number; iid: number; value: unknown }>) => void,
  onClose: () => void,
): Promise<{ close(): void }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  let closed = false;
  const handle = {
    close() {
      closed = true;
      socket.destroy();
    },
  };
  let subscribed!: (value: { close(): void }) => void;
  let refused!: (err: Error) => void;
  const answered = new Promise<{ close(): void }>((resolve, reject) => {
    subscribed = resolve;
    refused = reject;
  });
  let buffer = Buffer.alloc(0);
  const body = JSON.stringify({ characteristics: ids.map((id) => ({ ...id, ev: true })) });
  socket.setNoDelay(true);
  socket.on('connect', () => {
    socket.write(`PUT /characteristics HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${pin}\r\nContent-Type: application/hap+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n${body}`);
  });
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.subarray(0, end).toString('latin1');
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      const payload = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      buffer = buffer.subarray(end + 4 + length);
      if (head.startsWith('HTTP/')) {
        // The answer to the subscription itself: from now on, events come.
        const status = Number(head.split(' ')[1]);
        if (status >= 200 && status < 300) subscribed(handle);
        else refused(new Error(`HAP refused the event subscription (${status})`));
        continue;
      }
      if (!head.startsWith('EVENT/')) continue;
      try {
        const parsed = JSON.parse(payload) as { characteristics?: Array<{ aid: number; iid: number; value: unknown }> };
        if (parsed.characteristics?.length) onEvent(parsed.characteristics);
      } catch {
        // Not JSON: nothing to tell.
      }
    }
  });
  const finish = () => {
    refused(new Error('the connection to HAP ended'));
    if (closed) return;
    closed = true;
    onClose();
  };
  socket.on('error', finish);
  socket.on('close', finish);
  socket.setTimeout(5000, () => {
    // Only until the subscription is answered; an idle event connection is normal.
    refused(new Error('HAP did not answer the event subscription'));
  });
  void answered.then(
    () => socket.setTimeout(0),
    () => handle.close(),
  );
  return answered;
}
