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

export async function decode(opts: DecodeOptions): Promise<Float32Array> {
  const n = Math.max(1, Math.floor(opts.segments));
  if (n === 1 || !(opts.approxDuration > 0)) return finish(await decodeRange(opts));
  // Segment boundaries on whole samples, so each segment's length is exact; the last one runs to the end.
  const segSamples = Math.ceil((opts.approxDuration * ANALYSIS_RATE) / n);
  const parts = await Promise.all(
    Array.from({ length: n }, (_, i) => decodeRange(opts, (i * segSamples) / ANALYSIS_RATE, i < n - 1 ? segSamples / ANALYSIS_RATE : undefined)),
  );
  // Seeking in VBR MP3 or ADTS is approximate: pad or trim inner segments to their planned length, so the
  // timeline (and the intervals built on it) stays exact; a few samples at a seam do not change a window.
  const fitted = parts.map((p, i) => (i < n - 1 ? fit(p, segSamples) : p));
  const total = fitted.reduce((sum, p) => sum + p.length, 0);
  const out = sharedFloat32(total);
  let at = 0;
  for (const p of fitted) {
    out.set(p, at);
    at += p.length;
  }
  return finish(out);
}

function finish(samples: Float32Array): Float32Array {
  // Header-only files and empty streams "decode successfully" to zero samples.
  return assertEnoughAudio(samples);
}

function fit(p: Float32Array, len: number): Float32Array {
  if (p.length === len) return p;
  const out = sharedFloat32(len);
  out.set(p.subarray(0, len));
  return out;
}

async function decodeRange(opts: DecodeOptions, start?: number, length?: number): Promise<Float32Array> {
  const args = ['-nostdin', '-v', 'error', '-protocol_whitelist', 'file', '-f', opts.demuxer];
  // Input-side -ss seeks and then decodes exactly from the requested time (accurate_seek is the default).
  if (start !== undefined && start > 0) args.push('-ss', start.toFixed(6));
  if (length !== undefined) args.push('-t', length.toFixed(6));
  args.push('-i', opts.file, '-map', '0:a:0', '-vn', '-sn', '-dn', '-ac', '1', '-ar', String(ANALYSIS_RATE));
  args.push('-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1');
  // Sized for what the segment should give (a second more), so the samples are not copied into ever larger
  // buffers as they arrive; the last segment (no length) and a single pass are sized on the planned duration.
  const expectedSeconds = length ?? (opts.approxDuration > 0 ? opts.approxDuration - (start ?? 0) : 0);
  const sink = new PcmSink(expectedSeconds > 0 ? Math.ceil((expectedSeconds + 1) * ANALYSIS_RATE) : 0);
  const res = await runChild(opts.ffmpegPath, args, { deadline: opts.deadline, stage: 'decode', signal: opts.signal, onStdout: (c) => sink.push(c) });
  if (sink.overflowed) throw new InvalidInputError('too_long', `The audio decodes to more than ${MAX_PCM_SAMPLES / ANALYSIS_RATE - 1} s`);
  if (res.code !== 0) {
    const msg = (res.stderr.split('\n').find((l) => l.trim() !== '') ?? 'decoder error').split(opts.file).join('input');
    throw new InvalidInputError('corrupt_audio', `The audio could not be decoded: ${msg.trim().slice(0, 200)}`);
  }
  return sink.samples();
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
