import type { Kysely } from 'kysely';
import type { DocumentRepository } from '../../platform/document-repository.js';
import type { Database } from '../schema.js';

/** One aggregate's documents; `kind` keeps aggregates apart in the shared table. */
export class KyselyDocumentRepository<T extends { id: string }> implements DocumentRepository<T> {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly kind: string,
  ) {}

  async list(): Promise<T[]> {
    const rows = await this.db.selectFrom('documents').select('body').where('kind', '=', this.kind).orderBy('id').execute();
    return rows.map((r) => JSON.parse(r.body) as T);
  }

  async get(id: string): Promise<T | undefined> {
    const row = await this.db.selectFrom('documents').select('body').where('kind', '=', this.kind).where('id', '=', id).executeTakeFirst();
    return row ? (JSON.parse(row.body) as T) : undefined;
  }

  async save(doc: T, at: number): Promise<void> {
    const row = { kind: this.kind, id: doc.id, body: JSON.stringify(doc), updated_at: at };
    await this.db
      .insertInto('documents')
      .values(row)
      .onConflict((oc) => oc.columns(['kind', 'id']).doUpdateSet({ body: row.body, updated_at: at }))
      .execute();
  }

  async remove(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('documents').where('kind', '=', this.kind).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
