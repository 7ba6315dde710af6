/**
 * Tracks the parts that must be initialised before the service is ready (`/readyz`).
 * Each part is declared up front and marked ready when its start completes.
 */
export class Readiness {
  private readonly pending = new Set<string>();
  private waiters: Array<() => void> = [];

  constructor(parts: string[]) {
    for (const part of parts) this.pending.add(part);
  }

  markReady(part: string): void {
    this.pending.delete(part);
    if (this.pending.size === 0 && this.waiters.length > 0) for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves once every part is ready (at once when it is). */
  whenReady(): Promise<void> {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Requests waiting in `whenReady`. */
  get waiting(): number {
    return this.waiters.length;
  }

  markNotReady(part: string): void {
    this.pending.add(part);
  }

  get ready(): boolean {
    return this.pending.size === 0;
  }

  get waitingFor(): string[] {
    return [...this.pending];
  }
}
