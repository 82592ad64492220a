// The WebAssembly SIMD resampler against the scalar loop it speeds up: the same filter in 32-bit integers
// must give exactly the same samples, for every supported rate, at full scale, at both mirrored ends and in
// ranges (as the analysis threads call it).
import { expect } from 'chai';
import { seededRandom } from '../../../dev/harness/seeded-random';
import { resample, resampledLength, resampleScalar, resamplesWithSimd } from '../../../workers/emotion/engine/pcm';
import { simdAvailable } from '../../../workers/emotion/engine/resample-simd';

const RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000];

function signal(n: number, seed: number): Float32Array {
  const rnd = seededRandom(seed);
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const part = Math.floor(i / 997) % 3;
    // Noise, full-scale square waves (the largest sums the filter can see) and a clipped sine.
    if (part === 0) x[i] = Math.floor(rnd() * 65536) - 32768;
    else if (part === 1) x[i] = Math.floor(i / 7) % 2 ? 32767 : -32768;
    else x[i] = Math.max(-32768, Math.min(32767, Math.round(40000 * Math.sin(i * 0.03))));
  }
  return x;
}

describe('emotion engine: WebAssembly SIMD resampler', () => {
  it('is available on this runtime (Node 20 has WebAssembly SIMD), so the fast path is what these tests check', () => {
    expect(simdAvailable).to.equal(true);
  });

  for (const inRate of RATES) {
    it(`gives exactly the scalar loop's samples from ${inRate} Hz to 8 kHz, whole and in ranges`, () => {
      // Otherwise both sides below would be the scalar loop.
      expect(resamplesWithSimd(inRate, 8000), 'takes the SIMD path').to.equal(true);
      const x = signal(Math.round(inRate * 1.3) + 3, inRate);
      const total = resampledLength(x.length, inRate, 8000);
      const reference = Array.from(resampleScalar(x, inRate, 8000));
      expect(Array.from(resample(x, inRate, 8000))).to.deep.equal(reference);
      // The decoder hands the threads the 16-bit channels themselves.
      expect(Array.from(resample(Int16Array.from(x), inRate, 8000))).to.deep.equal(reference);
      for (const [from, to] of [
        [0, 1],
        [0, 37],
        [1234, 5678],
        [total - 40, total],
        [total - 1, total],
        [500, 500],
      ] as Array<[number, number]>) {
        expect(Array.from(resample(x, inRate, 8000, from, to)), `[${from}, ${to})`).to.deep.equal(Array.from(resampleScalar(x, inRate, 8000, from, to)));
      }
    });
  }

  it('handles inputs shorter than the filter (mirrored at both ends)', () => {
    for (const n of [2, 5, 11, 40]) {
      const x = signal(n, n);
      expect(Array.from(resample(x, 16000, 8000)), `n=${n}`).to.deep.equal(Array.from(resampleScalar(x, 16000, 8000)));
      expect(Array.from(resample(x, 44100, 8000)), `n=${n}`).to.deep.equal(Array.from(resampleScalar(x, 44100, 8000)));
    }
  });
});
