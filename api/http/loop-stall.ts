// Owns a running total of the time this process's event loop could not run: busy with other callbacks (other
// requests' parsing, logging, garbage collection) or runnable but not scheduled by the OS (the workers have
// the cores). A 10 ms interval timer measures it: whatever a tick comes later than due, beyond a little timer
// jitter, is stalled time. The body-read credit (deadline.ts) subtracts it, so the server's own starvation is
// never counted as the client's upload time.

/** How often the loop is sampled; each tick costs a few microseconds. */
const TICK_MS = 10;
/** Lateness below this is timer jitter, not a stall (ignoring it under-counts stalls by at most this per tick). */
const JITTER_MS = 2;

export class LoopStall {
  private stalledMs = 0;
  private lastTick = performance.now();

  constructor() {
    setInterval(() => {
      const now = performance.now();
      const late = now - this.lastTick - TICK_MS;
      if (late > JITTER_MS) this.stalledMs += late;
      this.lastTick = now;
    }, TICK_MS).unref();
  }

  /** Stalled milliseconds since the process started, the stall in progress (if this runs late) included. */
  totalMs(): number {
    const late = performance.now() - this.lastTick - TICK_MS;
    return this.stalledMs + (late > JITTER_MS ? late : 0);
  }
}

let processStall: LoopStall | undefined;

/** The process's one meter, started on first use. */
export function loopStall(): LoopStall {
  processStall ??= new LoopStall();
  return processStall;
}
