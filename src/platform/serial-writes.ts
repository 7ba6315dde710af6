/**
 * Runs an aggregate's writes one at a time. Writes that check and then write (a name is free, an
 * admin remains, a record replaced whole from the one before) could each pass a check the other
 * breaks when interleaved at an await. The hub is the only writer, so a queue in memory is enough.
 */
export class SerialWrites {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    // The next task waits for this one to settle, whether it failed or not.
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every write queued so far has settled. */
  async settled(): Promise<void> {
    await this.tail;
  }
}
