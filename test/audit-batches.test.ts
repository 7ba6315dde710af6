import { describe, expect, it } from 'vitest';
import { AuditTrail, type AuditEntry, type AuditQuery, type AuditRepository } from '../src/domain/audit/audit-trail.js';
import { ManualClock } from '../src/platform/clock.js';
import { openStorage } from '../src/storage/factory.js';
import { KyselyAuditRepository } from '../src/storage/repositories/audit.js';
import { tempDataDir } from './support/server.js';

type NewEntry = Omit<AuditEntry, 'id'>;

/** The real SQLite repository, with the batches it was handed counted (and a failure on demand). */
class CountingRepository implements AuditRepository {
  readonly batches: number[] = [];
  failNext = false;
  constructor(private readonly inner: AuditRepository) {}
  async insert(entries: ReadonlyArray<NewEntry>): Promise<void> {
    this.batches.push(entries.length);
    if (this.failNext) {
      this.failNext = false;
      throw new Error('disk full');
    }
    await this.inner.insert(entries);
  }
  query(q: AuditQuery) {
    return this.inner.query(q);
  }
  prune(keep: number) {
    return this.inner.prune(keep);
  }
}

const entry = (i: number): NewEntry => ({ at: 1000 + i, actor: 'admin', action: 'devices.command', ok: true, target: { id: `d${i}` } });

describe('audit trail batches', () => {
  it('writes the entries of one turn in one transaction, in order, off the caller\u2019s path', async () => {
    const storage = openStorage({ dataDir: tempDataDir() });
    await storage.migrate();
    const repository = new CountingRepository(new KyselyAuditRepository(storage.db));
    const warnings: string[] = [];
    const trail = new AuditTrail(repository, new ManualClock(), { warn: (_obj, msg) => warnings.push(msg) });
    for (let i = 0; i < 50; i++) trail.record(entry(i));
    // Nothing was written while the calls ran: the write waits for the end of the turn.
    expect(repository.batches).toEqual([]);
    await trail.settled();
    expect(repository.batches).toEqual([50]);
    const { entries } = await trail.query({ limit: 100 });
    expect(entries.map((e) => (e.target as { id: string }).id)).toEqual(Array.from({ length: 50 }, (_, i) => `d${49 - i}`));

    // A failed batch is logged and the next ones are still written.
    repository.failNext = true;
    trail.record(entry(50));
    await trail.settled();
    trail.record(entry(51));
    await trail.settled();
    expect(warnings).toEqual(['audit entries could not be written']);
    expect((await trail.query({ limit: 1 })).entries[0]?.target).toEqual({ id: 'd51' });
    await storage.close();
  });

  it('writes a burst larger than one batch in batches of 500', async () => {
    const storage = openStorage({ dataDir: tempDataDir() });
    await storage.migrate();
    const repository = new CountingRepository(new KyselyAuditRepository(storage.db));
    const trail = new AuditTrail(repository, new ManualClock(), { warn: () => undefined });
    for (let i = 0; i < 1200; i++) trail.record(entry(i));
    await trail.settled();
    expect(repository.batches).toEqual([500, 500, 200]);
    expect((await trail.query({ limit: 2000 })).entries).toHaveLength(1200);
    await storage.close();
  });
});
