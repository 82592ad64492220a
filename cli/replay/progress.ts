// A one-line progress bar with rate and ETA on stderr (a plain line every few seconds when not a TTY).
export class Progress {
  private readonly started = Date.now();
  private lastPlain = 0;
  done = 0;
  failed = 0;

  constructor(
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  tick(ok: boolean): void {
    if (ok) this.done++;
    else this.failed++;
    this.render();
  }

  line(): string {
    const finished = this.done + this.failed;
    const elapsed = (Date.now() - this.started) / 1000;
    const rate = elapsed > 0 ? finished / elapsed : 0;
    const eta = rate > 0 ? Math.ceil((this.total - finished) / rate) : 0;
    const width = 24;
    const filled = this.total ? Math.round((finished / this.total) * width) : width;
    const pct = this.total ? Math.floor((finished / this.total) * 100) : 100;
    return (
      `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${finished}/${this.total} ${pct}% ` +
      `${rate.toFixed(1)} files/s ETA ${eta}s  ok ${this.done} failed ${this.failed}`
    );
  }

  private render(): void {
    if (this.stream.isTTY) {
      this.stream.write(`\r${this.line()}`);
      return;
    }
    const finished = this.done + this.failed;
    if (Date.now() - this.lastPlain > 2000 || finished === this.total) {
      this.lastPlain = Date.now();
      this.stream.write(`${this.line()}\n`);
    }
  }

  end(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }
}
