// Owns speech detection. Silero VAD (the real model, 8 kHz, 96 ms chunks, recurrent state) on the audio
// brought to one speech level, together with an energy-and-periodicity detector on the analysis frames
// (relative to the file's own noise floor, with guards against steady noise, tones and held musical notes):
// a frame is speech when either finds it, so neither Silero's misses (shouts, clipping, whispers, very quiet
// speech) nor the energy detector's blind spots drop speech. Beyond a few minutes only the energy detector
// runs (speed). Silero's recurrent state is kept per stream, so the audio is cut into parts run side by side
// in the batch axis: one call then serves many chunks, which is what makes the model affordable.
import { openSession, ort } from '../../runtime/onnx-session';
import { percentile } from './dsp';
import type { FrameTrack } from './frames';

/** Silero v4 at 8 kHz accepts 256, 512 or 768 samples; 768 (96 ms) is the cheapest per audio second. */
const SILERO_CHUNK = 768;
const SILERO_STATE = 64;
/** Hysteresis as in @ricky0123/vad: enter speech at 0.5, leave below 0.35. */
const POSITIVE = 0.5;
const NEGATIVE = 0.35;
/** Chunks each part of the batch re-reads before its own start, so its state has warmed up. */
const PREROLL_CHUNKS = 4;
const MIN_CHUNKS_PER_PART = 24;
const MAX_BATCH = 32;

/** Speech flags on a regular grid over the whole file. */
export interface SpeechTimeline {
  stepSamples: number;
  flags: Uint8Array;
  /** Raw probabilities (Silero) or null (energy detector). */
  probabilities: Float32Array | null;
}

export class SileroVad {
  private constructor(private readonly session: ort.InferenceSession) {}

  static async load(modelPath: string, intraOpThreads: number): Promise<SileroVad> {
    const session = await openSession(modelPath, { intraOpThreads });
    const inputs = ['input', 'sr', 'h', 'c'];
    if (!inputs.every((n) => session.inputNames.includes(n)) || !session.outputNames.includes('output')) {
      throw new Error(`silero_vad.onnx has inputs ${session.inputNames.join(',')}; expected ${inputs.join(',')}`);
    }
    return new SileroVad(session);
  }

  /** Speech probability per 96 ms chunk, parts of the file processed side by side in one batch; with a
   *  `gain` other than 1 the model sees x · gain clipped to ±1 (scaled chunk by chunk, no copy of the file). */
  async probabilities(x: Float32Array, rate: number, checkDeadline: () => void, maxBatch = MAX_BATCH, gain = 1): Promise<Float32Array> {
    const chunks = Math.ceil(x.length / SILERO_CHUNK);
    const parts = Math.max(1, Math.min(maxBatch, Math.floor(chunks / MIN_CHUNKS_PER_PART)));
    const perPart = Math.ceil(chunks / parts);
    const pre = parts > 1 ? PREROLL_CHUNKS : 0;
    const steps = perPart + pre;
    const out = new Float32Array(chunks);
    const sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(rate)]), []);
    let h: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * parts * SILERO_STATE), [2, parts, SILERO_STATE]);
    let c: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * parts * SILERO_STATE), [2, parts, SILERO_STATE]);
    const input = new Float32Array(parts * SILERO_CHUNK);
    for (let step = 0; step < steps; step++) {
      if (step % 64 === 0) checkDeadline();
      input.fill(0);
      for (let p = 0; p < parts; p++) {
        // Part p owns chunks [p*perPart, (p+1)*perPart) and starts reading `pre` chunks earlier (zeros for part 0).
        const chunk = p * perPart - pre + step;
        if (chunk < 0 || chunk >= chunks) continue;
        const from = chunk * SILERO_CHUNK;
        const to = Math.min(x.length, from + SILERO_CHUNK);
        if (gain === 1) {
          input.set(x.subarray(from, to), p * SILERO_CHUNK);
        } else {
          const at = p * SILERO_CHUNK - from;
          for (let i = from; i < to; i++) input[at + i] = Math.max(-1, Math.min(1, x[i]! * gain));
        }
      }
      const res = await this.session.run({ input: new ort.Tensor('float32', input, [parts, SILERO_CHUNK]), sr, h, c });
      const prob = res.output!.data as Float32Array;
      h = res.hn!;
      c = res.cn!;
      for (let p = 0; p < parts; p++) {
        const own = step - pre;
        if (own < 0 || own >= perPart) continue;
        const chunk = p * perPart + own;
        if (chunk < chunks) out[chunk] = prob[p]!;
      }
    }
    return out;
  }

  async timeline(x: Float32Array, rate: number, checkDeadline: () => void): Promise<SpeechTimeline> {
    const probabilities = await this.probabilities(x, rate, checkDeadline, MAX_BATCH, levelGain(x));
    const flags = new Uint8Array(probabilities.length);
    let inSpeech = false;
    for (let i = 0; i < probabilities.length; i++) {
      const p = probabilities[i]!;
      inSpeech = inSpeech ? p >= NEGATIVE : p >= POSITIVE;
      flags[i] = inSpeech ? 1 : 0;
    }
    return { stepSamples: SILERO_CHUNK, flags, probabilities };
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}

/** Silero's own decisions depend on the recording level (it misses very quiet speech and reacts differently
 *  to loud, clipped speech), so it sees the audio scaled until the loud chunks (95th percentile of 96 ms RMS)
 *  sit at −20 dBFS; the gain is bounded so digital near-silence is not blown up into noise. */
const SILERO_TARGET_DB = -20;
const SILERO_MAX_GAIN_DB = 50;
const SILERO_MIN_GAIN_DB = -30;
const SILENT_DB = -100;

function levelGain(x: Float32Array): number {
  const levels: number[] = [];
  for (let from = 0; from < x.length; from += SILERO_CHUNK) {
    const to = Math.min(x.length, from + SILERO_CHUNK);
    let sum = 0;
    for (let i = from; i < to; i++) sum += x[i]! * x[i]!;
    levels.push(10 * Math.log10(sum / Math.max(1, to - from) + 1e-20));
  }
  if (levels.length === 0) return 1;
  const loud = percentile(levels, 0.95);
  if (loud < SILENT_DB) return 1;
  const gainDb = Math.max(SILERO_MIN_GAIN_DB, Math.min(SILERO_MAX_GAIN_DB, SILERO_TARGET_DB - loud));
  return 10 ** (gainDb / 20);
}

/** A frame is speech when Silero or the energy detector says so, in a run that moves like speech (Silero
 *  too answers "speech" to a loud steady tone). */
export function eitherSpeech(tracks: FrameTrack[], a: Uint8Array[], b: Uint8Array[]): Uint8Array[] {
  return a.map((flags, w) => {
    const out = flags.map((f, k) => (f || b[w]![k] ? 1 : 0));
    dropUnspeechlikeRuns(tracks[w]!, out);
    return out;
  });
}

/** Per-frame speech flags of one window's track, read off a file-wide timeline at each frame's centre. */
export function framesFromTimeline(track: FrameTrack, timeline: SpeechTimeline): Uint8Array {
  const out = new Uint8Array(track.f0.length);
  for (let k = 0; k < out.length; k++) {
    const centre = track.starts[k]! + track.frameLength / 2;
    out[k] = timeline.flags[Math.min(timeline.flags.length - 1, Math.floor(centre / timeline.stepSamples))] ?? 0;
  }
  return out;
}

// Energy-and-periodicity detector: a frame is speech when it stands clear of the file's noise floor and is
// either periodic (voiced) or clearly loud (fricatives, whispers). Gaps shorter than a syllable are closed.
// Everything is relative to the file's own floor, so the recording gain does not matter; the only absolute
// limit is digital near-silence. Runs that do not move like speech are dropped: a steady noise or a drone
// hardly changes level, and a tone or a held musical note keeps its pitch to a few cents for most of the run,
// while speech pitch moves continuously and its level swings between vowels and consonants.
const ABOVE_FLOOR_DB = 9;
const LOUD_ABOVE_FLOOR_DB = 18;
const ABSOLUTE_MIN_DB = -100;
const PERIODIC = 0.5;
const CLOSE_GAP_SECONDS = 0.2;
const MIN_RUN_SECONDS = 0.06;
/** Consecutive voiced frames closer than this (semitones per 10 ms) hold their pitch. */
const HELD_PITCH_ST = 0.03;
/** A run whose voiced frames hold their pitch this often is a tone or music, not speech. */
const MAX_HELD_SHARE = 0.6;
/** A run longer than this whose level barely moves (10th–90th percentile) is steady noise. */
const STEADY_RUN_SECONDS = 0.5;
const MIN_LEVEL_SPREAD_DB = 4;

export function energySpeech(tracks: FrameTrack[]): Uint8Array[] {
  const levels: number[] = [];
  for (const t of tracks) for (let k = 0; k < t.levelDb.length; k += 4) levels.push(t.levelDb[k]!);
  // Most recordings have pauses: the 10th percentile of frame levels is the noise floor. A file with
  // no pauses at all gets a floor well below its speech, which only makes the detector more inclusive.
  const floor = levels.length > 0 ? percentile(levels, 0.1) : -200;
  return tracks.map((t) => {
    const n = t.levelDb.length;
    const flags = new Uint8Array(n);
    for (let k = 0; k < n; k++) {
      const l = t.levelDb[k]!;
      if (l < ABSOLUTE_MIN_DB || l < floor + ABOVE_FLOOR_DB) continue;
      if (t.periodicity[k]! >= PERIODIC || l >= floor + LOUD_ABOVE_FLOOR_DB) flags[k] = 1;
    }
    const frameSeconds = t.hop / t.rate;
    fillRuns(flags, 0, Math.round(CLOSE_GAP_SECONDS / frameSeconds), 1);
    fillRuns(flags, 1, Math.round(MIN_RUN_SECONDS / frameSeconds), 0);
    dropUnspeechlikeRuns(t, flags);
    return flags;
  });
}

function dropUnspeechlikeRuns(t: FrameTrack, flags: Uint8Array): void {
  const frameSeconds = t.hop / t.rate;
  const heldPerFrame = HELD_PITCH_ST * (frameSeconds / 0.01);
  let k = 0;
  while (k < flags.length) {
    if (!flags[k]) {
      k++;
      continue;
    }
    let m = k;
    while (m < flags.length && flags[m]) m++;
    let pairs = 0;
    let held = 0;
    const levels: number[] = [];
    for (let i = k; i < m; i++) {
      levels.push(t.levelDb[i]!);
      if (i > k && t.f0[i]! > 0 && t.f0[i - 1]! > 0) {
        pairs++;
        if (Math.abs(12 * Math.log2(t.f0[i]! / t.f0[i - 1]!)) < heldPerFrame) held++;
      }
    }
    const steady = (m - k) * frameSeconds >= STEADY_RUN_SECONDS && percentile(levels, 0.9) - percentile(levels, 0.1) < MIN_LEVEL_SPREAD_DB;
    const tonal = pairs >= 10 && held / pairs > MAX_HELD_SHARE;
    if (steady || tonal) flags.fill(0, k, m);
    k = m;
  }
}

/** Replaces interior runs of `value` shorter than `maxLen` with `replacement`. */
function fillRuns(flags: Uint8Array, value: number, maxLen: number, replacement: number): void {
  let k = 0;
  while (k < flags.length) {
    if (flags[k] !== value) {
      k++;
      continue;
    }
    let m = k;
    while (m < flags.length && flags[m] === value) m++;
    const interior = value === 0 ? k > 0 && m < flags.length : true;
    if (interior && m - k < maxLen) flags.fill(replacement, k, m);
    k = m;
  }
}
