/**
 * Tracks the parts that must be initialised before the service is ready (`/readyz`).
 * Each part is declared up front and marked ready when its start completes.
 */
export class Readiness {
  private readonly pending = new Set<string>();

  constructor(parts: string[]) {
    for (const part of parts) this.pending.add(part);
  }

  markReady(part: string): void {
    this.pending.delete(part);
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
