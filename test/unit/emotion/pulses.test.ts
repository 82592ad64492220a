// The pulse follower's cross-correlations (workers/emotion/engine/pulses.ts), summed four lags side by side,
// against their definition taken one lag at a time: bit-identical values at every lag, in both directions, with lags
// whose stretch leaves the run (NaN) at either end and group sizes that leave a remainder.
import { expect } from 'chai';
import { seededRandom } from '../../../dev/harness/seeded-random';
import { correlations } from '../../../workers/emotion/engine/pulses';

/**
 * The definition, one lag at a time: <c, y> / sqrt(<c, c> <y, y>) for the cycle c and the stretch y `lag` samples
 * away (0 where either is silent), NaN where the stretch leaves [lo, hi]; every sum in sample order, as the one-lag
 * loop the four-lag sums replaced took them.
 */
function byDefinition(x: Float32Array, base: number, w: number, dir: 1 | -1, firstLag: number, lastLag: number, lo: number, hi: number): number[] {
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);
  const cycle = x.subarray(base, base + w);
  return Array.from({ length: lastLag - firstLag + 1 }, (_, k) => {
    const start = base + dir * (firstLag + k);
    if (start < lo || start + w > hi) return Number.NaN;
    const stretch = x.subarray(start, start + w);
    const [cc, yy] = [dot(cycle, cycle), dot(stretch, stretch)];
    return cc > 0 && yy > 0 ? dot(cycle, stretch) / Math.sqrt(cc * yy) : 0;
  });
}

describe('emotion engine: pulse cross-correlations', () => {
  it('equal their definition bit for bit, lag by lag, forwards and backwards, inside and at the edges of the run', () => {
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
          const want = byDefinition(x, base, w, dir, firstLag, lastLag, lo, hi);
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
