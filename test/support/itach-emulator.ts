import { createServer, type Socket } from 'node:net';

/**
 * A Global Caché iTach IP2IR stand-in for tests: a real TCP server on 127.0.0.1 speaking the
 * iTach line protocol (`\r`-terminated lines).
 */
export type ItachEmulatorMode = 'ok' | 'error' | 'silent' | 'busy';

export interface ItachEmulatorOptions {
  mode?: ItachEmulatorMode;
  /** Code in `ERR_<connector>,<code>` replies of mode `error` (default `010`). */
  errorCode?: string;
  /** Reply line terminator (default `\r`; some firmware sends `\r\n`). */
  terminator?: '\r' | '\r\n';
}

export interface ItachEmulator {
  readonly port: number;
  readonly host: '127.0.0.1';
  /** Every line received, without terminator, in arrival order. */
  readonly lines: string[];
  /** Connections accepted so far. */
  readonly connections: number;
  /** Connections currently open. */
  readonly openConnections: number;
  setMode(mode: ItachEmulatorMode, errorCode?: string): void;
  /** Closes every open connection from the extender's side (the server keeps listening). */
  dropConnections(): void;
  /** Writes raw text to every open connection (unsolicited lines, garbage). */
  broadcast(text: string): void;
  close(): Promise<void>;
}

export const ITACH_EMULATOR_VERSION = '710-1005-05';

export async function startItachEmulator(opts: ItachEmulatorOptions = {}): Promise<ItachEmulator> {
  let mode: ItachEmulatorMode = opts.mode ?? 'ok';
  let errorCode = opts.errorCode ?? '010';
  const eol = opts.terminator ?? '\r';
  const lines: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;

  const answer = (line: string): string | undefined => {
    if (line === 'getversion') return ITACH_EMULATOR_VERSION + eol;
    if (line === 'getdevices') return `device,1,3 IR${eol}endlistdevices${eol}`;
    const fields = line.split(',');
    const verb = fields[0];
    if (verb === 'stopir') return `stopir,${fields[1] ?? ''}${eol}`;
    if (verb !== 'sendir') return `ERR_01${eol}`;
    const connector = fields[1] ?? '';
    const id = fields[2] ?? '';
    switch (mode) {
      case 'silent':
        return undefined;
      case 'busy':
        return `busyIR,${connector},${id}${eol}`;
      case 'error':
        return `ERR_${connector},${errorCode}${eol}`;
      case 'ok': {
        // Like the device: the pulse train after freq, repeat and offset must come in pairs.
        if (fields.length < 8) return `ERR_${connector},008${eol}`;
        if ((fields.length - 6) % 2 !== 0) return `ERR_${connector},010${eol}`;
        return `completeir,${connector},${id}${eol}`;
      }
    }
  };

  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.setEncoding('latin1');
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const parts = buffer.split(/\r\n|\r|\n/);
      buffer = parts.pop() ?? '';
      for (const line of parts) {
        if (line === '') continue;
        lines.push(line);
        const reply = answer(line);
        if (reply !== undefined && socket.writable) socket.write(reply);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('error', () => {});

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('iTach emulator: no TCP address');

  return {
    port: address.port,
    host: '127.0.0.1',
    lines,
    get connections() {
      return connections;
    },
    get openConnections() {
      return sockets.size;
    },
    setMode(next, code) {
      mode = next;
      if (code !== undefined) errorCode = code;
    },
    dropConnections() {
      for (const s of sockets) s.destroy();
    },
    broadcast(text) {
      for (const s of sockets) if (s.writable) s.write(text);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
