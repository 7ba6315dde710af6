import type { HapAccessory, HapClient } from '../../domain/accessory-hub/ports.js';

/**
 * HAP's HTTP API of a Homebridge started in insecure mode (`-I`): `GET /accessories` and
 * `PUT /characteristics`, authorized by the bridge PIN, on loopback only. Calls are bounded.
 */
export class HttpHapClient implements HapClient {
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
