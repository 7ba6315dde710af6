/**
 * Who is connected to the hub right now, counted by the surfaces that hold the connections
 * (Socket.IO namespaces, SSE streams); the domain only reads the counts.
 */
export class ClientCensus {
  private readonly sources = new Map<string, () => number>();

  /** A surface's count, under a name such as `socket.io` or `sse`; returns the way to remove it. */
  register(name: string, count: () => number): () => void {
    this.sources.set(name, count);
    return () => {
      if (this.sources.get(name) === count) this.sources.delete(name);
    };
  }

  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, count] of this.sources) out[name] = count();
    return out;
  }
}
