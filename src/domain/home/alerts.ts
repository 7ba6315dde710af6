import { randomBytes } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { DomainEventBus } from '../events.js';
import { homeErrors } from './errors.js';
import type { Alert, AlertQuery, AlertRepository } from './model.js';

export interface AlertRetention {
  maxCount: number;
  maxAgeMs: number;
}

/** Alert submissions: persisted, newest first, bounded by count and age. */
export class AlertService {
  private submittedSincePrune = 0;
  private sequence = 0;

  constructor(
    private readonly repo: AlertRepository,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly retention: AlertRetention,
  ) {}

  async submit(input: Omit<Alert, 'id' | 'at'>): Promise<Alert> {
    const at = this.clock.now();
    // Ids sort in submission order (time, then a counter), so "newest first" holds within a millisecond too.
    const id = `${at.toString(36).padStart(9, '0')}${(this.sequence++ % 1_679_616).toString(36).padStart(4, '0')}${randomBytes(4).toString('hex')}`;
    const alert: Alert = { ...input, id, at };
    await this.repo.insert(alert);
    this.events.emit('alert.submitted', { alert, at: alert.at });
    // Prune now and then rather than per insert: a burst of alerts should not pay a delete each.
    if (++this.submittedSincePrune >= 100) await this.prune();
    return alert;
  }

  async list(query: AlertQuery) {
    if (query.before && !(await this.repo.get(query.before))) {
      throw homeErrors.INVALID_CURSOR({ cursor: query.before }, { details: { field: 'before' } });
    }
    return this.repo.query(query);
  }

  async prune(): Promise<number> {
    this.submittedSincePrune = 0;
    return this.repo.prune(this.clock.now() - this.retention.maxAgeMs, this.retention.maxCount);
  }
}
