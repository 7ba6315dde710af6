import { transports } from 'engine.io';

interface WebSocketTransport {
  socket?: { _socket?: { cork(): void; uncork(): void } };
  send(packets: unknown[]): void;
}

let installed = false;

/**
 * engine.io's WebSocket transport writes the packets of one flush one by one, a system call
 * each. Corking the TCP socket around the flush turns them into one write: with 1,000 stream
 * clients, the per-packet writes are what saturates the hub (docs/benchmarks.md). The packets
 * and their frames are unchanged.
 */
export function batchWebSocketFlushes(): void {
  if (installed) return;
  installed = true;
  const proto = transports.websocket.prototype as unknown as WebSocketTransport;
  const send = proto.send;
  proto.send = function batchedSend(this: WebSocketTransport, packets: unknown[]) {
    const tcp = this.socket?._socket;
    if (!tcp || packets.length < 2) return send.call(this, packets);
    tcp.cork();
    try {
      send.call(this, packets);
    } finally {
      tcp.uncork();
    }
  };
}
