// The engine's FFT (radix-4 passes, a radix-2 pass for sizes that are not powers of four) and its transform
// of pairs of real, even sequences (autocorrelations and cepstra) against the textbook DFT, for every size
// class, on complex random input and on real, even input; and its WebAssembly SIMD passes against its
// JavaScript ones (bit-identical).
import { expect } from 'chai';
import { seededRandom } from '../../../dev/harness/seeded-random';
import { EvenPairDft, Fft } from '../../../workers/emotion/engine/dsp';

function naiveDft(re: Float64Array, im: Float64Array): { re: Float64Array; im: Float64Array } {
  const n = re.length;
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    let sr = 0;
    let si = 0;
    for (let t = 0; t < n; t++) {
      const a = (-2 * Math.PI * ((k * t) % n)) / n;
      sr += re[t]! * Math.cos(a) - im[t]! * Math.sin(a);
      si += re[t]! * Math.sin(a) + im[t]! * Math.cos(a);
    }
    outRe[k] = sr;
    outIm[k] = si;
  }
  return { re: outRe, im: outIm };
}

function maxError(fft: { re: Float64Array; im: Float64Array }, ref: { re: Float64Array; im: Float64Array }): number {
  let worst = 0;
  for (let k = 0; k < ref.re.length; k++) worst = Math.max(worst, Math.abs(fft.re[k]! - ref.re[k]!), Math.abs(fft.im[k]! - ref.im[k]!));
  return worst;
}

describe('emotion engine: FFT', () => {
  for (const n of [4, 8, 16, 32, 64, 256, 512, 1024]) {
    it(`matches the naive DFT at size ${n} (complex input)`, () => {
      const rnd = seededRandom(n);
      const re = Float64Array.from({ length: n }, () => rnd() * 2 - 1);
      const im = Float64Array.from({ length: n }, () => rnd() * 2 - 1);
      const ref = naiveDft(re, im);
      new Fft(n).transform(re, im);
      // Inputs in ±1: sums of n terms; the error of both algorithms stays far below 1e-9 at these sizes.
      expect(maxError({ re, im }, ref)).to.be.below(1e-9);
    });
  }

  it('gives real, even outputs for two real, even inputs packed as one complex input', () => {
    const n = 512;
    const rnd = seededRandom(7);
    const re = new Float64Array(n);
    const im = new Float64Array(n);
    for (let k = 0; k <= n / 2; k++) {
      re[k] = re[(n - k) % n] = rnd();
      im[k] = im[(n - k) % n] = rnd();
    }
    const ref = naiveDft(re, im);
    new Fft(n).transform(re, im);
    expect(maxError({ re, im }, ref)).to.be.below(1e-9);
    for (let k = 1; k < n / 2; k++) {
      expect(Math.abs(re[k]! - re[n - k]!)).to.be.below(1e-9);
      expect(Math.abs(im[k]! - im[n - k]!)).to.be.below(1e-9);
    }
  });

  for (const n of [8, 16, 64, 512]) {
    it(`transforms two real, even sequences from their first halves as the naive DFT does (size ${n})`, () => {
      const rnd = seededRandom(100 + n);
      const re = new Float64Array(n);
      const im = new Float64Array(n);
      for (let k = 0; k <= n / 2; k++) {
        re[k] = re[(n - k) % n] = rnd() * 2 - 1;
        im[k] = im[(n - k) % n] = rnd() * 2 - 1;
      }
      const ref = naiveDft(re, im);
      // Only the first halves go in; what lies beyond them must not be read.
      const a = Float64Array.from(re).fill(Number.NaN, n / 2 + 1);
      const b = Float64Array.from(im).fill(Number.NaN, n / 2 + 1);
      new EvenPairDft(n).transform(a, b);
      for (let k = 0; k <= n / 2; k++) {
        // The DFT of a real, even sequence is real: re carries the first one's, im the second's.
        expect(Math.abs(a[k]! - ref.re[k]!), `a[${k}]`).to.be.below(1e-9);
        expect(Math.abs(b[k]! - ref.im[k]!), `b[${k}]`).to.be.below(1e-9);
      }
    });
  }

  for (const n of [16, 256, 512, 1024]) {
    it(`runs its radix-4 passes in WebAssembly SIMD on its scratch arrays, bit-identical to JavaScript (size ${n})`, () => {
      const fft = new Fft(n);
      expect(fft.simdPasses, 'SIMD passes available on this runtime').to.equal(true);
      const rnd = seededRandom(200 + n);
      const re = Float64Array.from({ length: n }, () => rnd() * 2 - 1);
      const im = Float64Array.from({ length: n }, () => rnd() * 2 - 1);
      const [sr, si] = fft.scratch();
      sr.set(re);
      si.set(im);
      fft.transform(re, im); // plain arrays: the JavaScript passes
      fft.transform(sr, si); // the kernel's arrays: the SIMD passes
      expect(Array.from(sr)).to.deep.equal(Array.from(re));
      expect(Array.from(si)).to.deep.equal(Array.from(im));
    });
  }

  it('rejects sizes that are not powers of two', () => {
    expect(() => new Fft(48)).to.throw(/power of two/);
    expect(() => new Fft(2)).to.throw(/power of two/);
  });
});
