// Helpers for tests of token-bucket limiters: send many calls with bounded parallelism, and the most a bucket
// can have let through in a given time.

/** How many calls a bucket can have admitted in `ms`: its burst plus what it refilled meanwhile. */
export const admittedWithin = (burst: number, ratePerSec: number, ms: number) => burst + Math.ceil((ms / 1000) * ratePerSec) + 1;

/** Calls `one(i)` for i = 0..n-1, at most `parallel` at a time; the answers in call order. */
export async function sendAll<T>(n: number, parallel: number, one: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await one(i);
      }
    }),
  );
  return out;
}
