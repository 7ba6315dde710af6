import { WebSocket } from 'ws';

export interface Message {
  type?: string;
  [key: string]: unknown;
}

/** A WebSocket driver peer for tests: registers, records what it receives, answers on demand. */
export class TestDriver {
  readonly received: Message[] = [];
  closed: { code: number; reason: string } | undefined;
  private waiters: Array<{ match: (m: Message) => boolean; resolve: (m: Message) => void }> = [];
  private closeWaiters: Array<(c: { code: number; reason: string }) => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      let msg: Message;
      try {
        msg = JSON.parse(data.toString()) as Message;
      } catch {
        return;
      }
      this.received.push(msg);
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(msg)) return true;
        w.resolve(msg);
        return false;
      });
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const w of this.closeWaiters.splice(0)) w(this.closed);
    });
    ws.on('error', () => undefined);
  }

  /** `localAddress` picks the address the driver connects from (any of 127.0.0.0/8 on Linux); `headers` go on the upgrade request. */
  static async connect(url: string, options: { autoPong?: boolean; localAddress?: string; headers?: Record<string, string> } = {}): Promise<TestDriver> {
    const ws = new WebSocket(url, {
      autoPong: options.autoPong ?? true,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
    });
    const driver = new TestDriver(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return driver;
  }

  /** Connects and registers; resolves once DRIVER_STATUS registered arrives. */
  static async register(url: string, driverKey: string, instanceId = `${driverKey}-1`): Promise<TestDriver> {
    const driver = await TestDriver.connect(url);
    const registered = driver.next((m) => m.type === 'DRIVER_STATUS');
    driver.send({ method: 'driver.register', driverKey, instanceId, protocolVersion: 1 });
    const status = await registered;
    if (status.status !== 'registered') throw new Error(`registration failed: ${JSON.stringify(status)}`);
    return driver;
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  next(match: (m: Message) => boolean = () => true, timeoutMs = 5000): Promise<Message> {
    const seen = this.received.find(match);
    if (seen) {
      this.received.splice(this.received.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(this.received)}`)), timeoutMs);
      this.waiters.push({
        match,
        resolve: (m) => {
          clearTimeout(timer);
          this.received.splice(this.received.indexOf(m), 1);
          resolve(m);
        },
      });
    });
  }

  /** Answers every ACTION with the result of `handler` (thrown errors become ok:false). */
  serveActions(handler: (action: Message) => unknown): void {
    this.ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as Message;
      if (msg.type !== 'ACTION' && msg.type !== 'COMMAND_EXECUTE') return;
      try {
        const result = handler(msg);
        this.send({ type: 'ACTION_RESULT', actionId: msg.actionId, ok: true, ...(result === undefined ? {} : { result }) });
      } catch (err) {
        this.send({ type: 'ACTION_RESULT', actionId: msg.actionId, ok: false, error: (err as Error).message });
      }
    });
  }

  whenClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('socket not closed in time')), timeoutMs);
      this.closeWaiters.push((c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** Polls `check` until it returns a truthy value; bounded by `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5000, label = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${label} not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}
