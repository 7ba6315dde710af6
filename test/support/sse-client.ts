export interface SseEvent {
  event: string;
  data: unknown;
  id?: string;
}

/** A minimal EventSource over fetch for tests: collects parsed events, waits for matches. */
export class SseClient {
  readonly events: SseEvent[] = [];
  status = 0;
  headers: Headers | undefined;
  ended = false;
  private readonly controller = new AbortController();
  private waiters: Array<{ match: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }> = [];

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient();
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: client.controller.signal });
    client.status = res.status;
    client.headers = res.headers;
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel();
      return client;
    }
    void client.read(res.body);
    return client;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            if (colon <= 0) continue;
            fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
          }
          if (!fields.event) continue;
          const event: SseEvent = { event: fields.event, data: fields.data ? JSON.parse(fields.data) : undefined, ...(fields.id ? { id: fields.id } : {}) };
          this.events.push(event);
          this.waiters = this.waiters.filter((w) => (w.match(event) ? (w.resolve(event), false) : true));
        }
      }
    } catch {
      // aborted
    }
    this.ended = true;
  }

  next(match: (e: SseEvent) => boolean, timeoutMs = 5000): Promise<SseEvent> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching SSE event in ${timeoutMs} ms; got ${this.events.map((e) => e.event).join(',')}`)), timeoutMs);
      this.waiters.push({
        match,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  }

  close(): void {
    this.controller.abort();
  }
}
