// Owns the signal-processing primitives the features need: an in-place radix-2 FFT with cached tables,
// a Hann window and its autocorrelation (to undo the window's taper, as Boersma 1993 does), parabolic peaks.

export class Fft {
  readonly size: number;
  /** Twiddles of every stage laid out contiguously (stage of length `len` starts at offset len/2 - 1). */
  private readonly wr: Float64Array;
  private readonly wi: Float64Array;
  private readonly rev: Uint32Array;

  constructor(size: number) {
    if (size < 4 || (size & (size - 1)) !== 0) throw new Error(`FFT size ${size} is not a power of two >= 4`);
    this.size = size;
    this.wr = new Float64Array(size);
    this.wi = new Float64Array(size);
    for (let len = 8; len <= size; len <<= 1) {
      const half = len >> 1;
      for (let k = 0; k < half; k++) {
        this.wr[half - 1 + k] = Math.cos((2 * Math.PI * k) / len);
        this.wi[half - 1 + k] = -Math.sin((2 * Math.PI * k) / len);
      }
    }
    this.rev = new Uint32Array(size);
    const bits = Math.log2(size);
    for (let i = 0; i < size; i++) {
      let r = 0;
      for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
      this.rev[i] = r;
    }
  }

  /** Forward transform in place (no scaling). Real, even inputs give real, even outputs, used for inverses. */
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
    const wr = this.wr;
    const wi = this.wi;
    for (let len = 8; len <= n; len <<= 1) {
      const half = len >> 1;
      const off = half - 1;
      for (let start = 0; start < n; start += len) {
        for (let k = 0; k < half; k++) {
          const a = start + k;
          const b = a + half;
          const cr = wr[off + k]!;
          const ci = wi[off + k]!;
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

export function median(xs: number[]): number {
  return percentile(xs, 0.5);
}
