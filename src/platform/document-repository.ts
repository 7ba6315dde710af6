/** Storage port of a document-shaped aggregate (space, program, zone, macro, …). */
export interface DocumentRepository<T extends { id: string }> {
  list(): Promise<T[]>;
  get(id: string): Promise<T | undefined>;
  save(doc: T, at: number): Promise<void>;
  remove(id: string): Promise<boolean>;
  /**
   * Changes other writers made (another instance on the same database): the document's new body,
   * or undefined when it was removed. Absent where this process is the only writer. `resync`
   * gets every document when changes may have been missed (the connection that hears of them
   * was lost for a while).
   */
  watch?(listener: (id: string, doc: T | undefined) => void, resync?: (all: T[]) => void): () => void;
}
