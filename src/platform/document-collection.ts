import { randomUUID } from 'node:crypto';
import type { Clock } from './clock.js';
import type { DomainError, FailureOptions } from './errors.js';
import type { DocumentRepository } from './document-repository.js';

type Stamped = { id: string; createdAt: number; updatedAt: number };

/**
 * An aggregate's documents held in memory and written through to the repository before a
 * change is acknowledged. Aggregates kept this way are small (tens to hundreds of records), so reads never
 * touch storage and one bootstrap is one pass over memory.
 */
export class DocumentCollection<T extends Stamped> {
  private readonly items = new Map<string, T>();
  private watching = false;
  private readonly followers = new Set<(id: string, before: T | undefined, after: T | undefined) => void>();

  constructor(
    private readonly repo: DocumentRepository<T>,
    private readonly clock: Clock,
    /** The aggregate's not-found failure, e.g. `homeErrors.SPACE_NOT_FOUND`. */
    private readonly missing: (params: { id: string }, options?: FailureOptions) => DomainError,
  ) {}

  async load(): Promise<void> {
    // Subscribed first: a change made elsewhere while the list is read is not lost.
    const apply = (id: string, doc: T | undefined) => {
      const before = this.items.get(id);
      if (doc) this.items.set(id, doc);
      else this.items.delete(id);
      for (const follower of this.followers) follower(id, before, doc);
    };
    if (!this.watching) {
      this.watching = true;
      this.repo.watch?.(apply, (all) => {
        const present = new Set(all.map((doc) => doc.id));
        for (const id of [...this.items.keys()]) if (!present.has(id)) apply(id, undefined);
        for (const doc of all) apply(doc.id, doc);
      });
    }
    for (const item of await this.repo.list()) this.items.set(item.id, item);
  }

  /** Calls `follower` after a change another writer made (see `DocumentRepository.watch`) is applied here. */
  followChanges(follower: (id: string, before: T | undefined, after: T | undefined) => void): void {
    this.followers.add(follower);
  }

  list(): T[] {
    // Stable sort: records created in the same millisecond keep their insertion order.
    return [...this.items.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  find(id: string): T | undefined {
    return this.items.get(id);
  }

  get(id: string): T {
    const item = this.items.get(id);
    if (!item) throw this.missing({ id }, { details: { id } });
    return item;
  }

  /** Creates (no id, or an id not yet used) or replaces the whole record, keeping createdAt. */
  async save(fields: Omit<T, 'id' | 'createdAt' | 'updatedAt'> & { id?: string }): Promise<{ item: T; created: boolean }> {
    const now = this.clock.now();
    const existing = fields.id ? this.items.get(fields.id) : undefined;
    const item = { ...fields, id: fields.id ?? randomUUID(), createdAt: existing?.createdAt ?? now, updatedAt: now } as T;
    await this.repo.save(item, now);
    this.items.set(item.id, item);
    return { item, created: !existing };
  }

  async update(id: string, change: (current: T) => Partial<T>): Promise<T> {
    const current = this.get(id);
    const now = this.clock.now();
    const item = { ...current, ...change(current), id, createdAt: current.createdAt, updatedAt: now } as T;
    await this.repo.save(item, now);
    this.items.set(id, item);
    return item;
  }

  async remove(id: string): Promise<T> {
    const item = this.get(id);
    await this.repo.remove(id);
    this.items.delete(id);
    return item;
  }
}
