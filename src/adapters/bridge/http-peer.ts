import type { BridgePeerClient, PeerAnswer } from '../../domain/fleet/ports.js';

/**
 * Another hub's bridge routes over HTTP (its OS API under /v1/os), presenting the bridge token it
 * issued as a bearer. Every call is bounded: reads by `requestTimeoutMs`, commands by
 * `commandTimeoutMs` (longer than the peer's own action time-out, so its 504 arrives first).
 */
export class HttpBridgePeer implements BridgePeerClient {
  constructor(private readonly options: { requestTimeoutMs: number; commandTimeoutMs: number }) {}

  health(peerUrl: string, token: string) {
    return this.call<{ hubId: string; version: string }>(peerUrl, token, 'GET', '/bridge/health');
  }

  devices(peerUrl: string, token: string) {
    return this.call<{ hubId: string; devices: never[] }>(peerUrl, token, 'GET', '/bridge/devices');
  }

  states(peerUrl: string, token: string) {
    return this.call<{ devices: Record<string, { state: Record<string, unknown>; online: boolean }> }>(peerUrl, token, 'GET', '/bridge/devices/state');
  }

  command(peerUrl: string, token: string, fleetDeviceId: string, command: string, params: Record<string, unknown>) {
    return this.call<{ ok: true; result?: unknown }>(peerUrl, token, 'POST', `/bridge/devices/${encodeURIComponent(fleetDeviceId)}/command`, { command, params }, this.options.commandTimeoutMs);
  }

  private async call<T>(peerUrl: string, token: string, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = this.options.requestTimeoutMs): Promise<PeerAnswer<T>> {
    let res: Response;
    try {
      res = await fetch(`${peerUrl}/v1/os${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      if (e.name === 'TimeoutError' || e.name === 'AbortError') return { ok: false, kind: 'timeout' };
      return { ok: false, kind: 'unreachable', reason: e.cause?.code ?? e.cause?.message ?? e.message };
    }
    let parsed: unknown;
    try {
      parsed = await res.json();
    } catch {
      return res.ok ? { ok: false, kind: 'unreachable', reason: 'the answer is not JSON: is it a hub?' } : { ok: false, kind: 'refused', status: res.status, code: `HTTP_${res.status}`, message: res.statusText };
    }
    if (!res.ok) {
      const error = (parsed as { error?: { code?: string; message?: string } }).error;
      return { ok: false, kind: 'refused', status: res.status, code: error?.code ?? `HTTP_${res.status}`, message: error?.message ?? res.statusText };
    }
    return { ok: true, value: parsed as T };
  }
}
