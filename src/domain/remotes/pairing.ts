import { randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { LoginLimiter } from '../auth/login-limiter.js';
import type { DomainEventBus } from '../events.js';
import type { RemoteDirectory, RemoteView } from './directory.js';
import { viewOf } from './directory.js';
import { remoteErrors } from './errors.js';
import type { PairingChange, PairingRejection, PairingRequest, PairingView } from './model.js';

export interface PairingLimits {
  lifetimeMs: number;
  codeLength: number;
  maxOpenPerClient: number;
  maxOpen: number;
  maxWrongCodesPerRequest: number;
  maxWrongCodesPerClient: number;
  wrongCodeWindowMs: number;
  /** How long a settled request still answers polls (and holds an undelivered token). */
  settledRetentionMs: number;
  /** Requests kept in memory at most, settled ones included; the oldest settled go first. */
  maxKept: number;
}

export const PAIRING_LIMITS: PairingLimits = {
  lifetimeMs: 120_000,
  codeLength: 6,
  maxOpenPerClient: 5,
  maxOpen: 50,
  maxWrongCodesPerRequest: 5,
  maxWrongCodesPerClient: 10,
  wrongCodeWindowMs: 600_000,
  settledRetentionMs: 600_000,
  maxKept: 500,
};

/** A pending request as the household sees it on the hub: with the code the remote must not see, for admins. */
export interface PendingPairing {
  requestId: string;
  name: string;
  kind?: string;
  code?: string;
  clientAddress: string;
  openedAt: string;
  expiresAt: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Pairing requests, in memory only. A remote opens one and is told nothing of the code, which is
 * shown on the hub (`remote.pairing_requested`); the request is paired either by a household
 * member confirming it or by the remote entering the code, and expires after two minutes.
 * Wrong codes are counted per request and per client address, so guessing six digits is hopeless.
 */
export class PairingService {
  private readonly requests = new Map<string, PairingRequest>();
  private readonly timerOf = new Map<string, TimerHandle>();
  private readonly wrongCodes: LoginLimiter;

  constructor(
    private readonly directory: RemoteDirectory,
    /** The space a new remote starts in: the one asked for (404 when unknown), else the home's default, else none. */
    private readonly startingSpace: (spaceId?: string) => string | null,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly limits: PairingLimits = PAIRING_LIMITS,
  ) {
    this.wrongCodes = new LoginLimiter(
      { maxFailuresPerClient: limits.maxWrongCodesPerClient, maxFailuresPerClientUser: limits.maxWrongCodesPerRequest, windowMs: limits.wrongCodeWindowMs },
      clock,
    );
  }

  open(fields: { name: string; kind?: string }, clientAddress: string): PairingView {
    const now = this.clock.now();
    const pending = this.pending();
    this.refuseOverLimit(pending.filter((r) => r.clientAddress === clientAddress), this.limits.maxOpenPerClient, 'from this address', now);
    this.refuseOverLimit(pending, this.limits.maxOpen, 'on this hub', now);
    this.forgetOldestSettled();
    const request: PairingRequest = {
      id: randomUUID(),
      name: fields.name,
      ...(fields.kind ? { kind: fields.kind } : {}),
      code: randomInt(0, 10 ** this.limits.codeLength).toString().padStart(this.limits.codeLength, '0'),
      clientAddress,
      openedAt: now,
      expiresAt: now + this.limits.lifetimeMs,
      status: 'pending',
      wrongCodes: 0,
      tokenDelivered: false,
    };
    this.requests.set(request.id, request);
    this.timerOf.set(request.id, this.timers.setTimeout(() => this.expireIfDue(request), this.limits.lifetimeMs));
    this.events.emit('remote.pairing_requested', {
      requestId: request.id,
      name: request.name,
      kind: request.kind ?? null,
      code: request.code,
      clientAddress,
      expiresAt: iso(request.expiresAt),
      at: now,
    });
    return this.viewOf(request, false);
  }

  /** Pending requests with their codes, oldest first, for the household to confirm or reject. */
  /** Pending requests; with `withCodes` (an admin asks), the codes too. */
  list(withCodes: boolean): PendingPairing[] {
    return this.pending().map((r) => ({
      requestId: r.id,
      name: r.name,
      ...(r.kind ? { kind: r.kind } : {}),
      ...(withCodes ? { code: r.code } : {}),
      clientAddress: r.clientAddress,
      openedAt: iso(r.openedAt),
      expiresAt: iso(r.expiresAt),
    }));
  }

  /** The request's status; a paired request's token is in the first answer that asks, and only there. */
  status(requestId: string): PairingView {
    return this.viewOf(this.current(requestId), true);
  }

  async submitCode(requestId: string, code: string, clientAddress: string): Promise<PairingView> {
    const clientWait = this.wrongCodes.retryAfterSeconds(clientAddress, requestId);
    const request = this.current(requestId);
    if (request.reason === 'too_many_attempts') throw this.rateLimited(request, 'for this request', Math.max(1, clientWait));
    this.requirePending(request);
    if (clientWait > 0) throw this.rateLimited(request, 'from this address', clientWait);
    if (!sameCode(code, request.code)) {
      request.wrongCodes++;
      this.wrongCodes.recordFailure(clientAddress, requestId);
      const attemptsLeft = Math.max(0, this.limits.maxWrongCodesPerRequest - request.wrongCodes);
      if (attemptsLeft === 0) this.settle(request, 'rejected', 'attempts', 'too_many_attempts');
      throw remoteErrors.PAIRING_CODE_INVALID({ attemptsLeft }, { details: { requestId, status: request.status, attemptsLeft } });
    }
    const { token } = await this.pair(request, { pairedBy: 'code', by: 'code' });
    // Answered to the remote that entered the code: this answer is the token's one delivery.
    const { tokenDelivered: _delivered, ...view } = this.viewOf(request, false);
    return { ...view, token };
  }

  async confirm(requestId: string, fields: { name?: string; spaceId?: string }, userId: string): Promise<{ requestId: string; status: 'paired'; remote: RemoteView }> {
    const request = this.current(requestId);
    this.requirePending(request);
    const { remote } = await this.pair(request, { pairedBy: userId, by: 'household', ...fields });
    return { requestId, status: 'paired', remote: viewOf(remote) };
  }

  reject(requestId: string): PairingView {
    const request = this.current(requestId);
    this.requirePending(request);
    this.settle(request, 'rejected', 'household', 'rejected_by_household');
    return this.viewOf(request, false);
  }

  stop(): void {
    for (const handle of this.timerOf.values()) this.timers.clearTimeout(handle);
    this.timerOf.clear();
    this.requests.clear();
  }

  private async pair(request: PairingRequest, how: { pairedBy: string; by: PairingChange; name?: string; spaceId?: string }) {
    const activeSpaceId = this.startingSpace(how.spaceId);
    // Claimed before the write, so that a confirmation and a code arriving together pair once.
    request.status = 'paired';
    try {
      const { remote, token } = await this.directory.add({
        name: how.name ?? request.name,
        ...(request.kind ? { kind: request.kind } : {}),
        pairedBy: how.pairedBy,
        activeSpaceId,
        address: request.clientAddress,
      });
      request.remoteId = remote.id;
      // A household confirmation leaves the token for the remote's first status read. The right
      // code's answer carries it itself, so it is spent before the change is announced: whoever
      // reads the status on that announcement (the socket that opened the request) gets no copy.
      if (how.by === 'code') request.tokenDelivered = true;
      else request.token = token;
      this.settle(request, 'paired', how.by);
      return { remote, token };
    } catch (err) {
      request.status = 'pending';
      throw err;
    }
  }

  private settle(request: PairingRequest, status: 'paired' | 'rejected' | 'expired', by: PairingChange, reason?: PairingRejection): void {
    request.status = status;
    if (reason) request.reason = reason;
    this.timers.clearTimeout(this.timerOf.get(request.id));
    this.timerOf.set(
      request.id,
      this.timers.setTimeout(() => this.forget(request.id), this.limits.settledRetentionMs),
    );
    this.events.emit('remote.pairing_updated', {
      requestId: request.id,
      status,
      ...(reason ? { reason } : {}),
      ...(request.remoteId ? { remoteId: request.remoteId } : {}),
      by,
      at: this.clock.now(),
    });
  }

  /** The request, expired first when its time is up (timers may lag behind the clock). */
  private current(requestId: string): PairingRequest {
    const request = this.requests.get(requestId);
    if (!request) throw remoteErrors.PAIRING_REQUEST_NOT_FOUND({ requestId }, { details: { requestId } });
    this.expireIfDue(request);
    return request;
  }

  private expireIfDue(request: PairingRequest): void {
    if (request.status === 'pending' && this.clock.now() >= request.expiresAt) this.settle(request, 'expired', 'expiry');
  }

  private requirePending(request: PairingRequest): void {
    const details = { requestId: request.id, status: request.status };
    if (request.status === 'expired') throw remoteErrors.PAIRING_EXPIRED({ requestId: request.id }, { details });
    if (request.status !== 'pending') throw remoteErrors.PAIRING_CLOSED({ requestId: request.id, status: request.status }, { details });
  }

  private pending(): PairingRequest[] {
    const open: PairingRequest[] = [];
    for (const request of this.requests.values()) {
      this.expireIfDue(request);
      if (request.status === 'pending') open.push(request);
    }
    return open;
  }

  private refuseOverLimit(open: PairingRequest[], max: number, where: string, now: number): void {
    if (open.length < max) return;
    const retryAfterSeconds = Math.max(1, Math.ceil((Math.min(...open.map((r) => r.expiresAt)) - now) / 1000));
    throw remoteErrors.TOO_MANY_PAIRING_REQUESTS({ where, retryAfterSeconds }, { details: { retryAfterSeconds }, retryAfterSeconds });
  }

  private rateLimited(request: PairingRequest, where: string, retryAfterSeconds: number) {
    return remoteErrors.PAIRING_RATE_LIMITED(
      { where, retryAfterSeconds },
      { details: { requestId: request.id, status: request.status, retryAfterSeconds }, retryAfterSeconds },
    );
  }

  private forget(requestId: string): void {
    this.timers.clearTimeout(this.timerOf.get(requestId));
    this.timerOf.delete(requestId);
    this.requests.delete(requestId);
  }

  private forgetOldestSettled(): void {
    for (const request of this.requests.values()) {
      if (this.requests.size < this.limits.maxKept) return;
      if (request.status !== 'pending') this.forget(request.id);
    }
  }

  private viewOf(request: PairingRequest, handOverToken: boolean): PairingView {
    const view: PairingView = { requestId: request.id, status: request.status, expiresAt: iso(request.expiresAt), codeLength: this.limits.codeLength };
    if (request.status === 'pending') view.attemptsLeft = this.limits.maxWrongCodesPerRequest - request.wrongCodes;
    if (request.reason) view.reason = request.reason;
    if (request.status !== 'paired') return view;
    const remote = request.remoteId ? this.directory.remotes.find(request.remoteId) : undefined;
    if (remote) view.remote = { id: remote.id, name: remote.name, activeSpaceId: remote.activeSpaceId };
    if (handOverToken && request.token) {
      view.token = request.token;
      request.token = undefined;
      request.tokenDelivered = true;
    } else {
      view.tokenDelivered = request.tokenDelivered;
    }
    return view;
  }
}

/** Compared in constant time, so that the answer's timing says nothing of the digits. */
function sameCode(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
