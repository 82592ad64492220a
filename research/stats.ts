// Owns the small statistics the evaluation and fitting scripts share (liveness and emotion alike).

/** Area under the ROC curve: the chance a positive scores above a negative (ties count half). */
export function auc(pos: number[], neg: number[]): number {
  if (pos.length === 0 || neg.length === 0) return NaN;
  let s = 0;
  for (const p of pos) for (const n of neg) s += p > n ? 1 : p === n ? 0.5 : 0;
  return s / (pos.length * neg.length);
}

/** mulberry32: a tiny seeded PRNG (uniform in [0, 1)), so a fit, a bootstrap or a fuzz case replays from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
