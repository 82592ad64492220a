// Owns the small statistics the evaluation and fitting scripts share (liveness and emotion alike).

/** Area under the ROC curve: the chance a positive scores above a negative (ties count half). */
export function auc(pos: number[], neg: number[]): number {
  if (pos.length === 0 || neg.length === 0) return NaN;
  let s = 0;
  for (const p of pos) for (const n of neg) s += p > n ? 1 : p === n ? 0.5 : 0;
  return s / (pos.length * neg.length);
}

/** The seeded PRNG of fits, bootstraps and fuzz cases (dev/harness/seeded-random.ts, which the tests use too). */
export { seededRandom } from '../dev/harness/seeded-random';
