// H1–H2's harmonic powers (workers/emotion/engine/features.ts harmonicPowers: six Goertzel recursions in one
// pass) against six separate one-frequency recursions, the code they replaced: bit-identical, for male and
// female F0s and frames that start anywhere in the signal.
import { expect } from 'chai';
import { seededRandom } from '../../../dev/harness/seeded-random';
import { HARMONIC_SEARCH, harmonicPowers } from '../../../workers/emotion/engine/features';

/** One Goertzel recursion over the windowed frame, as H1–H2 ran it per frequency. */
function powerAt(x: Float32Array, start: number, win: Float64Array, hz: number, rate: number): number {
  const w = (2 * Math.PI * hz) / rate;
  const c = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < win.length; i++) {
    const s0 = x[start + i]! * win[i]! + c * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - c * s1 * s2;
}

describe('emotion engine: H1–H2 harmonic powers', () => {
  it('equal six one-frequency Goertzel passes bit for bit', () => {
    const rate = 8000;
    const random = seededRandom(7);
    const x = new Float32Array(rate);
    for (let i = 0; i < x.length; i++)
      x[i] = 0.4 * Math.sin((2 * Math.PI * 131 * i) / rate) + 0.2 * Math.sin((2 * Math.PI * 262 * i) / rate) + 0.1 * (random() - 0.5);
    const win = new Float64Array(320);
    for (let i = 0; i < win.length; i++) win[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / win.length);
    let compared = 0;
    for (const f0 of [78.3, 101.7, 131, 207.9, 311.2, 480]) {
      for (const start of [0, 17, 1234, rate - win.length]) {
        const got = Array.from(harmonicPowers(x, start, win, f0, rate));
        const want = [1, 2].flatMap((h) => HARMONIC_SEARCH.map((m) => powerAt(x, start, win, h * f0 * m, rate)));
        expect(got).to.have.length(6);
        for (let k = 0; k < 6; k++) {
          expect(Object.is(got[k], want[k]), `F0 ${f0}, start ${start}, power ${k}: ${got[k]} vs ${want[k]}`).to.equal(true);
          compared++;
        }
      }
    }
    expect(compared).to.equal(144);
  });
});
