// Owns the per-window acoustic feature vector: the cues of the emotion profiles in the literature (Juslin &
// Laukka 2003; Banse & Scherer 1996; eGeMAPS, Eyben et al. 2016) — F0 level, variability and contour, voice
// quality (jitter, shimmer, HNR, CPPS, H1–H2), spectral balance, slope and flux, formant-region proxies,
// speaking rate, energy dynamics and the steepness of loudness attacks — summarised over the speech frames of
// one 5 s window. Every feature is a ratio, a difference of levels or a frequency, so the recording gain does
// not change it (the window's own level is passed on only for relative.ts's comparison within the recording).
import { FEATURE_NAMES, type FeatureName } from '../../../models/emotion/feature-names';
import { mean, percentile } from './dsp';
import { BAND_EDGES_HZ, BANDS, type FrameTrack } from './frames';
import { perturbation } from './pulses';

export { FEATURE_NAMES, type FeatureName };
export type FeatureVector = Record<FeatureName, number>;

export interface WindowAnalysis {
  /** Share of frames that are speech, 0..1. */
  speechRatio: number;
  /** Seconds of speech in the window. */
  speechSeconds: number;
  /** Median level of the speech frames, dB re full scale (NaN without speech): never a feature itself (the
   *  recording gain would enter), only the input of `level_rel_db` (relative.ts). */
  levelDb: number;
  /** NaN marks a feature that could not be measured (for example F0 in whispered speech). */
  features: FeatureVector;
}

const HNR_MIN_R = 1e-4;
const HNR_MAX_R = 0.9999;
/** Voiced runs shorter than this carry no contour; steeper slopes than the cap are octave errors. */
const MIN_RUN_SECONDS = 0.05;
const MAX_SLOPE_ST_S = 40;
/** Spectral flux compares frames this far apart (≈ 20 ms whatever the hop). */
const FLUX_SECONDS = 0.02;
/** Syllable nuclei (de Jong & Wempe 2009): voiced level peaks at most 25 dB below the window's loudest
 *  speech, each rising at least 2 dB above the dip since the previous nucleus. */
const NUCLEUS_BELOW_MAX_DB = 25;
const NUCLEUS_DIP_DB = 2;
const NUCLEUS_HALF_SPAN_SECONDS = 0.03;
/** H1–H2 is measured on at most this many voiced frames per window (spread evenly): 6 DFT points each. */
const H1H2_MAX_FRAMES = 60;
/** Harmonic amplitudes are searched ±3 % around k·F0 (the pitch track's own precision). */
export const HARMONIC_SEARCH = [0.97, 1, 1.03];
/** Rising parts of the level contour count as attacks when they rise at least this much (dB). */
const ATTACK_MIN_RISE_DB = 3;
const BAND_CENTRES_KHZ = Array.from({ length: BANDS }, (_, b) => (BAND_EDGES_HZ[b]! + BAND_EDGES_HZ[b + 1]!) / 2000);

function hnrFromCorrelation(r: number): number {
  const c = Math.min(HNR_MAX_R, Math.max(HNR_MIN_R, r));
  return 10 * Math.log10(c / (1 - c));
}

export function windowFeatures(x: Float32Array, track: FrameTrack, speech: Uint8Array): WindowAnalysis {
  const n = track.f0.length;
  const frameSeconds = track.hop / track.rate;
  const f0St: number[] = [];
  const hnr: number[] = [];
  const hnrAll: number[] = [];
  const cpp: number[] = [];
  const alpha: number[] = [];
  const ham: number[] = [];
  const slope: number[] = [];
  const f1: number[] = [];
  const f2: number[] = [];
  const level: number[] = [];
  let speechFrames = 0;
  let voicedFrames = 0;
  for (let k = 0; k < n; k++) {
    if (!speech[k]) continue;
    speechFrames++;
    level.push(track.levelDb[k]!);
    if (track.analysed[k]) {
      cpp.push(track.cpp[k]!);
      hnrAll.push(hnrFromCorrelation(track.periodicity[k]!));
    }
    const f = track.f0[k]!;
    if (f > 0) {
      voicedFrames++;
      f0St.push(semitones(f));
      hnr.push(hnrFromCorrelation(track.periodicity[k]!));
      alpha.push(track.alphaRatio[k]!);
      ham.push(track.hammarberg[k]!);
      slope.push(bandSlope(track, k));
      f1.push(track.f1Centroid[k]!);
      f2.push(track.f2Centroid[k]!);
    }
  }
  const pert = perturbation(x, track, (k) => speech[k] === 1);
  const enoughVoice = voicedFrames >= 3;
  const speechSeconds = speechFrames * frameSeconds;
  const voicedOnly = (xs: number[]): number => (enoughVoice ? mean(xs) : Number.NaN);
  const features: FeatureVector = {
    f0_mean_st: voicedOnly(f0St),
    f0_range_st: enoughVoice ? percentile(f0St, 0.8) - percentile(f0St, 0.2) : Number.NaN,
    f0_slope_st_s: contourSlope(track, speech),
    jitter_local: pert.jitter,
    shimmer_local: pert.shimmer,
    // Whispered speech has no voiced frames: its (low) periodicity over all speech frames is the honest HNR.
    hnr_db: enoughVoice ? mean(hnr) : hnrAll.length > 0 ? mean(hnrAll) : Number.NaN,
    cpps_db: cpp.length > 0 ? mean(cpp) : Number.NaN,
    // Spectral balance over voiced frames only (as eGeMAPS): the tilt of whispered noise says nothing
    // about vocal-fold adduction, so unvoiced speech leaves these missing (the reference fills them).
    alpha_ratio_db: voicedOnly(alpha),
    hammarberg_db: voicedOnly(ham),
    spectral_slope_db_khz: voicedOnly(slope),
    spectral_flux_db: spectralFlux(track, speech),
    f1_proxy_hz: voicedOnly(f1),
    f2_proxy_hz: voicedOnly(f2),
    voiced_fraction: speechFrames > 0 ? voicedFrames / speechFrames : 0,
    syllable_rate: speechSeconds > 0 ? syllableNuclei(track, speech) / speechSeconds : Number.NaN,
    level_range_db: level.length >= 10 ? percentile(level, 0.9) - percentile(level, 0.1) : Number.NaN,
    h1_h2_db: enoughVoice ? harmonicDifference(x, track, speech) : Number.NaN,
    level_rise_db_s: levelRiseSlope(track, speech),
    // Relative to the whole recording: filled in by relative.ts once every window is measured.
    f0_rel_st: Number.NaN,
    level_rel_db: Number.NaN,
  };
  const levelDb = level.length > 0 ? percentile(level, 0.5) : Number.NaN;
  return { speechRatio: n > 0 ? speechFrames / n : 0, speechSeconds, levelDb, features };
}

function semitones(hz: number): number {
  return 12 * Math.log2(hz / 27.5);
}

/** Least-squares slope of the frame's band levels against band centre frequency, dB per kHz. */
function bandSlope(t: FrameTrack, k: number): number {
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let b = 0; b < BANDS; b++) {
    const x = BAND_CENTRES_KHZ[b]!;
    const y = t.bands[k * BANDS + b]!;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (BANDS * sxy - sx * sy) / (BANDS * sxx - sx * sx);
}

/** Duration-weighted mean F0 slope (st/s) of the voiced speech runs: rising contours > 0, falling < 0. */
function contourSlope(t: FrameTrack, speech: Uint8Array): number {
  const n = t.f0.length;
  const dt = t.hop / t.rate;
  const minFrames = Math.max(3, Math.round(MIN_RUN_SECONDS / dt));
  let weighted = 0;
  let weight = 0;
  let k = 0;
  while (k < n) {
    if (!(t.f0[k]! > 0 && speech[k])) {
      k++;
      continue;
    }
    let m = k;
    while (m + 1 < n && t.f0[m + 1]! > 0 && speech[m + 1]) m++;
    const len = m - k + 1;
    if (len >= minFrames) {
      let sx = 0;
      let sy = 0;
      let sxx = 0;
      let sxy = 0;
      for (let i = k; i <= m; i++) {
        const x = (i - k) * dt;
        const y = semitones(t.f0[i]!);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
      }
      const s = (len * sxy - sx * sy) / (len * sxx - sx * sx);
      weighted += Math.max(-MAX_SLOPE_ST_S, Math.min(MAX_SLOPE_ST_S, s)) * len;
      weight += len;
    }
    k = m + 1;
  }
  return weight > 0 ? weighted / weight : Number.NaN;
}

/** Mean RMS difference (dB) of the band-level shape between speech frames ≈ 20 ms apart. */
function spectralFlux(t: FrameTrack, speech: Uint8Array): number {
  const step = Math.max(1, Math.round(FLUX_SECONDS / (t.hop / t.rate)));
  let sum = 0;
  let count = 0;
  for (let k = step; k < t.f0.length; k++) {
    const j = k - step;
    if (!speech[k] || !speech[j] || !t.analysed[k] || !t.analysed[j]) continue;
    let d = 0;
    for (let b = 0; b < BANDS; b++) {
      const diff = t.bands[k * BANDS + b]! - t.bands[j * BANDS + b]!;
      d += diff * diff;
    }
    sum += Math.sqrt(d / BANDS);
    count++;
  }
  return count > 0 ? sum / count : Number.NaN;
}

/** Syllable nuclei in the window's speech: voiced peaks of the smoothed level contour (de Jong & Wempe 2009). */
function syllableNuclei(t: FrameTrack, speech: Uint8Array): number {
  const n = t.levelDb.length;
  const dt = t.hop / t.rate;
  const smooth = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const a = Math.max(0, k - 1);
    const b = Math.min(n - 1, k + 1);
    let s = 0;
    for (let i = a; i <= b; i++) s += t.levelDb[i]!;
    smooth[k] = s / (b - a + 1);
  }
  let loudest = -Infinity;
  for (let k = 0; k < n; k++) if (speech[k] && smooth[k]! > loudest) loudest = smooth[k]!;
  if (loudest === -Infinity) return 0;
  const threshold = loudest - NUCLEUS_BELOW_MAX_DB;
  const half = Math.max(1, Math.round(NUCLEUS_HALF_SPAN_SECONDS / dt));
  let count = 0;
  let dip = Infinity;
  for (let k = 0; k < n; k++) {
    const v = smooth[k]!;
    if (v < dip) dip = v;
    if (!speech[k] || !(t.f0[k]! > 0) || v < threshold) continue;
    let isPeak = true;
    for (let i = Math.max(0, k - half); i <= Math.min(n - 1, k + half) && isPeak; i++) {
      if (smooth[i]! > v || (smooth[i] === v && i < k)) isPeak = false;
    }
    if (isPeak && v - dip >= NUCLEUS_DIP_DB) {
      count++;
      dip = v;
    }
  }
  return count;
}

const harmonicScratch = new Float64Array(6);

/**
 * Squared magnitudes of the Hann-windowed frame's DFT (Goertzel) at the six frequencies H1–H2 searches: F0
 * and 2·F0, each × HARMONIC_SEARCH. One pass over the frame runs six recursions side by side, each with its
 * own state and the same operations in the same order as a recursion alone (bit-identical to six passes,
 * tested), so the processor overlaps six dependency chains instead of waiting on one. The result is a
 * scratch array, valid until the next call.
 */
export function harmonicPowers(x: Float32Array, start: number, win: Float64Array, f0: number, rate: number): Float64Array {
  const [m0, m1, m2] = HARMONIC_SEARCH as [number, number, number];
  const c0 = 2 * Math.cos((2 * Math.PI * (1 * f0 * m0)) / rate);
  const c1 = 2 * Math.cos((2 * Math.PI * (1 * f0 * m1)) / rate);
  const c2 = 2 * Math.cos((2 * Math.PI * (1 * f0 * m2)) / rate);
  const c3 = 2 * Math.cos((2 * Math.PI * (2 * f0 * m0)) / rate);
  const c4 = 2 * Math.cos((2 * Math.PI * (2 * f0 * m1)) / rate);
  const c5 = 2 * Math.cos((2 * Math.PI * (2 * f0 * m2)) / rate);
  let a1 = 0;
  let a2 = 0;
  let b1 = 0;
  let b2 = 0;
  let d1 = 0;
  let d2 = 0;
  let e1 = 0;
  let e2 = 0;
  let g1 = 0;
  let g2 = 0;
  let h1 = 0;
  let h2 = 0;
  for (let i = 0; i < win.length; i++) {
    const v = x[start + i]! * win[i]!;
    const a0 = v + c0 * a1 - a2;
    a2 = a1;
    a1 = a0;
    const b0 = v + c1 * b1 - b2;
    b2 = b1;
    b1 = b0;
    const d0 = v + c2 * d1 - d2;
    d2 = d1;
    d1 = d0;
    const e0 = v + c3 * e1 - e2;
    e2 = e1;
    e1 = e0;
    const g0 = v + c4 * g1 - g2;
    g2 = g1;
    g1 = g0;
    const h0 = v + c5 * h1 - h2;
    h2 = h1;
    h1 = h0;
  }
  const out = harmonicScratch;
  out[0] = a1 * a1 + a2 * a2 - c0 * a1 * a2;
  out[1] = b1 * b1 + b2 * b2 - c1 * b1 * b2;
  out[2] = d1 * d1 + d2 * d2 - c2 * d1 * d2;
  out[3] = e1 * e1 + e2 * e2 - c3 * e1 * e2;
  out[4] = g1 * g1 + g2 * g2 - c4 * g1 * g2;
  out[5] = h1 * h1 + h2 * h2 - c5 * h1 * h2;
  return out;
}

const hannCache = new Map<number, Float64Array>();
function hannWindow(n: number): Float64Array {
  let w = hannCache.get(n);
  if (!w) {
    w = new Float64Array(n);
    for (let i = 0; i < n; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / n);
    hannCache.set(n, w);
  }
  return w;
}

/**
 * Mean H1–H2 (dB) of voiced speech frames: the level of the first harmonic over the second, the classic
 * measure of the glottal open quotient — high in breathy, lax phonation, low in pressed, tense phonation
 * (Hanson 1997; Gobl & Ní Chasaide 2003; Kreiman & Gerratt 2012). Not corrected for the first formant, so
 * it also moves with F1 near 2·F0; averaged over many frames and vowels that matters less than the voice.
 */
function harmonicDifference(x: Float32Array, t: FrameTrack, speech: Uint8Array): number {
  const voiced: number[] = [];
  for (let k = 0; k < t.f0.length; k++) if (speech[k] && t.f0[k]! > 0 && 2 * t.f0[k]! < t.rate / 2) voiced.push(k);
  if (voiced.length < 3) return Number.NaN;
  const win = hannWindow(t.frameLength);
  const step = Math.max(1, voiced.length / H1H2_MAX_FRAMES);
  let sum = 0;
  let count = 0;
  for (let j = 0; j < voiced.length; j += step) {
    const k = voiced[Math.floor(j)]!;
    const f0 = t.f0[k]!;
    const p = harmonicPowers(x, t.starts[k]!, win, f0, t.rate);
    const h1 = Math.max(p[0]!, p[1]!, p[2]!);
    const h2 = Math.max(p[3]!, p[4]!, p[5]!);
    if (!(h1 > 0 && h2 > 0)) continue;
    sum += 10 * Math.log10(h1 / h2);
    count++;
  }
  return count > 0 ? sum / count : Number.NaN;
}

/**
 * Mean slope (dB/s) of the rising parts of the speech level contour that rise at least ATTACK_MIN_RISE_DB:
 * how abruptly syllables start. eGeMAPS' loudness "meanRisingSlope" (Eyben et al. 2016), on the dB level so
 * the gain does not change it; hard, fast attacks mark tense, pressed and angry speech (Scherer 2003).
 */
function levelRiseSlope(t: FrameTrack, speech: Uint8Array): number {
  const n = t.levelDb.length;
  const dt = t.hop / t.rate;
  let slopes = 0;
  let count = 0;
  let k = 0;
  while (k < n - 1) {
    if (!(speech[k] && speech[k + 1] && t.levelDb[k + 1]! > t.levelDb[k]!)) {
      k++;
      continue;
    }
    let m = k + 1;
    while (m + 1 < n && speech[m + 1] && t.levelDb[m + 1]! > t.levelDb[m]!) m++;
    const rise = t.levelDb[m]! - t.levelDb[k]!;
    if (rise >= ATTACK_MIN_RISE_DB) {
      slopes += rise / ((m - k) * dt);
      count++;
    }
    k = m;
  }
  return count > 0 ? slopes / count : Number.NaN;
}
