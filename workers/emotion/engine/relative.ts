// Owns the features measured against the recording itself: in a recording long enough to have a baseline,
// each window's F0 and speech level relative to the recording's median window (f0_rel_st, level_rel_db). The
// gain of a recording is the same throughout, so a level difference within it is the speaker's, not the
// microphone's; and a speaker's F0 against their own usual F0 says what the absolute F0 cannot (a high male
// voice and a low female one). Short recordings keep only the absolute features (the relative ones stay
// missing, which the mapping reads as "at the reference": no effect). Rule and reasons: docs/emotion-engine.md.
import { percentile } from './dsp';
import type { WindowAnalysis } from './features';

/** A window counts towards the baseline with at least this much speech … */
export const BASELINE_MIN_SPEECH_SECONDS = 1.5;
/** … and a recording has a baseline with at least this many such windows (so at least 15 s long). */
export const BASELINE_MIN_WINDOWS = 3;

/** Fills f0_rel_st and level_rel_db of every window in place when the recording has a baseline. */
export function applyRecordingBaseline(windows: WindowAnalysis[]): void {
  const counted = windows.filter((w) => w.speechSeconds >= BASELINE_MIN_SPEECH_SECONDS);
  if (counted.length < BASELINE_MIN_WINDOWS) return;
  const median = (xs: number[]): number => (xs.length >= BASELINE_MIN_WINDOWS ? percentile(xs, 0.5) : Number.NaN);
  const f0 = median(counted.map((w) => w.features.f0_mean_st).filter(Number.isFinite));
  const level = median(counted.map((w) => w.levelDb).filter(Number.isFinite));
  for (const w of windows) {
    if (w.speechSeconds <= 0) continue;
    w.features.f0_rel_st = w.features.f0_mean_st - f0;
    w.features.level_rel_db = w.levelDb - level;
  }
}
