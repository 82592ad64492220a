// Owns the per-window acoustic feature vector: the correlates of vocal strain and softness named in the
// literature (Banse & Scherer 1996; Hillenbrand et al. 1994; Gobl & Ní Chasaide 2003; eGeMAPS, Eyben et al.
// 2016), summarised over the speech frames of one 5 s window.
import { mean, percentile } from './dsp';
import type { FrameTrack } from './frames';
import { perturbation } from './pulses';

/** Order of the mapping model's input columns; models/emotion/build-mapping.ts uses the same list. */
export const FEATURE_NAMES = [
  'f0_mean_st', // mean F0 in semitones re 27.5 Hz
  'f0_range_st', // 20th–80th percentile range of F0, semitones
  'jitter_local', // fraction
  'shimmer_local', // fraction
  'hnr_db', // harmonics-to-noise ratio from the autocorrelation peak, dB
  'cpps_db', // cepstral peak prominence, dB
  'alpha_ratio_db', // 1–4 kHz over 50–1000 Hz energy, dB (eGeMAPS sign: flatter tilt → higher)
  'hammarberg_db', // 0–2 kHz peak over 2–4 kHz peak, dB
  'voiced_fraction', // voiced frames over speech frames
  'loudness_db', // mean frame level of speech, dBFS
] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];
export type FeatureVector = Record<FeatureName, number>;

export interface WindowAnalysis {
  /** Share of frames that are speech, 0..1. */
  speechRatio: number;
  /** Seconds of speech in the window. */
  speechSeconds: number;
  /** NaN marks a feature that could not be measured (for example F0 in whispered speech). */
  features: FeatureVector;
}

const HNR_MIN_R = 1e-4;
const HNR_MAX_R = 0.9999;

export function hnrFromCorrelation(r: number): number {
  const c = Math.min(HNR_MAX_R, Math.max(HNR_MIN_R, r));
  return 10 * Math.log10(c / (1 - c));
}

export function windowFeatures(x: Float32Array, track: FrameTrack, speech: Uint8Array): WindowAnalysis {
  const n = track.f0.length;
  const f0St: number[] = [];
  const hnr: number[] = [];
  const hnrAll: number[] = [];
  const cpp: number[] = [];
  const alpha: number[] = [];
  const ham: number[] = [];
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
      f0St.push(12 * Math.log2(f / 27.5));
      hnr.push(hnrFromCorrelation(track.periodicity[k]!));
      alpha.push(track.alphaRatio[k]!);
      ham.push(track.hammarberg[k]!);
    }
  }
  const pert = perturbation(x, track, (k) => speech[k] === 1);
  const enoughVoice = voicedFrames >= 3;
  const features: FeatureVector = {
    f0_mean_st: enoughVoice ? mean(f0St) : Number.NaN,
    f0_range_st: enoughVoice ? percentile(f0St, 0.8) - percentile(f0St, 0.2) : Number.NaN,
    jitter_local: pert.jitter,
    shimmer_local: pert.shimmer,
    // Whispered speech has no voiced frames: its (low) periodicity over all speech frames is the honest HNR.
    hnr_db: enoughVoice ? mean(hnr) : hnrAll.length > 0 ? mean(hnrAll) : Number.NaN,
    cpps_db: cpp.length > 0 ? mean(cpp) : Number.NaN,
    // Spectral balance over voiced frames only (as eGeMAPS): the tilt of whispered noise says nothing
    // about vocal-fold adduction, so unvoiced speech leaves these missing (the reference fills them).
    alpha_ratio_db: enoughVoice ? mean(alpha) : Number.NaN,
    hammarberg_db: enoughVoice ? mean(ham) : Number.NaN,
    voiced_fraction: speechFrames > 0 ? voicedFrames / speechFrames : 0,
    loudness_db: level.length > 0 ? mean(level) : Number.NaN,
  };
  const frameSeconds = track.hop / track.rate;
  return { speechRatio: n > 0 ? speechFrames / n : 0, speechSeconds: speechFrames * frameSeconds, features };
}
