// Owns the short-time analysis of one stretch of 8 kHz audio: per 40 ms frame its level, pitch candidates
// (Boersma's autocorrelation method with window correction and a Viterbi path, as Praat's "To Pitch (ac)"),
// cepstral peak prominence and spectral balance (alpha ratio, Hammarberg index). Two frames share one
// complex FFT (real-signal packing), which halves the cost of the dominant step.
import { EvenPairDft, Fft, hann, parabolicPeak, windowAutocorrelation } from './dsp';

const F0_MIN = 75;
const F0_MAX = 500;
const FRAME_SECONDS = 3 / F0_MIN; // three periods of the lowest pitch, Praat's default window
const VOICING_THRESHOLD = 0.45;
const SILENCE_THRESHOLD = 0.03;
const OCTAVE_COST = 0.01;
const OCTAVE_JUMP_COST = 0.35;
const VOICED_UNVOICED_COST = 0.14;
const MAX_CANDIDATES = 4;
/** Frames more than this far below the stretch's loudest frame are not analysed (they are not speech). */
const ENERGY_GATE_DB = 50;
/** Digital near-silence only: speech recorded 40 dB below full scale still sits well above this, so the
 *  analysis does not depend on the recording gain (the relative gate above does the real work). */
const ABSOLUTE_FLOOR_DB = -95;
const DB_PER_LN = 10 / Math.LN10;

/** CPPS peak search (Hillenbrand's 60–330 Hz) and the regression's quefrency range. */
const CPP_F0_MIN = 60;
const CPP_F0_MAX = 330;
const CPP_LINE_START_SECONDS = 0.001;

/** Coarse spectral bands (Hz) for spectral flux and slope: level-free shape of the spectrum per frame. */
export const BAND_EDGES_HZ = [100, 500, 1000, 1500, 2000, 3000, 3900] as const;
export const BANDS = BAND_EDGES_HZ.length - 1;
/** Formant-region centroids: F1 region (250–1000 Hz) and F2 region (1000–2800 Hz), proxies of F1 and F2. */
const F1_REGION: [number, number] = [250, 1000];
const F2_REGION: [number, number] = [1000, 2800];

export interface FrameTrack {
  rate: number;
  hop: number;
  frameLength: number;
  /** First sample of each frame. */
  starts: Int32Array;
  levelDb: Float64Array;
  /** Best window-corrected autocorrelation peak in the pitch range (0 when not analysed). */
  periodicity: Float64Array;
  /** Chosen pitch in Hz, 0 for unvoiced frames. */
  f0: Float64Array;
  /** Cepstral peak prominence in dB, NaN when not analysed. */
  cpp: Float64Array;
  /** Energy 1–4 kHz over 50–1000 Hz, dB, as eGeMAPS (which uses 1–5 kHz; 8 kHz audio ends at 4 kHz). Flatter tilt → higher. */
  alphaRatio: Float64Array;
  /** Strongest peak 0–2 kHz minus strongest 2–4 kHz, dB. */
  hammarberg: Float64Array;
  /** Band levels (BAND_EDGES_HZ) relative to the frame's mean band level, dB; BANDS values per frame, NaN when not analysed. */
  bands: Float32Array;
  /** Power-weighted centroid of the F1 region (Hz), NaN when not analysed. */
  f1Centroid: Float32Array;
  /** Power-weighted centroid of the F2 region (Hz), NaN when not analysed. */
  f2Centroid: Float32Array;
  analysed: Uint8Array;
}

interface Candidates {
  f: Float64Array;
  strength: Float64Array;
  count: Uint8Array;
  unvoiced: Float64Array;
}

/** Reusable per-rate state: window, tables, FFT, scratch. One instance per engine (not thread-safe). */
export class FrameAnalyser {
  readonly frameLength: number;
  private readonly n: number;
  private readonly fft: Fft;
  private readonly evenFft: EvenPairDft;
  private readonly win: Float64Array;
  private readonly winAc: Float64Array;
  private readonly re: Float64Array;
  private readonly im: Float64Array;
  private readonly p1: Float64Array;
  private readonly p2: Float64Array;
  private readonly minLag: number;
  private readonly maxLag: number;
  private readonly cppLo: number;
  private readonly cppHi: number;
  private readonly cppLineStart: number;
  private readonly cepDb: Float64Array;
  private readonly cepSmooth: Float64Array;
  private readonly bins: {
    alphaLo: [number, number];
    alphaHi: [number, number];
    hamLo: [number, number];
    hamHi: [number, number];
    bands: number[];
    f1: [number, number];
    f2: [number, number];
  };

  constructor(readonly rate: number) {
    this.frameLength = Math.round(FRAME_SECONDS * rate);
    // Linear (not circular) autocorrelation needs n >= frameLength + maxLag.
    this.maxLag = Math.ceil(rate / F0_MIN);
    this.minLag = Math.floor(rate / F0_MAX);
    let n = 1;
    while (n < this.frameLength + this.maxLag + 2) n <<= 1;
    this.n = n;
    this.fft = new Fft(n);
    this.evenFft = new EvenPairDft(n);
    this.win = hann(this.frameLength);
    this.winAc = windowAutocorrelation(this.win);
    [this.re, this.im] = this.fft.scratch();
    this.p1 = new Float64Array(n);
    this.p2 = new Float64Array(n);
    this.cppLo = Math.floor(rate / CPP_F0_MAX);
    this.cppHi = Math.min(n / 2 - 2, Math.ceil(rate / CPP_F0_MIN));
    this.cppLineStart = Math.round(CPP_LINE_START_SECONDS * rate);
    const lineEnd = Math.min(n / 2 - 2, this.cppHi + 20);
    this.cepDb = new Float64Array(lineEnd + 2);
    this.cepSmooth = new Float64Array(lineEnd + 2);
    const bin = (hz: number): number => Math.min(n / 2, Math.max(0, Math.round((hz * n) / rate)));
    const nyq = rate / 2;
    this.bins = {
      alphaLo: [bin(50), bin(1000)],
      alphaHi: [bin(1000), bin(Math.min(5000, nyq))],
      hamLo: [bin(0), bin(2000)],
      hamHi: [bin(2000), bin(Math.min(5000, nyq))],
      bands: BAND_EDGES_HZ.map((hz) => bin(Math.min(hz, nyq))),
      f1: [bin(F1_REGION[0]), bin(F1_REGION[1])],
      f2: [bin(F2_REGION[0]), bin(Math.min(F2_REGION[1], nyq))],
    };
  }

  /** Analyses frames starting every `hop` samples with the whole frame inside [start, end). */
  analyse(x: Float32Array, start: number, end: number, hop: number): FrameTrack {
    const L = this.frameLength;
    const count = end - start >= L ? Math.floor((end - start - L) / hop) + 1 : 0;
    const t: FrameTrack = {
      rate: this.rate,
      hop,
      frameLength: L,
      starts: new Int32Array(count),
      levelDb: new Float64Array(count),
      periodicity: new Float64Array(count),
      f0: new Float64Array(count),
      cpp: new Float64Array(count).fill(Number.NaN),
      alphaRatio: new Float64Array(count).fill(Number.NaN),
      hammarberg: new Float64Array(count).fill(Number.NaN),
      bands: new Float32Array(count * BANDS).fill(Number.NaN),
      f1Centroid: new Float32Array(count).fill(Number.NaN),
      f2Centroid: new Float32Array(count).fill(Number.NaN),
      analysed: new Uint8Array(count),
    };
    if (count === 0) return t;
    const peaks = new Float64Array(count);
    let loudest = -Infinity;
    let globalPeak = 0;
    for (let k = 0; k < count; k++) {
      const s = start + k * hop;
      t.starts[k] = s;
      let sum = 0;
      let peak = 0;
      for (let i = s; i < s + L; i++) {
        const v = x[i]!;
        sum += v * v;
        const a = v < 0 ? -v : v;
        if (a > peak) peak = a;
      }
      const db = 10 * Math.log10(sum / L + 1e-12);
      t.levelDb[k] = db;
      peaks[k] = peak;
      if (db > loudest) loudest = db;
      if (peak > globalPeak) globalPeak = peak;
    }
    const gate = Math.max(ABSOLUTE_FLOOR_DB, loudest - ENERGY_GATE_DB);
    const todo: number[] = [];
    for (let k = 0; k < count; k++) if (t.levelDb[k]! > gate) todo.push(k);
    for (const k of todo) t.analysed[k] = 1;

    const cand: Candidates = {
      f: new Float64Array(count * MAX_CANDIDATES),
      strength: new Float64Array(count * MAX_CANDIDATES),
      count: new Uint8Array(count),
      unvoiced: new Float64Array(count).fill(1),
    };
    for (let j = 0; j < todo.length; j += 2) {
      const a = todo[j]!;
      const b = j + 1 < todo.length ? todo[j + 1]! : -1;
      this.analysePair(x, t, cand, a, b);
    }
    // Praat's unvoiced strength: quiet frames (relative to the stretch's peak) lean towards unvoiced.
    for (let k = 0; k < count; k++) {
      const rel = globalPeak > 0 ? peaks[k]! / globalPeak : 0;
      cand.unvoiced[k] = VOICING_THRESHOLD + Math.max(0, 2 - rel / (SILENCE_THRESHOLD / (1 + VOICING_THRESHOLD)));
    }
    viterbi(t, cand, hop / this.rate);
    return t;
  }

  private analysePair(x: Float32Array, t: FrameTrack, cand: Candidates, a: number, b: number): void {
    const { n, re, im, win, p1, p2 } = this;
    const half = n >> 1;
    const L = this.frameLength;
    re.fill(0);
    im.fill(0);
    const rev = this.fft.rev;
    fillFrame(x, t.starts[a]!, L, win, re, rev);
    if (b >= 0) fillFrame(x, t.starts[b]!, L, win, im, rev);
    this.fft.transformBitReversed(re, im);
    // Unpack the two real spectra: X1[k] = (Z[k] + Z*[n-k]) / 2, X2[k] = (Z[k] - Z*[n-k]) / 2i.
    // Both power spectra are even: only bins 0..n/2 are computed (everything below reads no further).
    for (let k = 0; k <= half; k++) {
      const m = (n - k) & (n - 1);
      const rk = re[k]!;
      const rm = re[m]!;
      const ik = im[k]!;
      const imm = im[m]!;
      const xr = rk + rm;
      const xi = ik - imm;
      const yr = ik + imm;
      const yi = rk - rm;
      const q1 = 0.25 * (xr * xr + xi * xi);
      const q2 = 0.25 * (yr * yr + yi * yi);
      p1[k] = q1;
      p2[k] = q2;
    }
    this.spectralBalance(p1, t, a);
    if (b >= 0) this.spectralBalance(p2, t, b);

    // Autocorrelations of both frames: the transforms of the (real, even) power spectra, lags 0..n/2.
    re.set(p1.subarray(0, half + 1));
    im.set(p2.subarray(0, half + 1));
    this.evenFft.transform(re, im);
    this.pitchCandidates(re, t, cand, a);
    if (b >= 0) this.pitchCandidates(im, t, cand, b);

    // Real cepstra of both frames: the transforms of the log power spectra (also real and even).
    for (let k = 0; k <= half; k++) {
      re[k] = DB_PER_LN * Math.log(p1[k]! + 1e-12);
      im[k] = DB_PER_LN * Math.log(p2[k]! + 1e-12);
    }
    this.evenFft.transform(re, im);
    t.cpp[a] = this.cepstralPeakProminence(re);
    if (b >= 0) t.cpp[b] = this.cepstralPeakProminence(im);
  }

  private spectralBalance(p: Float64Array, t: FrameTrack, k: number): void {
    const { alphaLo, alphaHi, hamLo, hamHi } = this.bins;
    let lo = 0;
    let hi = 0;
    for (let i = alphaLo[0]; i < alphaLo[1]; i++) lo += p[i]!;
    for (let i = alphaHi[0]; i < alphaHi[1]; i++) hi += p[i]!;
    let peakLo = 0;
    let peakHi = 0;
    for (let i = hamLo[0]; i < hamLo[1]; i++) if (p[i]! > peakLo) peakLo = p[i]!;
    for (let i = hamHi[0]; i < hamHi[1]; i++) if (p[i]! > peakHi) peakHi = p[i]!;
    t.alphaRatio[k] = 10 * Math.log10((hi + 1e-12) / (lo + 1e-12));
    t.hammarberg[k] = 10 * Math.log10((peakLo + 1e-12) / (peakHi + 1e-12));
    // Band levels relative to their own mean: the shape of the spectrum, whatever the gain.
    const edges = this.bins.bands;
    let meanDb = 0;
    for (let b = 0; b < BANDS; b++) {
      let e = 0;
      for (let i = edges[b]!; i < edges[b + 1]!; i++) e += p[i]!;
      const db = 10 * Math.log10(e / (edges[b + 1]! - edges[b]!) + 1e-12);
      t.bands[k * BANDS + b] = db;
      meanDb += db / BANDS;
    }
    for (let b = 0; b < BANDS; b++) t.bands[k * BANDS + b] = t.bands[k * BANDS + b]! - meanDb;
    t.f1Centroid[k] = centroid(p, this.bins.f1, this.rate / this.n);
    t.f2Centroid[k] = centroid(p, this.bins.f2, this.rate / this.n);
  }

  private pitchCandidates(ac: Float64Array, t: FrameTrack, cand: Candidates, k: number): void {
    const r0 = ac[0]!;
    if (!(r0 > 0)) return;
    const { minLag, maxLag, winAc } = this;
    let best = 0;
    let count = 0;
    const base = k * MAX_CANDIDATES;
    // r(τ) = ac(τ) / ac(0) / r_w(τ): the window-corrected normalised autocorrelation.
    let prev = ac[minLag - 1]! / r0 / winAc[minLag - 1]!;
    let cur = ac[minLag]! / r0 / winAc[minLag]!;
    for (let lag = minLag; lag <= maxLag; lag++) {
      const next = ac[lag + 1]! / r0 / winAc[lag + 1]!;
      if (cur > 0.3 * VOICING_THRESHOLD && cur >= prev && cur >= next) {
        const pk = parabolicPeak(prev, cur, next);
        const value = Math.min(1, pk.value);
        const period = (lag + pk.offset) / this.rate;
        if (value > best) best = value;
        const strength = value - OCTAVE_COST * Math.log2(F0_MIN * period);
        // Keep the strongest few candidates per frame.
        let slot = count;
        if (count === MAX_CANDIDATES) {
          slot = 0;
          for (let c = 1; c < MAX_CANDIDATES; c++) if (cand.strength[base + c]! < cand.strength[base + slot]!) slot = c;
          if (strength <= cand.strength[base + slot]!) slot = -1;
        } else {
          count++;
        }
        if (slot >= 0) {
          cand.f[base + slot] = 1 / period;
          cand.strength[base + slot] = strength;
        }
      }
      prev = cur;
      cur = next;
    }
    cand.count[k] = count;
    t.periodicity[k] = best;
  }

  /** CPP: dB power-cepstrum peak (60–330 Hz quefrencies) above the regression line through the cepstrum. */
  private cepstralPeakProminence(c: Float64Array): number {
    const { cppLo, cppHi, cppLineStart, cepDb, cepSmooth } = this;
    const lineEnd = cepSmooth.length - 2;
    const scale = 1 / (this.n * this.n);
    for (let q = cppLineStart - 1; q <= lineEnd + 1; q++) {
      const v = c[q]!;
      cepDb[q] = DB_PER_LN * Math.log(v * v * scale + 1e-20);
    }
    // Power cepstrum in dB, smoothed over ±1 quefrency bin (Hillenbrand's quefrency smoothing),
    // and the least-squares line through it from 1 ms on.
    let sx = 0;
    let sy = 0;
    let sxx = 0;
    let sxy = 0;
    let m = 0;
    for (let q = cppLineStart; q <= lineEnd; q++) {
      const y = (cepDb[q - 1]! + cepDb[q]! + cepDb[q + 1]!) / 3;
      cepSmooth[q] = y;
      sx += q;
      sy += y;
      sxx += q * q;
      sxy += q * y;
      m++;
    }
    const slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
    const icept = (sy - slope * sx) / m;
    let bestQ = cppLo;
    for (let q = cppLo; q <= cppHi; q++) if (cepSmooth[q]! > cepSmooth[bestQ]!) bestQ = q;
    return cepSmooth[bestQ]! - (icept + slope * bestQ);
  }
}

function centroid(p: Float64Array, [from, to]: [number, number], hzPerBin: number): number {
  let w = 0;
  let sum = 0;
  for (let i = from; i < to; i++) {
    w += p[i]!;
    sum += p[i]! * i;
  }
  return w > 0 ? (sum / w) * hzPerBin : Number.NaN;
}

/** The frame minus its mean, windowed, written in the FFT's bit-reversed order (`out` already zeroed). */
function fillFrame(x: Float32Array, s: number, L: number, win: Float64Array, out: Float64Array, rev: Uint32Array): void {
  let m = 0;
  for (let i = 0; i < L; i++) m += x[s + i]!;
  m /= L;
  for (let i = 0; i < L; i++) out[rev[i]!] = (x[s + i]! - m) * win[i]!;
}

/** Praat's path finder: maximise strengths minus octave-jump and voicing-transition costs. */
function viterbi(t: FrameTrack, cand: Candidates, dt: number): void {
  const count = t.f0.length;
  if (count === 0) return;
  const K = MAX_CANDIDATES + 1; // slot 0 = unvoiced
  const timeCorrection = 0.01 / dt;
  const score = new Float64Array(count * K).fill(-Infinity);
  const back = new Int8Array(count * K);
  const freq = (k: number, c: number): number => (c === 0 ? 0 : cand.f[k * MAX_CANDIDATES + c - 1]!);
  const local = (k: number, c: number): number => (c === 0 ? cand.unvoiced[k]! : cand.strength[k * MAX_CANDIDATES + c - 1]!);
  const slots = (k: number): number => 1 + cand.count[k]!;
  const transition = (f1: number, f2: number): number => {
    if (f1 === 0 && f2 === 0) return 0;
    if (f1 === 0 || f2 === 0) return VOICED_UNVOICED_COST * timeCorrection;
    return OCTAVE_JUMP_COST * timeCorrection * Math.abs(Math.log2(f1 / f2));
  };
  for (let c = 0; c < slots(0); c++) score[c] = local(0, c);
  for (let k = 1; k < count; k++) {
    for (let c = 0; c < slots(k); c++) {
      const f = freq(k, c);
      let best = -Infinity;
      let arg = 0;
      for (let p = 0; p < slots(k - 1); p++) {
        const s = score[(k - 1) * K + p]! - transition(freq(k - 1, p), f);
        if (s > best) {
          best = s;
          arg = p;
        }
      }
      score[k * K + c] = best + local(k, c);
      back[k * K + c] = arg;
    }
  }
  let c = 0;
  for (let s = 1; s < slots(count - 1); s++) if (score[(count - 1) * K + s]! > score[(count - 1) * K + c]!) c = s;
  for (let k = count - 1; k >= 0; k--) {
    t.f0[k] = freq(k, c);
    c = back[k * K + c]!;
  }
}
