// Owns decoding: ffmpeg reads the temporary file (never stdin: an m4a whose moov atom is at the end decodes
// to nothing from a pipe) with the sniffed demuxer forced, and writes mono 16-bit PCM at 8 kHz. Long inputs
// are decoded as several time segments in parallel ffmpeg processes, one per core.
import { InvalidInputError } from '../../../shared/errors';
import { runChild } from './child';
import type { AnalysisBudget } from './analysis-budget';
import { MAX_PCM_SAMPLES, sharedFloat32 } from './pcm';

/** Analysis rate: 8 kHz keeps GSM and narrow-band inputs comparable with wide-band ones, and Silero VAD runs at it. */
export const ANALYSIS_RATE = 8000;
/** Less audio than this (a header and a few samples) is no usable audio: 400 no_audio, not a 1 ms interval. */
const MIN_AUDIO_SECONDS = 0.1;

export function assertEnoughAudio(samples: Float32Array): Float32Array {
  if (samples.length === 0) throw new InvalidInputError('no_audio', 'The file decodes to no audio samples');
  if (samples.length < MIN_AUDIO_SECONDS * ANALYSIS_RATE) {
    throw new InvalidInputError('no_audio', `The file holds less than ${MIN_AUDIO_SECONDS} s of audio`);
  }
  return samples;
}

export interface DecodeOptions {
  ffmpegPath: string;
  file: string;
  demuxer: string;
  /** Container duration from ffprobe, used only to plan segments. */
  approxDuration: number;
  /** Number of parallel segments; 1 decodes in one pass. */
  segments: number;
  deadline: AnalysisBudget;
  signal?: AbortSignal;
}

/** Each inner segment is decoded from this far before its start to this far past its end, and the overlap
 *  dropped: the decoder (MP3's bit reservoir, AAC's overlap) and the resampler are warm at the seam and
 *  flush past it, so the samples equal one pass's. Whole seconds, like the seams themselves: on that grid
 *  every integer input rate and 8 kHz line up, so the resampler's phase is one pass's too. */
const SEAM_OVERLAP_SECONDS = 1;

/** Where the segments of a parallel decode start, in whole seconds (see SEAM_OVERLAP_SECONDS); the last one
 *  runs to the end. */
export function segmentStarts(approxDuration: number, segments: number): number[] {
  const n = Math.max(1, Math.floor(segments));
  if (n === 1 || !(approxDuration > 0)) return [0];
  const length = Math.ceil(approxDuration / n);
  return Array.from({ length: Math.ceil(approxDuration / length) }, (_, i) => i * length);
}

export async function decode(opts: DecodeOptions): Promise<Float32Array> {
  const starts = segmentStarts(opts.approxDuration, opts.segments);
  if (starts.length === 1) return finish(await decodeRange(opts));
  const parts = await Promise.all(
    starts.map((start, i) => {
      const end = starts[i + 1];
      if (end === undefined) return decodeRange(opts, start, undefined, Math.min(start, SEAM_OVERLAP_SECONDS));
      return decodeRange(opts, start, end - start, Math.min(start, SEAM_OVERLAP_SECONDS), SEAM_OVERLAP_SECONDS);
    }),
  );
  const total = parts.reduce((sum, p) => sum + p.length, 0);
  const out = sharedFloat32(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return finish(out);
}

function finish(samples: Float32Array): Float32Array {
  // Header-only files and empty streams "decode successfully" to zero samples.
  return assertEnoughAudio(samples);
}

/** One pass, or the segment [start, start + length) (to the end without a length) decoded with `preRoll`
 *  seconds before it and `postRoll` after it that are then dropped. An inner segment (one with a length) is
 *  padded or trimmed to exactly its length, so the timeline stays exact should the file end early. */
async function decodeRange(opts: DecodeOptions, start = 0, length?: number, preRoll = 0, postRoll = 0): Promise<Float32Array> {
  const args = ['-nostdin', '-v', 'error', '-protocol_whitelist', 'file', '-f', opts.demuxer];
  // Input-side -ss seeks and then decodes exactly from the requested time (accurate_seek is the default).
  if (start - preRoll > 0) args.push('-ss', String(start - preRoll));
  if (length !== undefined) args.push('-t', String(preRoll + length + postRoll));
  args.push('-i', opts.file, '-map', '0:a:0', '-vn', '-sn', '-dn', '-ac', '1', '-ar', String(ANALYSIS_RATE));
  args.push('-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1');
  // Sized for what the segment should give (a second more), so the samples are not copied into ever larger
  // buffers as they arrive; the last segment (no length) and a single pass are sized on the planned duration.
  const expectedSeconds = length !== undefined ? preRoll + length + postRoll : opts.approxDuration > 0 ? opts.approxDuration - start + preRoll : 0;
  const sink = new PcmSink(expectedSeconds > 0 ? Math.ceil((expectedSeconds + 1) * ANALYSIS_RATE) : 0);
  const res = await runChild(opts.ffmpegPath, args, { deadline: opts.deadline, stage: 'decode', signal: opts.signal, onStdout: (c) => sink.push(c) });
  if (sink.overflowed) throw new InvalidInputError('too_long', `The audio decodes to more than ${MAX_PCM_SAMPLES / ANALYSIS_RATE - 1} s`);
  if (res.code !== 0) {
    const msg = (res.stderr.split('\n').find((l) => l.trim() !== '') ?? 'decoder error').split(opts.file).join('input');
    throw new InvalidInputError('corrupt_audio', `The audio could not be decoded: ${msg.trim().slice(0, 200)}`);
  }
  const samples = sink.samples().subarray(preRoll * ANALYSIS_RATE);
  return length === undefined ? samples : exactly(samples, length * ANALYSIS_RATE);
}

function exactly(p: Float32Array, len: number): Float32Array {
  if (p.length === len) return p;
  if (p.length > len) return p.subarray(0, len);
  const out = sharedFloat32(len);
  out.set(p);
  return out;
}

/** Collects s16le bytes into a growing Float32Array (shared, for the analysis threads); chunks may split a
 *  sample across their boundary. */
export class PcmSink {
  private buf: Float32Array;
  private len = 0;
  private carry: number | undefined;
  /** Set once more than MAX_PCM_SAMPLES arrived; later bytes are dropped (memory stays bounded). */
  overflowed = false;

  constructor(expected: number) {
    this.buf = sharedFloat32(Math.min(MAX_PCM_SAMPLES, Math.max(expected, ANALYSIS_RATE)));
  }

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    if (this.len + (chunk.length >> 1) + 1 > MAX_PCM_SAMPLES) {
      this.overflowed = true;
      return;
    }
    let i = 0;
    if (this.carry !== undefined) {
      this.append((((chunk[0]! << 8) | this.carry) << 16) >> 16);
      this.carry = undefined;
      i = 1;
    }
    const pairs = (chunk.length - i) >> 1;
    this.reserve(pairs);
    const buf = this.buf;
    let len = this.len;
    for (let k = 0; k < pairs; k++, i += 2) buf[len++] = (((chunk[i]! | (chunk[i + 1]! << 8)) << 16) >> 16) / 32768;
    this.len = len;
    if (i < chunk.length) this.carry = chunk[i]!;
  }

  samples(): Float32Array {
    return this.buf.subarray(0, this.len);
  }

  private append(v: number): void {
    this.reserve(1);
    this.buf[this.len++] = v / 32768;
  }

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = sharedFloat32(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
}
