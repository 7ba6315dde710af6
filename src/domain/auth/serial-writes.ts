/**
 * Runs account writes one at a time. Their checks (a name is free, an admin remains, an invite
 * is unused) read storage and then write; two writes interleaved at an await could each pass
 * a check the other breaks. The hub is the only writer, so a queue in memory is enough.
 */
export class SerialWrites {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    // The next task waits for this one to settle, whether it failed or not.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
