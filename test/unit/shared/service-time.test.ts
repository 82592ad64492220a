// The admission estimate of a worker's time per job (shared/queues/service-time.ts): CPU time × the ratio the
// work runs at on the clock when it has the cores (floor) × slow contention — so a burst the API takes in on
// the same cores does not inflate it, while contention that lasts does reach it.
import { expect } from 'chai';
import { CONTENTION_TAU_MS, ServiceTimeEstimate } from '../../../shared/queues/service-time';

/** Feeds cycles of `cpuMs` CPU time at the given clock ÷ CPU ratios, in order. */
function feed(e: ServiceTimeEstimate, cpuMs: number, ratios: number[]): void {
  for (const r of ratios) e.observe({ ms: cpuMs * r, cpuMs });
}
const repeat = (n: number, ...pattern: number[]) => Array.from({ length: n }, (_, i) => pattern[i % pattern.length]!);

describe('admission estimate: time per job from the workers’ cycles', () => {
  it('is unknown before any outcome, then a warm-up job stands in until the first cycle replaces it', () => {
    const e = new ServiceTimeEstimate();
    expect(e.ms).to.equal(null);
    e.observeProvisional(320);
    expect(e.ms).to.equal(320);
    e.observe({ ms: 25, cpuMs: 24 });
    expect(e.ms).to.be.closeTo(24 * (25 / 24), 1e-9);
  });

  it('on a fresh stack, a burst taken in on the same cores (cycles stretched 1–2.5×) stays near the uncontended time', () => {
    // What bench:burst showed: for about a second, workers at 20 ms of CPU ran 20–60 ms on the clock.
    const e = new ServiceTimeEstimate();
    feed(e, 20, repeat(40, 1.1, 2.5, 2.2, 1.2, 2.8));
    const wallMean = 20 * ((1.1 + 2.5 + 2.2 + 1.2 + 2.8) / 5);
    expect(e.ms!).to.be.below(20 * 1.5);
    expect(e.ms!).to.be.below(wallMean * 0.7);
  });

  it('follows contention that lasts: a worker at twice its time for as long as two time constants', () => {
    const e = new ServiceTimeEstimate();
    feed(e, 20, repeat(100, 1.1));
    const quiet = e.ms!;
    const cycles = Math.ceil((2 * CONTENTION_TAU_MS) / 40);
    feed(e, 20, repeat(cycles, 2.2));
    expect(quiet).to.be.closeTo(22, 0.5);
    expect(e.ms!).to.be.closeTo(44, 44 * 0.1);
  });

  it('takes a parallel engine (clock below CPU) and one that mostly waits (clock far above CPU) at their clock time', () => {
    const parallel = new ServiceTimeEstimate();
    feed(parallel, 200, repeat(30, 0.5));
    expect(parallel.ms!).to.be.closeTo(100, 1e-6);
    const waiting = new ServiceTimeEstimate();
    feed(waiting, 2, repeat(30, 20));
    expect(waiting.ms!).to.be.closeTo(40, 1e-6);
  });

  it('is not moved by one odd cycle (CPU over-counted), and falls back to clock time without CPU time', () => {
    const e = new ServiceTimeEstimate();
    feed(e, 20, repeat(50, 1.2));
    feed(e, 20, [0.2]);
    expect(e.ms!).to.be.closeTo(24, 24 * 0.05);
    const old = new ServiceTimeEstimate();
    old.observe({ ms: 30, cpuMs: null });
    old.observe({ ms: 40, cpuMs: null });
    expect(old.ms!).to.be.closeTo(32, 1e-9);
  });
});
