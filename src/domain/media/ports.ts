import type { BuiltInDriver } from '../drivers/builtin.js';
import type { CastPairing, DiscoveredEndpoint, EndpointKind, MediaEndpoint } from './model.js';

/**
 * What the media domain asks of the network, implemented in src/adapters and wired by the
 * composition root: discovery, and one built-in integration per endpoint kind it controls.
 */

/** A discovery round over the LAN (SSDP and mDNS), bounded by `timeoutMs`. */
export interface EndpointDiscovery {
  discover(options: { timeoutMs: number; signal?: AbortSignal }): Promise<DiscoveredEndpoint[]>;
}

/**
 * A built-in integration that controls the endpoints of one kind: each endpoint it controls is a
 * logical device of its driver (`driverDeviceId` = the endpoint id), so commands, state and
 * presence take the driver path like every other device's.
 */
export interface EndpointController extends BuiltInDriver {
  readonly kind: EndpointKind;
  /** Controls the endpoint (again, after a change of address, label or pairing). */
  control(endpoint: MediaEndpoint): void;
  /** Stops controlling it: its device is removed from the roster (and comes back if controlled again). */
  release(endpointId: string): void;
  /** Asks an address whether an endpoint of this kind answers there (manual add). */
  probe?(host: string, port: number | undefined): Promise<DiscoveredEndpoint>;
  /** State the endpoint's registrant reported (bridge endpoints), into the state authority. */
  report?(endpointId: string, state: Record<string, unknown>): void;
  /** Whether `control` needs a stored pairing first (Android TV). */
  readonly needsPairing?: boolean;
}

/** A pairing in progress with a TV, waiting for the code it shows. */
export interface PairingSession {
  /** Sends the code; resolves with what to store, or rejects with a CastPairingFailure. */
  finish(code: string): Promise<Omit<CastPairing, 'pairedAt'>>;
  cancel(): void;
}

export type CastPairingFailureReason = 'unreachable' | 'timeout' | 'wrong_code' | 'rejected' | 'protocol' | 'closed';

/** Why a pairing step failed, as the pairer saw it. */
export class CastPairingFailure extends Error {
  constructor(
    readonly reason: CastPairingFailureReason,
    message: string,
  ) {
    super(message);
  }
}

/** Starts Android TV Remote v2 pairings (the TLS exchange on the pairing port). */
export interface CastPairer {
  start(target: { host: string; port: number; clientName: string; timeoutMs: number }): Promise<PairingSession>;
}
