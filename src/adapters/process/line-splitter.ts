/** Splits a byte stream into lines without ever holding more than `maxBytes` of one line. */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!this.discarding && end > start) {
        if (this.size + (end - start) > this.maxBytes) {
          this.discarding = true;
          this.parts = [];
          this.size = 0;
          this.onOverflow();
        } else {
          this.parts.push(chunk.subarray(start, end));
          this.size += end - start;
        }
      }
      if (nl === -1) return;
      if (this.discarding) this.discarding = false;
      else {
        const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
        this.parts = [];
        this.size = 0;
        this.onLine(line);
      }
      start = nl + 1;
    }
  }

  /** The end of the stream: a last line without a newline is a line too. */
  end(): void {
    if (this.discarding || this.size === 0) {
      this.discarding = false;
      return;
    }
    const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    this.onLine(line);
  }
}
