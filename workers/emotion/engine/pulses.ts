// Owns cycle-to-cycle perturbation: glottal pulses are followed through each voiced run by cross-correlating
// one period with the next (like Praat's "To PointProcess (periodic, cc)"), with sub-sample precision
// from parabolic interpolation (8 kHz alone would quantise a 120 Hz period to 1.5 %). Jitter and shimmer
// follow Praat's "local" definitions and limits (period 0.1–20 ms, period factor 1.3, amplitude factor 1.6).
import { parabolicPeak } from './dsp';
import type { FrameTrack } from './frames';

const MIN_PERIOD = 0.0001;
const MAX_PERIOD = 0.02;
const MAX_PERIOD_FACTOR = 1.3;
const MAX_AMPLITUDE_FACTOR = 1.6;
/** Below this correlation between consecutive cycles the run has lost its periodicity. */
const MIN_CYCLE_CORRELATION = 0.5;

export interface Perturbation {
  /** Local jitter, a fraction (Praat prints it as a percentage). NaN with fewer than 3 periods. */
  jitter: number;
  /** Local shimmer, a fraction. NaN with fewer than 3 periods. */
  shimmer: number;
  periods: number;
}

/** Sums that can be added across runs and windows before the ratios are taken. */
interface Sums {
  dT: number;
  nDT: number;
  T: number;
  nT: number;
  dA: number;
  nDA: number;
  A: number;
  nA: number;
}

export function perturbation(x: Float32Array, track: FrameTrack, include: (frame: number) => boolean): Perturbation {
  const sums: Sums = { dT: 0, nDT: 0, T: 0, nT: 0, dA: 0, nDA: 0, A: 0, nA: 0 };
  const n = track.f0.length;
  let k = 0;
  while (k < n) {
    if (!(track.f0[k]! > 0 && include(k))) {
      k++;
      continue;
    }
    let m = k;
    while (m + 1 < n && track.f0[m + 1]! > 0 && include(m + 1)) m++;
    if (m - k + 1 >= 3) followRun(x, track, k, m, sums);
    k = m + 1;
  }
  return {
    jitter: sums.nDT > 0 && sums.nT > 0 ? sums.dT / sums.nDT / (sums.T / sums.nT) : Number.NaN,
    shimmer: sums.nDA > 0 && sums.nA > 0 ? sums.dA / sums.nDA / (sums.A / sums.nA) : Number.NaN,
    periods: sums.nT,
  };
}

function followRun(x: Float32Array, t: FrameTrack, first: number, last: number, sums: Sums): void {
  const rate = t.rate;
  const half = t.frameLength / 2;
  const lo = Math.max(0, Math.floor(t.starts[first]! + half - t.hop / 2));
  const hi = Math.min(x.length - 1, Math.ceil(t.starts[last]! + half + t.hop / 2));
  const periodAt = (s: number): number => {
    const k = Math.min(last, Math.max(first, Math.round((s - half - t.starts[0]!) / t.hop)));
    const f = t.f0[k]! > 0 ? t.f0[k]! : t.f0[first]!;
    return rate / f;
  };
  // Anchor at the strongest peak near the middle of the run; its polarity is followed throughout.
  const mid = Math.round((lo + hi) / 2);
  const T0 = periodAt(mid);
  let anchor = mid;
  for (let i = Math.max(lo, Math.round(mid - T0 / 2)); i <= Math.min(hi, Math.round(mid + T0 / 2)); i++) {
    if (Math.abs(x[i]!) > Math.abs(x[anchor]!)) anchor = i;
  }
  const sign = x[anchor]! >= 0 ? 1 : -1;
  const forward = walk(x, anchor, +1, lo, hi, periodAt);
  const backward = walk(x, anchor, -1, lo, hi, periodAt);
  const marks = [...backward.reverse(), anchor, ...forward];

  const periods: number[] = [];
  for (let i = 0; i + 1 < marks.length; i++) periods.push((marks[i + 1]! - marks[i]!) / rate);
  for (let i = 0; i < periods.length; i++) {
    const p = periods[i]!;
    if (p < MIN_PERIOD || p > MAX_PERIOD) continue;
    sums.T += p;
    sums.nT++;
    const q = i > 0 ? periods[i - 1]! : 0;
    if (q >= MIN_PERIOD && q <= MAX_PERIOD && Math.max(p, q) / Math.min(p, q) <= MAX_PERIOD_FACTOR) {
      sums.dT += Math.abs(p - q);
      sums.nDT++;
    }
  }
  // Each pulse's amplitude is the peak within half a period of its mark (marks can sit a little off the peak).
  const amps = marks.map((m) => peakAmplitude(x, m - periodAt(m) / 2, m + periodAt(m) / 2, sign));
  for (let i = 0; i < amps.length; i++) {
    const a = amps[i]!;
    if (!(a > 0)) continue;
    sums.A += a;
    sums.nA++;
    const b = i > 0 ? amps[i - 1]! : 0;
    if (b > 0 && Math.max(a, b) / Math.min(a, b) <= MAX_AMPLITUDE_FACTOR) {
      sums.dA += Math.abs(a - b);
      sums.nDA++;
    }
  }
}

/** Pulse marks (fractional sample positions) from the anchor towards one end of the run. */
function walk(x: Float32Array, anchor: number, dir: 1 | -1, lo: number, hi: number, periodAt: (s: number) => number): number[] {
  const marks: number[] = [];
  let t = anchor;
  for (;;) {
    const T = periodAt(t);
    const w = Math.max(4, Math.round(T));
    const minLag = Math.floor(0.8 * T);
    const maxLag = Math.ceil(1.25 * T);
    const base = Math.round(t) - (dir > 0 ? 0 : w);
    if (base < lo || base + w > hi) break;
    const firstLag = minLag - 1;
    const rs = correlations(x, base, w, dir, firstLag, maxLag + 1, lo, hi);
    let bestLag = -1;
    let bestR = -Infinity;
    for (let lag = minLag; lag <= maxLag; lag++) {
      const r = rs[lag - firstLag]!;
      if (r > bestR) {
        bestR = r;
        bestLag = lag;
      }
    }
    if (bestLag < 0 || bestR < MIN_CYCLE_CORRELATION) break;
    const idx = bestLag - firstLag;
    const a = rs[idx - 1]!;
    const c = rs[idx + 1]!;
    const offset = Number.isNaN(a) || Number.isNaN(c) ? 0 : parabolicPeak(a, bestR, c).offset;
    t = t + dir * (bestLag + offset);
    if (t < lo || t > hi) break;
    marks.push(t);
  }
  return marks;
}

/** Longest lag range a cycle is compared over: periods up to 1 / 75 Hz at 80 kHz, with margin. */
const MAX_LAGS = 2048;
const lagScratch = new Float64Array(MAX_LAGS);

/**
 * Normalised cross-correlation of the cycle x[base, base + w) with the stretch `lag` samples away (towards
 * `dir`), for every lag in [firstLag, lastLag]: NaN where that stretch leaves [lo, hi]. Four lags are summed
 * side by side, each in its own accumulators and in the same order as one lag alone (so every value is
 * bit-identical to the one-lag loop): four independent chains of additions instead of one keep the
 * processor's floating-point units busy. The result is a view on a scratch array, valid until the next call.
 */
export function correlations(x: Float32Array, base: number, w: number, dir: 1 | -1, firstLag: number, lastLag: number, lo: number, hi: number): Float64Array {
  const count = lastLag - firstLag + 1;
  const rs = count <= MAX_LAGS ? lagScratch.subarray(0, count) : new Float64Array(count);
  // The cycle's own energy is the same at every lag.
  let sxx = 0;
  for (let i = 0; i < w; i++) sxx += x[base + i]! * x[base + i]!;
  let lag = firstLag;
  while (lag <= lastLag) {
    if (lag + 3 <= lastLag && inside(base, w, dir, lag, lo, hi) && inside(base, w, dir, lag + 3, lo, hi)) {
      // The stretches of lags lag … lag + 3 are consecutive: inside at both ends means inside throughout.
      const o0 = base + dir * lag;
      const o1 = o0 + dir;
      const o2 = o1 + dir;
      const o3 = o2 + dir;
      let sxy0 = 0;
      let syy0 = 0;
      let sxy1 = 0;
      let syy1 = 0;
      let sxy2 = 0;
      let syy2 = 0;
      let sxy3 = 0;
      let syy3 = 0;
      for (let i = 0; i < w; i++) {
        const a = x[base + i]!;
        const b0 = x[o0 + i]!;
        const b1 = x[o1 + i]!;
        const b2 = x[o2 + i]!;
        const b3 = x[o3 + i]!;
        sxy0 += a * b0;
        syy0 += b0 * b0;
        sxy1 += a * b1;
        syy1 += b1 * b1;
        sxy2 += a * b2;
        syy2 += b2 * b2;
        sxy3 += a * b3;
        syy3 += b3 * b3;
      }
      const k = lag - firstLag;
      rs[k] = normalised(sxy0, sxx, syy0);
      rs[k + 1] = normalised(sxy1, sxx, syy1);
      rs[k + 2] = normalised(sxy2, sxx, syy2);
      rs[k + 3] = normalised(sxy3, sxx, syy3);
      lag += 4;
      continue;
    }
    if (!inside(base, w, dir, lag, lo, hi)) {
      rs[lag - firstLag] = Number.NaN;
    } else {
      const other = base + dir * lag;
      let sxy = 0;
      let syy = 0;
      for (let i = 0; i < w; i++) {
        const b = x[other + i]!;
        sxy += x[base + i]! * b;
        syy += b * b;
      }
      rs[lag - firstLag] = normalised(sxy, sxx, syy);
    }
    lag++;
  }
  return rs;
}

/** Whether the stretch `lag` samples from the cycle at `base` (length w, towards `dir`) lies in [lo, hi]. */
function inside(base: number, w: number, dir: 1 | -1, lag: number, lo: number, hi: number): boolean {
  const other = base + dir * lag;
  return other >= lo && other + w <= hi;
}

function normalised(sxy: number, sxx: number, syy: number): number {
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0;
}

/** Largest excursion of the followed polarity between two marks, refined by a parabola. */
function peakAmplitude(x: Float32Array, from: number, to: number, sign: number): number {
  const a = Math.max(1, Math.floor(from));
  const b = Math.min(x.length - 2, Math.ceil(to));
  let best = a;
  for (let i = a; i <= b; i++) if (sign * x[i]! > sign * x[best]!) best = i;
  return parabolicPeak(sign * x[best - 1]!, sign * x[best]!, sign * x[best + 1]!).value;
}
