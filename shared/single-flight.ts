// Owns request coalescing: concurrent callers asking for the same key share one in-flight fill, so a
// burst of first calls costs one read per key, not one per caller.
export class SingleFlight<V> {
  private readonly inFlight = new Map<string, Promise<V>>();

  /** Runs `fill` for `key` unless a fill for it is already running, whose result is then shared. */
  run(key: string, fill: () => Promise<V>): Promise<V> {
    const running = this.inFlight.get(key);
    if (running) return running;
    const started = fill().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, started);
    return started;
  }

  /** Fills in flight now (for tests and metrics). */
  get size(): number {
    return this.inFlight.size;
  }
}
