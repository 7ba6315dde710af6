/**
 * Lets one piece of work run at a time and refuses (rather than queues) another meanwhile: for
 * long operations on shared files (installing a driver package, taking a backup) a second
 * caller is better told to come back than left waiting behind minutes of work.
 */
export class OneAtATime {
  private busy = false;

  constructor(private readonly refusal: () => Error) {}

  private idle: Array<() => void> = [];

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.busy) throw this.refusal();
    this.busy = true;
    try {
      return await work();
    } finally {
      this.busy = false;
      for (const wake of this.idle.splice(0)) wake();
    }
  }

  /**
   * Runs `work` as soon as nothing else runs, waiting for the running work instead of being
   * refused: for work that must happen (a scheduled backup), not for a caller who can come back.
   */
  async runWhenFree<T>(work: () => Promise<T>): Promise<T> {
    while (this.busy) await new Promise<void>((resolve) => this.idle.push(resolve));
    return this.run(work);
  }
}
