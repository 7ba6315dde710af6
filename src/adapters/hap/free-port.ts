import net from 'node:net';
import type { FreePortFinder } from '../../domain/accessory-hub/ports.js';

/** Binds `port` on 0.0.0.0 (so a listener on any IPv4 address, loopback included, conflicts) and answers the port bound. */
function bind(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => {
      const bound = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}

/** The port finder over real sockets: the preferred port if it binds, else one the OS picks (port 0). */
export class NetFreePortFinder implements FreePortFinder {
  async freePort(preferred: number): Promise<number> {
    const port = (await bind(preferred)) ?? (await bind(0));
    if (port === undefined) throw new Error(`neither port ${preferred} nor a port the system picks could be bound on 0.0.0.0`);
    return port;
  }
}
