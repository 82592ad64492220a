// The pulse follower's cross-correlations (workers/emotion/engine/pulses.ts), summed four lags side by side,
// against the one-lag loop they replaced: bit-identical values at every lag, in both directions, with lags
// whose stretch leaves the run (NaN) at either end and group sizes that leave a remainder.
import { expect } from 'chai';
import { seededRandom } from '../../../research/stats';
import { correlations } from '../../../workers/emotion/engine/pulses';

/** The one-lag loop as it was: each lag's sums over the cycle, in sample order. */
function oneLagAtATime(x: Float32Array, base: number, w: number, dir: 1 | -1, firstLag: number, lastLag: number, lo: number, hi: number): number[] {
  let sxx = 0;
  for (let i = 0; i < w; i++) sxx += x[base + i]! * x[base + i]!;
  const rs: number[] = [];
  for (let lag = firstLag; lag <= lastLag; lag++) {
    const other = base + dir * lag;
    if (other < lo || other + w > hi) {
      rs.push(Number.NaN);
      continue;
    }
    let sxy = 0;
    let syy = 0;
    for (let i = 0; i < w; i++) {
      const b = x[other + i]!;
      sxy += x[base + i]! * b;
      syy += b * b;
    }
    rs.push(sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0);
  }
  return rs;
}

describe('emotion engine: pulse cross-correlations', () => {
  it('equal the one-lag loop bit for bit, forwards and backwards, inside and at the edges of the run', () => {
    const random = seededRandom(31);
    const x = new Float32Array(4000);
    for (let i = 0; i < x.length; i++) x[i] = 0.5 * Math.sin((2 * Math.PI * 118 * i) / 8000) + 0.2 * (random() - 0.5);
    let compared = 0;
    let outside = 0;
    for (const dir of [1, -1] as const) {
      for (const period of [16, 37.5, 66.7, 80, 106.7]) {
        const w = Math.round(period);
        const firstLag = Math.floor(0.8 * period) - 1;
        const lastLag = Math.ceil(1.25 * period) + 1;
        // Bases near both ends of a run [lo, hi] put some lags outside it.
        for (const [base, lo, hi] of [
          [2000, 0, 3999],
          [1000, 900, 1000 + w + lastLag - 3],
          [1500, 1500 - lastLag + 2, 1600 + w],
          [300, 0, 3999],
        ] as const) {
          const want = oneLagAtATime(x, base, w, dir, firstLag, lastLag, lo, hi);
          const got = Array.from(correlations(x, base, w, dir, firstLag, lastLag, lo, hi));
          expect(got).to.have.length(want.length);
          for (let k = 0; k < want.length; k++) {
            if (Number.isNaN(want[k])) outside++;
            expect(Object.is(got[k], want[k]), `dir ${dir}, period ${period}, base ${base}, lag ${firstLag + k}: ${got[k]} vs ${want[k]}`).to.equal(true);
            compared++;
          }
        }
      }
    }
    expect(outside, 'some lags fall outside the run').to.be.greaterThan(10);
    expect(compared - outside).to.be.greaterThan(300);
  });
});
