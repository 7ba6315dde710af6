export interface TelemetryEntry {
  at: number;
  kind: 'state' | 'metric';
  data: Record<string, unknown>;
}

export interface TelemetryLimits {
  maxEntriesPerDevice: number;
  maxAgeMs: number;
}

/**
 * Recent state changes and metrics per device, bounded by count and by age. Kept in memory:
 * it is a window for graphs and diagnostics, not a history that must survive restarts.
 */
export class TelemetryStore {
  private readonly entries = new Map<string, TelemetryEntry[]>();

  constructor(private readonly limits: TelemetryLimits) {}

  record(deviceId: string, entry: TelemetryEntry): void {
    const list = this.entries.get(deviceId);
    if (!list) {
      // A list of one, not an empty one pushed into (which reserves 17 slots): most devices of a
      // large home report once and then rarely.
      this.entries.set(deviceId, [entry]);
      return;
    }
    list.push(entry);
    // Trim in batches so a busy device does not pay an array shift per update.
    if (list.length > this.limits.maxEntriesPerDevice * 1.25) list.splice(0, list.length - this.limits.maxEntriesPerDevice);
  }

  query(deviceId: string, options: { since?: number; until?: number; limit?: number; kind?: 'state' | 'metric'; now: number }): TelemetryEntry[] {
    const list = this.entries.get(deviceId) ?? [];
    const oldest = Math.max(options.since ?? -Infinity, options.now - this.limits.maxAgeMs);
    const until = options.until ?? Infinity;
    const recent = list.slice(-this.limits.maxEntriesPerDevice).filter((e) => e.at >= oldest && e.at <= until && (!options.kind || e.kind === options.kind));
    const limit = options.limit ?? recent.length;
    return recent.slice(Math.max(0, recent.length - limit));
  }

  /** Drops entries past their age; called periodically. */
  prune(now: number): void {
    const cutoff = now - this.limits.maxAgeMs;
    for (const [deviceId, list] of this.entries) {
      const keepFrom = list.findIndex((e) => e.at >= cutoff);
      if (keepFrom === -1) this.entries.delete(deviceId);
      else if (keepFrom > 0) list.splice(0, keepFrom);
    }
  }

  forget(deviceId: string): void {
    this.entries.delete(deviceId);
  }
}
