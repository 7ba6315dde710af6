/**
 * Lets one piece of work run at a time and refuses (rather than queues) another meanwhile: for
 * long operations on shared files (installing a driver package, taking a backup) a second
 * caller is better told to come back than left waiting behind minutes of work.
 */
export class OneAtATime {
  private busy = false;

  constructor(private readonly refusal: () => Error) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.busy) throw this.refusal();
    this.busy = true;
    try {
      return await work();
    } finally {
      this.busy = false;
    }
  }
}
