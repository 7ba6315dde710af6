import type { FailureInfo } from '../../platform/errors.js';
import type { DriverManager } from './driver-manager.js';
import type { DriverTokens } from './driver-tokens.js';
import { driverProtocolErrors } from './errors.js';
import type { DriverRegistration } from './messages.js';

/** DRIVER_AUTH: who may register on the driver WebSocket. */
export type DriverAuthMode = 'open' | 'token';

/** A valid registration message and where it came from. */
export interface DriverCandidate {
  registration: DriverRegistration;
  /** The peer's IP address as the socket sees it. */
  remoteAddress: string;
  /** The token of an `Authorization: Bearer` header on the upgrade request, if any. */
  bearer?: string;
}

/**
 * Whether a registration is taken into service. `unauthenticated`: no token, or not one for the
 * driverKey (the transport refuses it like an invalid registration). `taken`: the driverKey is held
 * by another address or by the hub itself. `log` says why, for the hub's log only.
 */
export type Admission =
  | { admitted: true; tokenId?: string }
  | { admitted: false; refusal: 'unauthenticated' | 'taken'; failure: FailureInfo; log: Record<string, unknown> };

/** `::ffff:192.0.2.1` (an IPv4 peer on a dual-stack socket) and `192.0.2.1` are one address. */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/**
 * The door of the driver WebSocket (docs/drivers.md#authentication). The spec gives drivers no
 * credential, so `open` admits any registration, except one that would take a driverKey over from
 * a live connection on another address or from a driver the hub runs itself, on this instance or
 * (in a cluster) on another. `token` admits a
 * driver that presents a token issued for its driverKey, which may also replace a live instance.
 * Drivers the hub launches (transport `process`) and its built-in integrations never come here.
 */
/** A link of a driverKey as the admission weighs it: the hub's own, or another instance's in a cluster. */
export interface HeldLink {
  transport?: string;
  remoteAddress?: string;
  /** The holder, for the log: a driver instance id here, `another instance` elsewhere. */
  holder: string;
}

export class DriverAdmission {
  constructor(
    readonly mode: DriverAuthMode,
    private readonly tokens: DriverTokens,
    private readonly manager: DriverManager,
    /** In a cluster: the links of a driverKey that the other instances hold (PeerTable), so that a takeover is refused on any instance. */
    private readonly elsewhere: (driverKey: string) => ReadonlyArray<{ transport?: string; remoteAddress?: string }> = () => [],
  ) {}

  /** Undefined when a registration can be decided now; else the promise of the moment it can (tokens loading at start). */
  whenReady(): Promise<void> | undefined {
    return this.mode === 'token' ? this.tokens.whenLoaded() : undefined;
  }

  admit({ registration, remoteAddress, bearer }: DriverCandidate): Admission {
    const { driverKey } = registration;
    if (this.mode === 'token') {
      const presented = registration.token ?? bearer;
      if (presented === undefined) {
        return { admitted: false, refusal: 'unauthenticated', failure: driverProtocolErrors.DRIVER_TOKEN_REQUIRED.info(), log: { reason: 'no token' } };
      }
      const check = this.tokens.check(driverKey, presented);
      if (!check.valid) {
        return {
          admitted: false,
          refusal: 'unauthenticated',
          failure: driverProtocolErrors.DRIVER_TOKEN_INVALID.info({ driverKey }),
          log: check.reason === 'unknown' ? { reason: 'unknown or revoked token' } : { reason: 'token issued for another driverKey', tokenId: check.token.id, issuedFor: check.token.driverKey },
        };
      }
      return { admitted: true, tokenId: check.token.id };
    }
    const address = normalizeAddress(remoteAddress);
    const held: HeldLink[] = [
      ...this.manager.instancesOf(driverKey).map((live) => ({ transport: live.transport, ...(live.remoteAddress === undefined ? {} : { remoteAddress: live.remoteAddress }), holder: live.instanceId })),
      ...this.elsewhere(driverKey).map((link) => ({ ...link, holder: 'another instance' })),
    ];
    for (const live of held) {
      // An instance of an older version announces no transport: taken as a WebSocket driver's.
      if (live.transport !== undefined && live.transport !== 'websocket') {
        return {
          admitted: false,
          refusal: 'taken',
          failure: driverProtocolErrors.DRIVER_KEY_RESERVED.info({ driverKey, transport: live.transport === 'process' ? 'a local driver' : 'a built-in integration' }),
          log: { reason: 'driverKey run by the hub itself', holder: live.holder },
        };
      }
      const holder = live.remoteAddress === undefined ? undefined : normalizeAddress(live.remoteAddress);
      if (holder !== address) {
        return {
          admitted: false,
          refusal: 'taken',
          failure: driverProtocolErrors.DRIVER_KEY_CONNECTED_ELSEWHERE.info({ driverKey }),
          log: { reason: 'driverKey connected from another address', holder: live.holder, holderAddress: holder ?? 'unknown' },
        };
      }
    }
    return { admitted: true };
  }
}
