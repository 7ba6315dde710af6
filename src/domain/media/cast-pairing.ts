import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import type { DomainEventBus } from '../events.js';
import { mediaErrors } from './errors.js';
import type { MediaService } from './media-service.js';
import type { EndpointView } from './model.js';
import { CastPairingFailure, type CastPairer, type PairingSession } from './ports.js';

export interface CastPairingSettings {
  /** How long each network step may take (connect, exchange, secret). */
  stepTimeoutMs: number;
  /** How long a started pairing waits for its code before it is dropped (a TV shows it about that long). */
  codeTimeoutMs: number;
  clientName: string;
}

interface Pending {
  endpointId: string;
  /** Null while the exchange that makes the TV show its code is still running. */
  session: PairingSession | null;
  expiry: TimerHandle | null;
  /** A finish is on the wire: a second one waits its turn instead of racing it. */
  finishing: Promise<unknown> | null;
}

/**
 * Pairing the hub with an Android TV / Google TV (Remote v2): one pairing at a time, as the TV
 * shows one code at a time. Start opens the exchange and makes the TV show its code; finish sends
 * the code and, on success, stores the client identity the TV now trusts, so that the endpoint is
 * controlled from then on and after restarts.
 */
export class CastPairingService {
  private pending: Pending | null = null;

  constructor(
    private readonly media: MediaService,
    private readonly pairer: CastPairer,
    private readonly settings: CastPairingSettings,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly timers: Timers,
  ) {}

  async start(input: { endpointId: string; port?: number }): Promise<{ endpointId: string; status: 'awaiting_code'; expiresAt: string }> {
    const endpoint = this.media.endpoint(input.endpointId);
    if (endpoint.kind !== 'androidtv') throw mediaErrors.ENDPOINT_NOT_PAIRABLE({ id: endpoint.id, kind: endpoint.kind }, { details: { endpointId: endpoint.id, kind: endpoint.kind } });
    if (this.pending) throw mediaErrors.CAST_PAIRING_IN_PROGRESS({ endpointId: this.pending.endpointId }, { details: { endpointId: this.pending.endpointId } });
    // Claimed before the first await, so a second start cannot slip in while this one connects.
    const claim: Pending = { endpointId: endpoint.id, session: null, expiry: null, finishing: null };
    this.pending = claim;
    const port = input.port ?? endpoint.port + 1;
    let session: PairingSession;
    try {
      session = await this.pairer.start({ host: endpoint.host, port, clientName: this.settings.clientName, timeoutMs: this.settings.stepTimeoutMs });
    } catch (err) {
      this.pending = null;
      this.events.emit('media.cast_pairing', { endpointId: endpoint.id, status: 'failed', reason: reasonOf(err), at: this.clock.now() });
      throw this.failure(endpoint.id, err);
    }
    claim.session = session;
    const expiresAt = this.clock.now() + this.settings.codeTimeoutMs;
    claim.expiry = this.timers.setTimeout(() => {
      if (this.pending !== claim) return;
      this.pending = null;
      session.cancel();
      this.events.emit('media.cast_pairing', { endpointId: endpoint.id, status: 'cancelled', reason: 'no code in time', at: this.clock.now() });
    }, this.settings.codeTimeoutMs);
    this.events.emit('media.cast_pairing', { endpointId: endpoint.id, status: 'started', at: this.clock.now() });
    return { endpointId: endpoint.id, status: 'awaiting_code', expiresAt: new Date(expiresAt).toISOString() };
  }

  async finish(input: { code: string; endpointId?: string }): Promise<{ endpoint: EndpointView }> {
    const pending = this.pending;
    if (!pending?.session || (input.endpointId !== undefined && input.endpointId !== pending.endpointId)) {
      throw mediaErrors.CAST_PAIRING_NOT_STARTED({}, { details: { endpointId: input.endpointId ?? null } });
    }
    if (pending.finishing) await pending.finishing.catch(() => undefined);
    if (this.pending !== pending) throw mediaErrors.CAST_PAIRING_NOT_STARTED({}, { details: { endpointId: pending.endpointId } });
    const session = pending.session;
    const attempt = session.finish(input.code.toUpperCase());
    pending.finishing = attempt;
    try {
      const pairing = await attempt;
      this.end(pending);
      const endpoint = await this.media.storePairing(pending.endpointId, { ...pairing, pairedAt: this.clock.now() });
      this.events.emit('media.cast_pairing', { endpointId: pending.endpointId, status: 'paired', at: this.clock.now() });
      return { endpoint };
    } catch (err) {
      // A wrong code leaves the pairing open for another try; anything else ends it.
      const retry = err instanceof CastPairingFailure && err.reason === 'wrong_code';
      if (!retry) {
        this.end(pending);
        session.cancel();
        this.events.emit('media.cast_pairing', { endpointId: pending.endpointId, status: 'failed', reason: reasonOf(err), at: this.clock.now() });
      }
      throw this.failure(pending.endpointId, err);
    } finally {
      pending.finishing = null;
    }
  }

  /** Drops a pairing in progress (hub stopping). */
  stop(): void {
    const pending = this.pending;
    if (!pending) return;
    this.end(pending);
    pending.session?.cancel();
  }

  private end(pending: Pending): void {
    if (pending.expiry !== null) this.timers.clearTimeout(pending.expiry);
    if (this.pending === pending) this.pending = null;
  }

  private failure(endpointId: string, err: unknown) {
    const reason = reasonOf(err);
    const details = { endpointId, reason };
    if (err instanceof CastPairingFailure) {
      if (err.reason === 'wrong_code') return mediaErrors.CAST_PAIRING_CODE_WRONG({ endpointId }, { details });
      if (err.reason === 'timeout') return mediaErrors.CAST_PAIRING_TIMEOUT({ endpointId }, { details });
    }
    return mediaErrors.CAST_PAIRING_FAILED({ endpointId, reason }, { details });
  }
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
