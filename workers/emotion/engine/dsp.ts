// Owns the signal-processing primitives the features need: an in-place radix-4 FFT with cached tables (its
// radix-4 passes in WebAssembly SIMD on its own scratch arrays, fft-simd.ts), the transform of pairs of real,
// even sequences, a Hann window and its autocorrelation (to undo the window's taper, as Boersma 1993 does),
// parabolic peaks.
import { SimdQuadPasses } from './fft-simd';

export class Fft {
  readonly size: number;
  /** Radix-4 stages after the first (trivial) one: quarter length h, offset into `tw4` (6 values per k). */
  private readonly quads: Array<{ h: number; at: number }> = [];
  /** Per radix-4 stage and k < h: cos and −sin of 2πk·{2, 1, 3}/(4h), interleaved. */
  private readonly tw4: Float64Array;
  /** The last radix-2 stage (sizes that are not a power of 4): cos and −sin of 2πk/n, k < n/2. */
  private readonly tw2: Float64Array | null;
  /** Bit-reversal permutation: a caller that writes its input at rev[i] can skip the permutation pass. */
  readonly rev: Uint32Array;
  /** The radix-4 passes in WebAssembly SIMD, on the arrays `scratch()` hands out (null without SIMD). */
  private readonly simd: SimdQuadPasses | null;

  constructor(size: number) {
    if (size < 4 || (size & (size - 1)) !== 0) throw new Error(`FFT size ${size} is not a power of two >= 4`);
    this.size = size;
    let at = 0;
    let len = 4;
    for (; len * 4 <= size; len *= 4) {
      this.quads.push({ h: len, at });
      at += 6 * len;
    }
    this.tw4 = new Float64Array(at);
    for (const { h, at: base } of this.quads) {
      for (let k = 0; k < h; k++) {
        const a = (2 * Math.PI * k) / (4 * h);
        const o = base + 6 * k;
        this.tw4[o] = Math.cos(2 * a);
        this.tw4[o + 1] = -Math.sin(2 * a);
        this.tw4[o + 2] = Math.cos(a);
        this.tw4[o + 3] = -Math.sin(a);
        this.tw4[o + 4] = Math.cos(3 * a);
        this.tw4[o + 5] = -Math.sin(3 * a);
      }
    }
    if (len === size) {
      this.tw2 = null;
    } else {
      const half = size >> 1;
      this.tw2 = new Float64Array(2 * half);
      for (let k = 0; k < half; k++) {
        this.tw2[2 * k] = Math.cos((2 * Math.PI * k) / size);
        this.tw2[2 * k + 1] = -Math.sin((2 * Math.PI * k) / size);
      }
    }
    this.simd = SimdQuadPasses.create(size, this.quads);
    this.rev = new Uint32Array(size);
    const bits = Math.log2(size);
    for (let i = 0; i < size; i++) {
      let r = 0;
      for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
      this.rev[i] = r;
    }
  }

  /** Whether the radix-4 passes run in WebAssembly SIMD (on the `scratch()` arrays). */
  get simdPasses(): boolean {
    return this.simd !== null;
  }

  /** The pair of working arrays this FFT transforms fastest (in the SIMD kernel's memory when there is one). */
  scratch(): [Float64Array, Float64Array] {
    return this.simd ? [this.simd.re, this.simd.im] : [new Float64Array(this.size), new Float64Array(this.size)];
  }

  /** Forward transform in place (no scaling). Real, even inputs give real, even outputs, used for inverses.
   *  Decimation in time on bit-reversed input, two radix-2 stages fused into each radix-4 pass (three complex
   *  multiplications per four points, half the passes over the arrays), and a last radix-2 pass when the size
   *  is not a power of four. */
  transform(re: Float64Array, im: Float64Array): void {
    const n = this.size;
    const rev = this.rev;
    for (let i = 0; i < n; i++) {
      const j = rev[i]!;
      if (j > i) {
        const tr = re[i]!;
        re[i] = re[j]!;
        re[j] = tr;
        const ti = im[i]!;
        im[i] = im[j]!;
        im[j] = ti;
      }
    }
    this.transformBitReversed(re, im);
  }

  /** The same transform of an input already stored in bit-reversed order (x[i] at rev[i]). */
  transformBitReversed(re: Float64Array, im: Float64Array): void {
    const n = this.size;
    // The first two stages have trivial twiddles (1 and -i): one radix-4 pass.
    for (let a = 0; a < n; a += 4) {
      const r0 = re[a]! + re[a + 1]!;
      const i0 = im[a]! + im[a + 1]!;
      const r1 = re[a]! - re[a + 1]!;
      const i1 = im[a]! - im[a + 1]!;
      const r2 = re[a + 2]! + re[a + 3]!;
      const i2 = im[a + 2]! + im[a + 3]!;
      const r3 = re[a + 2]! - re[a + 3]!;
      const i3 = im[a + 2]! - im[a + 3]!;
      re[a] = r0 + r2;
      im[a] = i0 + i2;
      re[a + 2] = r0 - r2;
      im[a + 2] = i0 - i2;
      // (r3 + i i3) * (-i) = i3 - i r3
      re[a + 1] = r1 + i3;
      im[a + 1] = i1 - r3;
      re[a + 3] = r1 - i3;
      im[a + 3] = i1 + r3;
    }
    const tw = this.tw4;
    if (this.simd && re === this.simd.re && im === this.simd.im) this.simd.run();
    else
      for (const { h, at } of this.quads) {
        const block = 4 * h;
        for (let start = 0; start < n; start += block) {
          for (let k = 0; k < h; k++) {
            const i0 = start + k;
            const i1 = i0 + h;
            const i2 = i1 + h;
            const i3 = i2 + h;
            const o = at + 6 * k;
            // t1 = W^2k x1, t2 = W^k x2, t3 = W^3k x3 (W = e^(-2πi/4h)).
            const c1 = tw[o]!;
            const s1 = tw[o + 1]!;
            const c2 = tw[o + 2]!;
            const s2 = tw[o + 3]!;
            const c3 = tw[o + 4]!;
            const s3 = tw[o + 5]!;
            const x1r = re[i1]!;
            const x1i = im[i1]!;
            const x2r = re[i2]!;
            const x2i = im[i2]!;
            const x3r = re[i3]!;
            const x3i = im[i3]!;
            const t1r = x1r * c1 - x1i * s1;
            const t1i = x1r * s1 + x1i * c1;
            const t2r = x2r * c2 - x2i * s2;
            const t2i = x2r * s2 + x2i * c2;
            const t3r = x3r * c3 - x3i * s3;
            const t3i = x3r * s3 + x3i * c3;
            const x0r = re[i0]!;
            const x0i = im[i0]!;
            const ar = x0r + t1r;
            const ai = x0i + t1i;
            const br = x0r - t1r;
            const bi = x0i - t1i;
            const cr = t2r + t3r;
            const ci = t2i + t3i;
            const dr = t2r - t3r;
            const di = t2i - t3i;
            re[i0] = ar + cr;
            im[i0] = ai + ci;
            re[i2] = ar - cr;
            im[i2] = ai - ci;
            // (dr + i di) * (-i) = di - i dr
            re[i1] = br + di;
            im[i1] = bi - dr;
            re[i3] = br - di;
            im[i3] = bi + dr;
          }
        }
      }
    const t2 = this.tw2;
    if (t2) {
      const half = n >> 1;
      for (let a = 0; a < half; a++) {
        const b = a + half;
        const cr = t2[2 * a]!;
        const ci = t2[2 * a + 1]!;
        const br = re[b]!;
        const bi = im[b]!;
        const xr = br * cr - bi * ci;
        const xi = br * ci + bi * cr;
        const ar = re[a]!;
        const ai = im[a]!;
        re[b] = ar - xr;
        im[b] = ai - xi;
        re[a] = ar + xr;
        im[a] = ai + xi;
      }
    }
  }
}

/**
 * DFTs of two real, even sequences of length n (x[j] = x[n − j]), given and returned as their first halves
 * (indices 0..n/2; the spectra are real and even too). Autocorrelations and cepstra are such transforms of
 * power and log spectra. Each is a DCT-I of n/2 + 1 points, computed as in Numerical Recipes' cosft1 from
 * one real FFT of n/2 points, and the two real FFTs share one complex FFT of n/2: about 40 % of the work of
 * packing both into one complex FFT of n.
 */
export class EvenPairDft {
  private readonly half: number;
  private readonly fft: Fft;
  /** cos(πj / half) and sin(πj / half), j < half. */
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  private readonly zr: Float64Array;
  private readonly zi: Float64Array;

  constructor(readonly size: number) {
    this.half = size >> 1;
    this.fft = new Fft(this.half);
    this.cos = Float64Array.from({ length: this.half }, (_, j) => Math.cos((Math.PI * j) / this.half));
    this.sin = Float64Array.from({ length: this.half }, (_, j) => Math.sin((Math.PI * j) / this.half));
    [this.zr, this.zi] = this.fft.scratch();
  }

  /** In place on a[0..n/2] and b[0..n/2]; entries beyond n/2 are neither read nor written. */
  transform(a: Float64Array, b: Float64Array): void {
    const N = this.half;
    const { zr, zi, cos, sin } = this;
    const rev = this.fft.rev;
    // C_k = ½x_0 + Σ_{0<j<N} x_j cos(πjk/N) + ½(−1)^k x_N is half the DFT. C_1 directly; the rest from
    // g_j = ½(x_j + x_{N−j}) − sin(πj/N)(x_j − x_{N−j}), whose FFT G gives C_2k = Re G_k and
    // C_2k+1 = C_2k−1 − Im G_k (with G = Σ g e^{−2πijk/N}).
    let c1a = 0.5 * (a[0]! - a[N]!);
    let c1b = 0.5 * (b[0]! - b[N]!);
    zr[0] = 0.5 * (a[0]! + a[N]!);
    zi[0] = 0.5 * (b[0]! + b[N]!);
    for (let j = 1; j < N; j++) {
      const ap = a[j]!;
      const am = a[N - j]!;
      const bp = b[j]!;
      const bm = b[N - j]!;
      c1a += ap * cos[j]!;
      c1b += bp * cos[j]!;
      const s = sin[j]!;
      const r = rev[j]!;
      zr[r] = 0.5 * (ap + am) - s * (ap - am);
      zi[r] = 0.5 * (bp + bm) - s * (bp - bm);
    }
    this.fft.transformBitReversed(zr, zi);
    // Two real FFTs from one complex: Ga_k = (Z_k + Z*_{N−k}) / 2, Gb_k = (Z_k − Z*_{N−k}) / 2i.
    const q = N >> 1;
    let oddA = c1a;
    let oddB = c1b;
    a[0] = zr[0] + zr[0];
    b[0] = zi[0] + zi[0];
    a[1] = 2 * c1a;
    b[1] = 2 * c1b;
    for (let k = 1; k < q; k++) {
      const m = N - k;
      const rk = zr[k]!;
      const rm = zr[m]!;
      const ik = zi[k]!;
      const imm = zi[m]!;
      // Re Ga = (rk + rm)/2, Im Ga = (ik − imm)/2; Re Gb = (ik + imm)/2, Im Gb = −(rk − rm)/2; outputs are 2C.
      a[2 * k] = rk + rm;
      b[2 * k] = ik + imm;
      oddA -= 0.5 * (ik - imm);
      oddB += 0.5 * (rk - rm);
      a[2 * k + 1] = 2 * oddA;
      b[2 * k + 1] = 2 * oddB;
    }
    a[N] = zr[q]! + zr[q]!;
    b[N] = zi[q]! + zi[q]!;
  }
}

export function hann(length: number): Float64Array {
  const w = new Float64Array(length);
  for (let i = 0; i < length; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / length);
  return w;
}

/** Normalised autocorrelation of a window, r_w(τ)/r_w(0), for τ < length. */
export function windowAutocorrelation(w: Float64Array): Float64Array {
  const n = w.length;
  const r = new Float64Array(n);
  for (let lag = 0; lag < n; lag++) {
    let s = 0;
    for (let i = 0; i + lag < n; i++) s += w[i]! * w[i + lag]!;
    r[lag] = s;
  }
  const r0 = r[0]!;
  for (let lag = 0; lag < n; lag++) r[lag] = r[lag]! / r0;
  return r;
}

/** Vertex of the parabola through (i-1, a), (i, b), (i+1, c): offset in [-0.5, 0.5] and height. */
export function parabolicPeak(a: number, b: number, c: number): { offset: number; value: number } {
  const denom = a - 2 * b + c;
  if (denom >= 0) return { offset: 0, value: b };
  const offset = Math.max(-0.5, Math.min(0.5, (0.5 * (a - c)) / denom));
  return { offset, value: b - 0.25 * (a - c) * offset };
}

export function mean(xs: ArrayLike<number>): number {
  if (xs.length === 0) return Number.NaN;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]!;
  return s / xs.length;
}

/** Linear-interpolated percentile (p in 0..1) of an unsorted list; NaN when empty. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = p * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(s.length - 1, lo + 1);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}
