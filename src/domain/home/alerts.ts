import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { DomainEventBus } from '../events.js';
import type { Alert, AlertQuery, AlertRepository } from './model.js';

export interface AlertRetention {
  maxCount: number;
  maxAgeMs: number;
}

/** Alert submissions: persisted, newest first, bounded by count and age. */
export class AlertService {
  private submittedSincePrune = 0;

  constructor(
    private readonly repo: AlertRepository,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly retention: AlertRetention,
  ) {}

  async submit(input: Omit<Alert, 'id' | 'at'>): Promise<Alert> {
    const alert: Alert = { ...input, id: randomUUID(), at: this.clock.now() };
    await this.repo.insert(alert);
    this.events.emit('alert.submitted', { alert, at: alert.at });
    // Prune now and then rather than per insert: a burst of alerts should not pay a delete each.
    if (++this.submittedSincePrune >= 100) await this.prune();
    return alert;
  }

  list(query: AlertQuery) {
    return this.repo.query(query);
  }

  async prune(): Promise<number> {
    this.submittedSincePrune = 0;
    return this.repo.prune(this.clock.now() - this.retention.maxAgeMs, this.retention.maxCount);
  }
}
