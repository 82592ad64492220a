// Owns the emotion engine's pipeline: sniff → probe (ffprobe, or the header of a 16-bit PCM WAV/AIFF) → decode to
// 8 kHz mono (ffmpeg, in parallel segments for long files, or in process for PCM) → frame analysis → speech
// detection (Silero and the energy detector together) → per-window features (and, in a long recording, against
// its own baseline) → ONNX mapping → the spec's intervals. Stateless between calls; one analysis at a time per
// instance (the worker process runs concurrency 1). Temporary files always removed. docs/emotion-engine.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { verifiedModelPath, modelEntry } from '../../../models/manifest';
import type { EmotionInterval, EmotionResult } from '../../../shared/queues/contracts';
import { ANALYSIS_RATE, assertEnoughAudio, decode, segmentStarts } from './decode';
import { AnalysisBudget } from './analysis-budget';
import { type FeatureVector, type WindowAnalysis } from './features';
import { type FrameTrack } from './frames';
import { planIntervals, roundMs } from './intervals';
import { EmotionMapping } from './mapping';
import { DEMUXER, probe, type ProbedAudio } from './probe';
import { decodePcm, pcmDecodable, sharedFloat32 } from './pcm';
import { AnalysisPool } from './pool';
import { applyRecordingBaseline } from './relative';
import type { PoolTask } from './pool-worker';
import { sniff } from './sniff';
import { availableCpus } from './cpus';
import { eitherSpeech, energySpeech, framesFromTimeline, SileroVad } from './vad';
import { sweepStaleTempDirs } from '../../runtime/temp-sweep';

export { FEATURE_NAMES } from './features';

export interface EmotionEngineOptions {
  modelsDir: string;
  ffmpegPath: string;
  ffprobePath: string;
  intraOpThreads: number;
  tmpDir?: string;
  /** Longest audio accepted (seconds); longer → 400 too_long. Default: what fits the 5 s budget here. */
  maxDurationSeconds?: number;
  /** Inputs up to this long use Silero VAD together with the energy-and-periodicity detector; longer ones the
   *  energy detector alone (Silero would cost about 1 ms per audio second). */
  sileroMaxSeconds?: number;
  /** Parallel ffmpeg segments for long inputs (default: available cores). */
  decodeParallelism?: number;
  /** Threads that resample PCM and analyse frames side by side (default: available cores; 1 = in the calling thread). */
  analysisThreads?: number;
}

export interface AnalyzeOptions {
  /** Epoch milliseconds; past it the analysis stops with a 503 processing_timeout instead of hanging. */
  deadline?: number;
  /** Force a speech detector (benchmarks and the agreement measurement); default: both (Silero and energy)
   *  up to sileroMaxSeconds, energy alone beyond. */
  vad?: 'silero' | 'energy' | 'both';
}

/** Measured on the 2-core reference machine (docs/emotion-engine.md): GSM at 102 min cannot finish in 5 s. */
export const DEFAULT_MAX_DURATION_SECONDS = 30 * 60;
export const DEFAULT_SILERO_MAX_SECONDS = 180;
/** Inputs longer than this are decoded in parallel segments … */
const PARALLEL_DECODE_SECONDS = 60;
/** … when ffmpeg seeks them sample-exactly (measured: with decode.ts's overlap the samples equal one
 *  pass's for mp3, ADTS, m4a and GSM WAV). ASF/WMA seeks land 40–50 ms off, so WMA is decoded in one pass
 *  (it decodes 14 min in about 0.6 s anyway); PCM and FLAC are cheap enough in one pass. */
const SEEKS_EXACTLY: ReadonlySet<string> = new Set(['mp3', 'aac', 'mov', 'wav']);
/** Files up to this size (and PCM WAV/AIFF and FLAC of any size, cheap to decode in one pass) are decoded
 *  while ffprobe runs (at 320 kbps about 50 s). */
const SPECULATIVE_DECODE_BYTES = 2_000_000;
/** A segmented decode planned on the MP3's size-and-bit-rate duration is exact as long as every segment
 *  but the last (each cut at its planned length; the last runs to the end) ends this far before the real
 *  end; otherwise an inner segment would be padded with silence, so that decode is redone on ffprobe's. */
const ESTIMATE_MARGIN_SECONDS = 1;
/** Frame hop: 10 ms (Praat's default) for inputs up to a minute … */
const BASE_HOP_SECONDS = 0.01;
/** Beyond a minute: 20 ms (half the cost; 250 frames per window still make stable statistics) … */
const LONG_HOP_SECONDS = 0.02;
const LONG_HOP_AFTER_SECONDS = 60;
/** … and never more frames than this per file, so a 30 min file stays inside the budget (hop 30 ms). */
const MAX_FRAMES = 60_000;
/** Less speech than this in a window is scored as silence (features of a few frames mean nothing). */
export const MIN_SPEECH_SECONDS = 0.3;

export interface ModelInfo {
  name: string;
  file: string;
  sha256: string;
}

export class EmotionEngine {
  readonly modelInfo: ModelInfo[];

  private constructor(
    private readonly opts: Required<Omit<EmotionEngineOptions, 'tmpDir'>> & { tmpDir: string },
    private readonly vad: SileroVad,
    private readonly mapping: EmotionMapping,
    private readonly pool: AnalysisPool,
    sileroFile: string,
  ) {
    this.modelInfo = [
      { name: 'silero-vad', file: path.basename(sileroFile), sha256: modelEntry('silero-vad').sha256 },
      { name: 'emotion-mapping', file: path.basename(mapping.file), sha256: mapping.sha256 },
    ];
  }

  static async load(opts: EmotionEngineOptions): Promise<EmotionEngine> {
    const sileroFile = verifiedModelPath(opts.modelsDir, 'silero-vad');
    const [vad, mapping] = await Promise.all([SileroVad.load(sileroFile, opts.intraOpThreads), EmotionMapping.load(opts.modelsDir, opts.intraOpThreads)]);
    const full = {
      modelsDir: opts.modelsDir,
      ffmpegPath: opts.ffmpegPath,
      ffprobePath: opts.ffprobePath,
      intraOpThreads: opts.intraOpThreads,
      tmpDir: opts.tmpDir ?? os.tmpdir(),
      maxDurationSeconds: opts.maxDurationSeconds ?? DEFAULT_MAX_DURATION_SECONDS,
      sileroMaxSeconds: opts.sileroMaxSeconds ?? DEFAULT_SILERO_MAX_SECONDS,
      decodeParallelism: opts.decodeParallelism ?? availableCpus(),
      analysisThreads: opts.analysisThreads ?? availableCpus(),
    };
    // Folders a killed worker left behind hold a caller's audio: remove them before taking jobs.
    await sweepStaleTempDirs(full.tmpDir, 'emotion-');
    const pool = AnalysisPool.create(full.analysisThreads);
    await pool.warmUp();
    return new EmotionEngine(full, vad, mapping, pool, sileroFile);
  }

  /** The Silero detector, for the agreement measurement and tests. */
  get silero(): SileroVad {
    return this.vad;
  }

  async close(): Promise<void> {
    await Promise.all([this.vad.release(), this.mapping.release(), this.pool.close()]);
  }

  async analyze(audio: Buffer, opts: AnalyzeOptions = {}): Promise<EmotionResult> {
    const deadline = new AnalysisBudget(opts.deadline);
    const clock = new StageClock();
    const { probed, samples } = await this.load(audio, deadline, clock);

    const duration = samples.length / ANALYSIS_RATE;
    const plan = planIntervals(samples.length, ANALYSIS_RATE);
    // Long files get a coarser frame hop so the frame count (the dominant cost) stays bounded.
    const hopSeconds = duration <= LONG_HOP_AFTER_SECONDS ? BASE_HOP_SECONDS : Math.max(LONG_HOP_SECONDS, duration / MAX_FRAMES);
    const hop = Math.round(hopSeconds * ANALYSIS_RATE);
    // Frames are analysed in the pool's threads while Silero (if chosen) runs here: the stages overlap, so
    // 'vad' is only the time spent waiting for it after the frames were done.
    const vadKind = opts.vad ?? (duration <= this.opts.sileroMaxSeconds ? 'both' : 'energy');
    const timeline = vadKind !== 'energy' ? this.vad.timeline(samples, ANALYSIS_RATE, () => deadline.check('vad')) : undefined;
    timeline?.catch(() => undefined);
    const tracks = await this.frameTracks(samples, plan, hop, deadline);
    clock.lap('features');

    const silero = timeline ? await timeline.then((tl) => tracks.map((t) => framesFromTimeline(t, tl))) : undefined;
    const energy = vadKind !== 'silero' ? energySpeech(tracks) : undefined;
    const speech = silero && energy ? eitherSpeech(tracks, silero, energy) : (silero ?? energy)!;
    clock.lap('vad');

    const windows = await this.windowAnalyses(samples, tracks, speech, deadline);
    clock.lap('features');

    deadline.check('mapping');
    const scored = windows.map((w, i) => ({ i, w })).filter(({ w }) => w.speechSeconds >= MIN_SPEECH_SECONDS);
    const scores = await this.mapping.score(scored.map(({ w }) => w.features));
    const byWindow = new Map(scored.map(({ i }, k) => [i, scores[k]!]));
    const results: EmotionInterval[] = plan.map((p, i) => {
      const s = byWindow.get(i);
      return {
        from: p.from,
        to: p.to,
        rough: s ? round3(s.rough) : 0,
        soft: s ? round3(s.soft) : 0,
        speech_ratio: round3(windows[i]!.speechRatio),
      };
    });
    clock.lap('mapping');
    return { meta: probed.meta, results, summary: summarise(results, duration), stages: clock.done() };
  }

  /** Per-window features under both speech detectors, for calibration, the Praat comparison and tests. */
  async inspect(audio: Buffer, opts: AnalyzeOptions = {}): Promise<Inspection> {
    const deadline = new AnalysisBudget(opts.deadline);
    const { samples } = await this.load(audio, deadline, new StageClock());
    const plan = planIntervals(samples.length, ANALYSIS_RATE);
    const hop = Math.round(BASE_HOP_SECONDS * ANALYSIS_RATE);
    const tracks = await this.frameTracks(samples, plan, hop, deadline);
    const silero = await this.detectSpeech('silero', samples, tracks, deadline);
    const energy = await this.detectSpeech('energy', samples, tracks, deadline);
    const both = eitherSpeech(tracks, silero, energy);
    const chosen = opts.vad === 'energy' ? energy : opts.vad === 'silero' ? silero : both;
    const analysed = await this.windowAnalyses(samples, tracks, chosen, deadline);
    const windows = plan.map((p, i) => {
      const w = analysed[i]!;
      return { from: p.from, to: p.to, speechRatio: w.speechRatio, speechSeconds: w.speechSeconds, levelDb: w.levelDb, features: w.features };
    });
    return { duration: samples.length / ANALYSIS_RATE, windows, speech: { silero, energy, both } };
  }

  /** Sniff, write the temporary file, probe and decode; the file is gone when this returns or throws. */
  private async load(audio: Buffer, deadline: AnalysisBudget, clock: StageClock): Promise<{ probed: ProbedAudio; samples: Float32Array }> {
    deadline.check('start');
    const sniffed = sniff(audio);
    // Canonical 16-bit PCM (WAV, AIFF) is read and resampled in process: no temporary file, no ffmpeg.
    if (sniffed.pcm && pcmDecodable(sniffed.pcm, ANALYSIS_RATE)) {
      const probed = await probe(this.opts.ffprobePath, '', sniffed, { maxDurationSeconds: this.opts.maxDurationSeconds }, deadline);
      clock.lap('probe');
      const samples = await decodePcm(audio, sniffed.pcm, ANALYSIS_RATE, (channels, ranges) =>
        this.pool.runAll<Float32Array>(
          ranges.map(([from, to]) => ({ kind: 'resample', channels, inRate: sniffed.pcm!.sampleRate, outRate: ANALYSIS_RATE, from, to })),
          () => deadline.check('decode'),
        ),
      );
      assertEnoughAudio(samples);
      clock.lap('decode');
      return { probed, samples };
    }
    const dir = await fs.promises.mkdtemp(path.join(this.opts.tmpDir, 'emotion-'));
    const abort = new AbortController();
    const redo = new AbortController();
    let speculative: Promise<Float32Array> | undefined;
    try {
      const file = path.join(dir, 'input');
      await fs.promises.writeFile(file, audio, { mode: 0o600 });
      const decodeWith = (demuxer: string, approxDuration: number, signal = abort.signal): Promise<Float32Array> =>
        decode({
          ffmpegPath: this.opts.ffmpegPath,
          file,
          demuxer,
          approxDuration,
          segments: approxDuration > PARALLEL_DECODE_SECONDS && SEEKS_EXACTLY.has(demuxer) ? this.opts.decodeParallelism : 1,
          deadline,
          signal,
        });
      // ffmpeg and ffprobe each take ~0.1 s just to start (Debian's build links 200+ libraries), so small
      // files are decoded while they are probed; a rejected probe kills the decoder.
      // A long MP3 is decoded in parallel segments planned on the duration its size and bit rate imply,
      // also while ffprobe runs (the plan only balances the segments; see ESTIMATE_MARGIN_SECONDS).
      const estimate = sniffed.approxSeconds;
      const segmentedEarly = estimate !== undefined && estimate > PARALLEL_DECODE_SECONDS && estimate <= this.opts.maxDurationSeconds;
      if (audio.length <= SPECULATIVE_DECODE_BYTES || sniffed.subtype === 'pcm' || sniffed.format === 'flac' || segmentedEarly) {
        speculative = decodeWith(DEMUXER[sniffed.format], segmentedEarly ? estimate : 0, AbortSignal.any([abort.signal, redo.signal]));
        speculative.catch(() => undefined);
      }
      const probed = await probe(this.opts.ffprobePath, file, sniffed, { maxDurationSeconds: this.opts.maxDurationSeconds }, deadline);
      clock.lap('probe');
      const innerEnd = segmentStarts(estimate!, this.opts.decodeParallelism).at(-1)!;
      if (segmentedEarly && !(innerEnd < probed.duration - ESTIMATE_MARGIN_SECONDS)) {
        redo.abort();
        await speculative!.catch(() => undefined);
        speculative = undefined;
      }
      const samples = await (speculative ?? decodeWith(probed.demuxer, probed.duration));
      clock.lap('decode');
      return { probed, samples };
    } finally {
      abort.abort();
      if (speculative) await speculative.catch(() => undefined);
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  }

  /** Frame analysis of every window, a few windows per task, in the pool's threads. */
  private async frameTracks(samples: Float32Array, plan: Array<{ start: number; end: number }>, hop: number, deadline: AnalysisBudget): Promise<FrameTrack[]> {
    const shared = toShared(samples);
    const tasks: PoolTask[] = chunk(plan, this.pool.parallelism).map((part) => ({
      kind: 'frames',
      samples: shared,
      rate: ANALYSIS_RATE,
      ranges: part.map((p): [number, number] => [p.start, p.end]),
      hop,
    }));
    return (await this.pool.runAll<FrameTrack[]>(tasks, () => deadline.check('features'))).flat();
  }

  /** Per-window features (jitter and shimmer follow pulses through the samples), in the pool's threads, then
   *  the ones relative to the recording's own baseline. */
  private async windowAnalyses(samples: Float32Array, tracks: FrameTrack[], speech: Uint8Array[], deadline: AnalysisBudget): Promise<WindowAnalysis[]> {
    const shared = toShared(samples);
    let at = 0;
    const tasks: PoolTask[] = chunk(tracks, this.pool.parallelism).map((part) => {
      const from = at;
      at += part.length;
      return { kind: 'windows', samples: shared, tracks: part, speech: speech.slice(from, at) };
    });
    const windows = (await this.pool.runAll<WindowAnalysis[]>(tasks, () => deadline.check('features'))).flat();
    applyRecordingBaseline(windows);
    return windows;
  }

  private async detectSpeech(kind: 'silero' | 'energy', samples: Float32Array, tracks: FrameTrack[], deadline: AnalysisBudget): Promise<Uint8Array[]> {
    if (kind === 'energy') return energySpeech(tracks);
    const timeline = await this.vad.timeline(samples, ANALYSIS_RATE, () => deadline.check('vad'));
    return tracks.map((t) => framesFromTimeline(t, timeline));
  }
}

export interface Inspection {
  duration: number;
  windows: Array<{ from: number; to: number; speechRatio: number; speechSeconds: number; levelDb: number; features: FeatureVector }>;
  speech: { silero: Uint8Array[]; energy: Uint8Array[]; both: Uint8Array[] };
}

/** Groups of consecutive windows: about three tasks per thread (so a slow one does not hold the others up),
 *  at most 8 windows (40 s) each, so the deadline is checked often. */
function chunk<T>(items: T[], threads: number): T[][] {
  const size = Math.max(1, Math.min(8, Math.ceil(items.length / (3 * threads))));
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The samples on shared memory (decoders already allocate them there; anything else is copied once). */
function toShared(x: Float32Array): Float32Array {
  if (x.buffer instanceof SharedArrayBuffer) return x;
  const s = sharedFloat32(x.length);
  s.set(x);
  return s;
}

/** Milliseconds per stage; a stage lapped twice (features) accumulates. */
class StageClock {
  private readonly began = performance.now();
  private mark = this.began;
  private readonly stages: Record<string, number> = {};

  lap(stage: string): void {
    const now = performance.now();
    this.stages[stage] = (this.stages[stage] ?? 0) + (now - this.mark);
    this.mark = now;
  }

  done(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(this.stages)) out[k] = Math.round(v * 10) / 10;
    out.total = Math.round((performance.now() - this.began) * 10) / 10;
    return out;
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function summarise(results: EmotionInterval[], duration: number): EmotionResult['summary'] {
  // Means over intervals that contain speech: silent intervals would otherwise drag "calm" into the mean.
  const spoken = results.filter((r) => r.rough > 0 || r.soft > 0);
  const avg = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const totalSpeech = results.reduce((s, r) => s + r.speech_ratio * (r.to - r.from), 0);
  return {
    rough_mean: round3(avg(spoken.map((r) => r.rough))),
    rough_max: round3(Math.max(0, ...results.map((r) => r.rough))),
    soft_mean: round3(avg(spoken.map((r) => r.soft))),
    soft_max: round3(Math.max(0, ...results.map((r) => r.soft))),
    speech_ratio: duration > 0 ? round3(totalSpeech / duration) : 0,
    duration: roundMs(duration),
  };
}
