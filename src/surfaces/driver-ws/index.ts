import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { normalizeAddress } from '../../domain/drivers/driver-admission.js';
import { bearerOf } from '../http/credentials.js';
import type { DriverLink } from '../../domain/drivers/driver-link.js';
import type { Receipt } from '../../domain/drivers/driver-manager.js';
import { driverProtocolErrors } from '../../domain/drivers/errors.js';
import { MAX_DRIVER_MESSAGE_BYTES, type DriverRegistration, type ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { Hub } from '../../hub.js';
import type { FailureInfo } from '../../platform/errors.js';
import { httpErrors } from '../http/failures.js';

export const DRIVER_WS_PATH = '/driver';

/** WebSocket close codes this surface uses (documented in docs/drivers.md). */
export const CLOSE = {
  normal: 1000,
  policy: 1008,
  invalidJson: 1007,
  tooBig: 1009,
  registrationTimeout: 4000,
  replaced: 4001,
  tooSlow: 4002,
  /** DRIVER_AUTH=open: the driverKey is connected from another address, or run by the hub itself. */
  driverKeyTaken: 4009,
  stopping: 1001,
} as const;

/** Messages a driver may send while its registration waits for the driver tokens to load (at start). */
const MAX_QUEUED_WHILE_ADMITTING = 1000;

const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

class WebSocketDriverLink implements DriverLink {
  readonly transport = 'websocket' as const;
  private corked = false;
  private framesThisRound = 0;
  private framesLastRound = 0;

  constructor(
    readonly driverKey: string,
    readonly instanceId: string,
    private readonly ws: WebSocket,
    readonly remoteAddress: string,
    readonly tokenId: string | undefined,
  ) {}

  send(message: ServerToDriverMessage): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.ws.close(CLOSE.tooSlow, 'driver does not read its messages');
      return;
    }
    this.batchWrites();
    this.ws.send(JSON.stringify(message));
  }

  /**
   * Frames sent while the event loop handles one round of I/O (the commands of many concurrent
   * HTTP requests) leave in one write instead of a system call each, before the loop waits for
   * I/O again; still one message per frame. While the link is quiet (the last round sent at most
   * one frame) the first frame of a round leaves at once instead: a lone command, one person
   * tapping a light, is not held back by whatever else its round does.
   */
  private batchWrites(): void {
    const tcp = (this.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (!tcp) return;
    this.framesThisRound++;
    if (this.framesThisRound === 1) setImmediate(this.endRound);
    if (this.corked || (this.framesThisRound === 1 && this.framesLastRound <= 1)) return;
    this.corked = true;
    tcp.cork();
  }

  private readonly endRound = (): void => {
    this.framesLastRound = this.framesThisRound;
    this.framesThisRound = 0;
    if (!this.corked) return;
    this.corked = false;
    (this.ws as unknown as { _socket?: { uncork(): void } })._socket?.uncork();
  };

  close(reason: string): void {
    const code = reason === 'replaced' ? CLOSE.replaced : reason === 'hub stopping' ? CLOSE.stopping : reason === 'token revoked' ? CLOSE.policy : CLOSE.normal;
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(code, reason.slice(0, 100));
  }
}

function fail(ws: WebSocket, closeCode: number, failure: FailureInfo, reason: string = failure.code): void {
  if (ws.readyState !== ws.OPEN) return;
  ws.send(JSON.stringify({ type: 'DRIVER_STATUS', status: 'error', code: failure.code, message: failure.message }));
  ws.close(closeCode, closeReason(reason));
}

/** A close frame's reason is at most 123 bytes of UTF-8. */
function closeReason(text: string): string {
  let out = text;
  while (Buffer.byteLength(out) > 123) out = out.slice(0, -1);
  return out;
}

function parse(data: RawData): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(data.toString()) };
  } catch {
    return { ok: false };
  }
}

export interface DriverSocketSurface {
  /** Routes an HTTP upgrade; returns false when the path is not the driver's. */
  handleUpgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Listens on DRIVER_WS_PORT when it is set; returns the port. */
  listenSeparately(port: number, host: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * The driver WebSocket: a raw `ws` server in noServer mode, so that it shares the HTTP server
 * with Socket.IO without either one destroying the other's upgrades. It adapts sockets to
 * DriverLinks; everything a message means is decided by the driver manager.
 */
export function createDriverSocketSurface(hub: Hub): DriverSocketSurface {
  const log = hub.log.child({ component: 'driver-ws' });
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_DRIVER_MESSAGE_BYTES });
  const alive = new WeakMap<WebSocket, boolean>();
  let separate: http.Server | undefined;

  // Liveness of a peer over a real socket is measured in wall time, not on the hub's injected
  // clock: a test that moves the hub's time an hour forward must not make connected drivers
  // look dead, nor a driver that is registering look late.
  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      // A peer that missed the last ping is gone (half-open TCP); terminate frees its devices.
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, hub.config.driverPingIntervalMs);
  heartbeat.unref();

  wss.on('connection', (ws: WebSocket, request: http.IncomingMessage) => {
    const peer = normalizeAddress(request.socket.remoteAddress ?? 'unknown');
    const bearer = bearerOf(request);
    let link: WebSocketDriverLink | undefined;
    // Set while a registration waits for the driver tokens to load; messages wait behind it, in order.
    let admitting: Array<[RawData, boolean]> | undefined;
    alive.set(ws, true);
    ws.on('pong', () => alive.set(ws, true));

    const registrationTimer = setTimeout(() => {
      log.warn({ peer }, 'driver did not register in time');
      fail(ws, CLOSE.registrationTimeout, driverProtocolErrors.REGISTRATION_TIMEOUT.info({ timeoutMs: hub.config.driverRegistrationTimeoutMs }));
    }, hub.config.driverRegistrationTimeoutMs);

    /** Takes a valid registration into service, or refuses it (DRIVER_AUTH; docs/drivers.md#authentication). */
    const register = (registration: DriverRegistration): void => {
      if (ws.readyState !== ws.OPEN) return;
      const verdict = hub.driverAdmission.admit({ registration, remoteAddress: peer, ...(bearer === undefined ? {} : { bearer }) });
      if (!verdict.admitted) {
        log.warn({ peer, driverKey: registration.driverKey, instanceId: registration.instanceId, code: verdict.failure.code, ...verdict.log }, 'driver registration refused');
        if (verdict.refusal === 'taken') fail(ws, CLOSE.driverKeyTaken, verdict.failure, verdict.failure.code === 'DRIVER_KEY_RESERVED' ? `driverKey ${registration.driverKey} is run by the hub itself` : `driverKey ${registration.driverKey} is connected from another address`);
        else fail(ws, CLOSE.policy, verdict.failure);
        return;
      }
      clearTimeout(registrationTimer);
      link = new WebSocketDriverLink(registration.driverKey, registration.instanceId, ws, peer, verdict.tokenId);
      hub.drivers.attach(link);
      log.info({ peer, driverKey: link.driverKey, instanceId: link.instanceId, ...(verdict.tokenId ? { tokenId: verdict.tokenId } : {}) }, 'driver registered');
    };

    const handle = (data: RawData, isBinary: boolean): void => {
      if (admitting) {
        if (admitting.length >= MAX_QUEUED_WHILE_ADMITTING) {
          fail(ws, CLOSE.policy, driverProtocolErrors.INVALID_REGISTRATION.info({ problem: 'wait for DRIVER_STATUS registered before sending other messages' }));
          return;
        }
        admitting.push([data, isBinary]);
        return;
      }
      const parsed = isBinary ? { ok: false as const } : parse(data);
      if (!parsed.ok) {
        log.warn({ peer, driverKey: link?.driverKey }, 'driver sent invalid JSON; closing');
        fail(ws, CLOSE.invalidJson, driverProtocolErrors.INVALID_JSON.info());
        return;
      }
      if (!link) {
        const checked = hub.drivers.checkRegistration(parsed.value);
        if ('refused' in checked) {
          log.warn({ peer, code: checked.refused.code }, 'driver registration refused');
          fail(ws, CLOSE.policy, checked.refused);
          return;
        }
        const pending = hub.driverAdmission.whenReady();
        if (!pending) {
          register(checked.registration);
          return;
        }
        // The hub is starting and has not read its driver tokens yet: decide once it has.
        const queued: Array<[RawData, boolean]> = [];
        admitting = queued;
        void pending.then(() => {
          admitting = undefined;
          register(checked.registration);
          for (const [queuedData, queuedBinary] of queued) if (ws.readyState === ws.OPEN) handle(queuedData, queuedBinary);
        });
        return;
      }
      const current = link;
      // A message applied at once (an ACTION_RESULT, a STATE_UPDATE) has its receipt in this
      // turn: no promise, no closures and no microtask per message of the command path and of
      // state floods. Only a message that waits behind storage is followed up later.
      let receipt: Receipt | Promise<Receipt>;
      try {
        receipt = hub.drivers.receiveNow(current, parsed.value);
      } catch (err) {
        failed(current, err);
        return;
      }
      if (receipt instanceof Promise) {
        receipt.then(
          (later) => answer(current, later),
          (err: unknown) => failed(current, err),
        );
      } else if (!receipt.ok) answer(current, receipt);
    };
    /** Tells the driver why its message was refused. */
    const answer = (to: WebSocketDriverLink, receipt: Receipt): void => {
      if (receipt.ok) return;
      log.warn({ driverKey: to.driverKey, code: receipt.code }, receipt.message);
      to.send({ type: 'DRIVER_STATUS', status: 'error', code: receipt.code, message: receipt.message });
    };
    const failed = (to: WebSocketDriverLink, err: unknown): void => log.error({ err, driverKey: to.driverKey }, 'driver message failed');
    ws.on('message', handle);

    ws.on('error', (err) => {
      // ws closes oversized (1009) and malformed frames itself; this only records why.
      log.warn({ peer, driverKey: link?.driverKey, err: err.message }, 'driver socket error');
    });

    ws.on('close', (code) => {
      clearTimeout(registrationTimer);
      if (link) {
        hub.drivers.detach(link, `socket closed (${code})`);
        log.info({ driverKey: link.driverKey, instanceId: link.instanceId, code }, 'driver disconnected');
      }
    });
  });

  const surface: DriverSocketSurface = {
    handleUpgrade(request, socket, head) {
      const path = (request.url ?? '').split('?')[0];
      if (path !== DRIVER_WS_PATH) return false;
      wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
      return true;
    },
    async listenSeparately(port, host) {
      separate = http.createServer((req, res) => {
        res.writeHead(404, { 'content-type': 'application/json' });
        const path = `${(req.url ?? '/').split('?')[0]} (only the driver WebSocket ${DRIVER_WS_PATH} is served on this port)`;
        res.end(JSON.stringify({ error: httpErrors.ROUTE_NOT_FOUND.info({ method: req.method ?? 'GET', path }) }));
      });
      separate.on('upgrade', (request, socket, head) => {
        if (!surface.handleUpgrade(request, socket, head)) socket.destroy();
      });
      await new Promise<void>((resolve, reject) => {
        separate!.once('error', reject);
        separate!.listen(port, host, () => resolve());
      });
      return (separate.address() as { port: number }).port;
    },
    async close() {
      clearInterval(heartbeat);
      for (const ws of wss.clients) ws.close(CLOSE.stopping, 'hub stopping');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      for (const ws of wss.clients) ws.terminate();
      if (separate) {
        separate.closeAllConnections();
        await new Promise<void>((resolve) => separate!.close(() => resolve()));
      }
    },
  };
  return surface;
}
