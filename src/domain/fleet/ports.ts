import type { FleetDevice } from './model.js';

/** How the link's token is kept: sealed with this hub's secret key (the secrets adapter implements it). */
export type { SecretBox } from '../../platform/secret-box.js';

/** Why a call to a peer hub failed. */
export type PeerFailure =
  | { kind: 'unreachable'; reason: string }
  | { kind: 'timeout' }
  /** The peer answered with an error: its HTTP status and error body. */
  | { kind: 'refused'; status: number; code: string; message: string };

export type PeerAnswer<T> = { ok: true; value: T } | ({ ok: false } & PeerFailure);

/** Another hub's bridge routes, as this hub calls them (the HTTP adapter implements it). */
export interface BridgePeerClient {
  health(peerUrl: string, token: string): Promise<PeerAnswer<{ hubId: string; version: string }>>;
  devices(peerUrl: string, token: string): Promise<PeerAnswer<{ hubId: string; devices: FleetDevice[] }>>;
  states(peerUrl: string, token: string): Promise<PeerAnswer<{ devices: Record<string, { state: Record<string, unknown>; online: boolean }> }>>;
  command(peerUrl: string, token: string, fleetDeviceId: string, command: string, params: Record<string, unknown>): Promise<PeerAnswer<{ ok: true; result?: unknown }>>;
}
