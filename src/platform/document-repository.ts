/** Storage port of a document-shaped aggregate (space, program, zone, macro, …). */
export interface DocumentRepository<T extends { id: string }> {
  list(): Promise<T[]>;
  get(id: string): Promise<T | undefined>;
  save(doc: T, at: number): Promise<void>;
  remove(id: string): Promise<boolean>;
}
