// Shared by the benchmarks: medians, and timing a call many times after a warm-up.

export const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Median milliseconds of `runs` calls of fn, after 5 warm-up calls. */
export async function timeMedian(runs: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < 5; i++) await fn();
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}
