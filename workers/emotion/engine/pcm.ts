// Owns the in-process decoder for canonical 16-bit PCM (WAV little-endian, AIFF big-endian, AIFF-C sowt):
// the samples are read straight from the request body, downmixed and resampled to the analysis rate with
// the same filter as ffmpeg's default resampler (libswresample: Kaiser-windowed sinc, β 9, 32 taps at the
// lower rate, cutoff 0.97 of its Nyquist frequency, exact rational phases), so the result matches the
// ffmpeg path to about one least-significant bit without paying ~0.1 s to start ffmpeg. Every other
// format (and any PCM whose rate needs more than MAX_PHASES filter phases) still goes through ffmpeg.
// The filter runs in WebAssembly SIMD (resample-simd.ts) where the runtime has it, bit-identical to the
// scalar loop here.
import os from 'node:os';
import { fitsInt32, simdResampler } from './resample-simd';

/** Where the samples are and how they are laid out; read from the header by sniff(). */
export interface PcmLayout {
  sampleRate: number;
  channels: number;
  bigEndian: boolean;
  /** Byte offset of the first sample frame. */
  dataOffset: number;
  /** Whole sample frames available in the body. */
  frames: number;
}

const LITTLE_ENDIAN_HOST = os.endianness() === 'LE';

/**
 * Most decoded samples one request may hold: 30 minutes at the 8 kHz analysis rate (the engine's longest
 * accepted audio) plus a second of slack, about 58 MB of Float32. A file whose header under-states its
 * length (a decompression bomb) stops here instead of growing the buffer until the worker runs out of memory.
 */
export const MAX_PCM_SAMPLES = (30 * 60 + 1) * 8000;

/** libswresample's defaults (filter_size, cutoff, kaiser_beta, 1 << phase_shift). */
const FILTER_SIZE = 32;
const CUTOFF = 0.97;
const KAISER_BETA = 9;
const MAX_PHASES = 1024;

/** Whether this layout can be decoded in process (1–2 channels; a rate the exact polyphase filter covers). */
export function pcmDecodable(layout: PcmLayout, outRate: number): boolean {
  if (!(layout.channels === 1 || layout.channels === 2) || layout.frames <= 0 || layout.sampleRate < outRate) return false;
  const g = gcd(layout.sampleRate, outRate);
  return outRate / g <= MAX_PHASES;
}

/** Integer sample values: the 16-bit input channels, or resampled (still integer-valued) outputs. */
export type IntegerSamples = Int16Array | Float32Array;

/** A Float32Array every analysis thread can read without a copy. */
export function sharedFloat32(length: number): Float32Array {
  return new Float32Array(new SharedArrayBuffer(Math.max(1, length) * 4), 0, length);
}

/**
 * Mono samples at `outRate`, as ffmpeg's s16le output read back (bit-exact away from the last few samples):
 * each channel low-passed and decimated by the exact rational ratio in 16-bit arithmetic, then the two
 * averaged (swr's stereo → mono matrix, ½ L + ½ R, rounded). `split` may compute output ranges elsewhere
 * (the analysis pool); by default they are computed here.
 */
export async function decodePcm(
  body: Buffer,
  layout: PcmLayout,
  outRate: number,
  split?: (channels: Int16Array[], ranges: Array<[number, number]>) => Promise<Float32Array[]>,
): Promise<Float32Array> {
  const channels = deinterleave(body, layout);
  if (layout.sampleRate === outRate) return toUnit(channels.length === 1 ? channels[0]! : mixdown(channels, 0, layout.frames));
  const total = resampledLength(layout.frames, layout.sampleRate, outRate);
  const out = sharedFloat32(total);
  const parts = split && total > 4 * outRate ? Math.min(16, Math.ceil(total / (4 * outRate))) : 1;
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i < parts; i++) ranges.push([Math.floor((i * total) / parts), Math.floor(((i + 1) * total) / parts)]);
  const pieces = parts > 1 && split ? await split(channels, ranges) : ranges.map(([a, b]) => resampleChannels(channels, layout.sampleRate, outRate, a, b));
  pieces.forEach((p, i) => out.set(p, ranges[i]![0]));
  return toUnit(out);
}

/** Outputs [from, to) of every channel, resampled and (for two) averaged: integer sample values. */
export function resampleChannels(channels: IntegerSamples[], inRate: number, outRate: number, from: number, to: number): Float32Array {
  const res = channels.map((c) => resample(c, inRate, outRate, from, to));
  return res.length === 1 ? res[0]! : mixdown(res, 0, res[0]!.length);
}

function mixdown(ch: IntegerSamples[], from: number, to: number): Float32Array {
  const [a, b] = [ch[0]!, ch[1]!];
  const out = new Float32Array(to - from);
  for (let i = from; i < to; i++) out[i - from] = (a[i]! + b[i]! + 1) >> 1;
  return out;
}

/** The channels as 16-bit samples on shared memory (the analysis threads read them without a copy). */
function deinterleave(body: Buffer, l: PcmLayout): Int16Array[] {
  const n = l.frames;
  const chs = Array.from({ length: l.channels }, () => new Int16Array(new SharedArrayBuffer(Math.max(1, n) * 2), 0, n));
  const le = !l.bigEndian;
  const k = l.channels;
  if (le && LITTLE_ENDIAN_HOST && (body.byteOffset + l.dataOffset) % 2 === 0) {
    // Aligned little-endian data: read it as Int16 directly (the common case, and much faster).
    const v = new Int16Array(body.buffer, body.byteOffset + l.dataOffset, n * k);
    if (k === 1) {
      chs[0]!.set(v);
      return chs;
    }
    for (let c = 0; c < k; c++) {
      const out = chs[c]!;
      for (let i = 0; i < n; i++) out[i] = v[i * k + c]!;
    }
    return chs;
  }
  const view = new DataView(body.buffer, body.byteOffset + l.dataOffset, n * 2 * k);
  for (let c = 0; c < k; c++) {
    const out = chs[c]!;
    for (let i = 0; i < n; i++) out[i] = view.getInt16(2 * (i * k + c), le);
  }
  return chs;
}

/** Integer sample values (clipped to 16 bits) scaled to ±1, as PcmSink reads ffmpeg's s16le. */
function toUnit(x: IntegerSamples): Float32Array {
  const out = x instanceof Float32Array && x.buffer instanceof SharedArrayBuffer ? x : sharedFloat32(x.length);
  for (let i = 0; i < x.length; i++) {
    const v = x[i]!;
    out[i] = (v > 32767 ? 32767 : v < -32768 ? -32768 : v) / 32768;
  }
  return out;
}

interface FilterBank {
  /** Phases (the reduced output rate). */
  phases: number;
  /** Input samples advanced per output sample, as phases/step: in = step / phases. */
  step: number;
  taps: number;
  center: number;
  /** phases × taps coefficients. */
  coef: Float64Array;
  /** Whether every output's sum fits 32-bit integers (the WebAssembly SIMD path is then exact). */
  int32: boolean;
}

const banks = new Map<string, FilterBank>();

/** swr's build_filter(): sinc at `factor` × the input Nyquist, Kaiser window, normalised to unit DC gain by phase 0. */
function filterBank(inRate: number, outRate: number): FilterBank {
  const key = `${inRate}:${outRate}`;
  const cached = banks.get(key);
  if (cached) return cached;
  const g = gcd(inRate, outRate);
  const phases = outRate / g;
  const step = inRate / g;
  const factor = Math.min(1, (outRate * CUTOFF) / inRate);
  let taps = Math.max(1, Math.ceil(FILTER_SIZE / factor));
  if (taps > 1) taps = (taps + 1) & ~1;
  const center = (taps - 1) >> 1;
  const coef = new Float64Array(phases * taps);
  const tab = new Float64Array(taps);
  const i0beta = besselI0(KAISER_BETA);
  let norm = 0;
  for (let ph = 0; ph < phases; ph++) {
    for (let i = 0; i < taps; i++) {
      const x = Math.PI * (i - center - ph / phases) * factor;
      let y = x === 0 ? 1 : Math.sin(x) / x;
      const w = (2 * x) / (factor * taps * Math.PI);
      y *= besselI0(KAISER_BETA * Math.sqrt(Math.max(1 - w * w, 0))) / i0beta;
      tab[i] = y;
      if (ph === 0) norm += y;
    }
    // swr resamples 16-bit audio in 16-bit arithmetic: coefficients rounded to Q15.
    for (let i = 0; i < taps; i++) coef[ph * taps + i] = Math.max(-32768, Math.min(32767, Math.round((tab[i]! * 32768) / norm)));
  }
  const bank: FilterBank = { phases, step, taps, center, coef, int32: false };
  bank.int32 = fitsInt32(bank);
  banks.set(key, bank);
  return bank;
}

/** Whether `resample` takes the WebAssembly SIMD path for this rate pair (tests check it does). */
export function resamplesWithSimd(inRate: number, outRate: number): boolean {
  return filterBank(inRate, outRate).int32 && simdResampler() !== null;
}

/** Samples `resample` produces for `frames` input samples. */
export function resampledLength(frames: number, inRate: number, outRate: number): number {
  return Math.round((frames * outRate) / inRate);
}

/**
 * Polyphase decimation of outputs [from, to): output j sits at input time j·in/out; the input is mirrored
 * at both ends (as swr does) so the first and last outputs see a full filter. The output length is
 * frames · out / in rounded (ffmpeg's own count wanders within a sample of that, depending on how its
 * packets fall). Ranges let the work be split across threads; each output depends only on the input.
 */
export function resample(x: IntegerSamples, inRate: number, outRate: number, from = 0, to = resampledLength(x.length, inRate, outRate)): Float32Array {
  const bank = filterBank(inRate, outRate);
  const simd = bank.int32 ? simdResampler() : null;
  return simd ? simd.resample(x, bank, from, to, mirror) : resampleScalar(x, inRate, outRate, from, to);
}

/** The same outputs in plain JavaScript doubles (runtimes without WebAssembly SIMD; the reference in tests). */
export function resampleScalar(x: IntegerSamples, inRate: number, outRate: number, from = 0, to = resampledLength(x.length, inRate, outRate)): Float32Array {
  const { phases, step, taps, center, coef } = filterBank(inRate, outRate);
  const n = x.length;
  const out = new Float32Array(Math.max(0, to - from));
  const stepWhole = Math.floor(step / phases);
  const stepFrac = step % phases;
  // Output j reads x[idx .. idx + taps) with idx = floor(j·step / phases) − center, phase (j·step) mod phases.
  let idx = Math.floor((from * step) / phases) - center;
  let ph = (from * step) % phases;
  for (let j = 0; j < out.length; j++) {
    const base = ph * taps;
    let acc: number;
    if (idx >= 0 && idx + taps <= n) {
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let i = 0;
      for (; i + 3 < taps; i += 4) {
        s0 += x[idx + i]! * coef[base + i]!;
        s1 += x[idx + i + 1]! * coef[base + i + 1]!;
        s2 += x[idx + i + 2]! * coef[base + i + 2]!;
        s3 += x[idx + i + 3]! * coef[base + i + 3]!;
      }
      for (; i < taps; i++) s0 += x[idx + i]! * coef[base + i]!;
      acc = s0 + s1 + s2 + s3;
    } else {
      acc = 0;
      for (let i = 0; i < taps; i++) acc += x[mirror(idx + i, n)]! * coef[base + i]!;
    }
    // Integer samples × Q15 coefficients sum exactly in a double; round half up as swr's (acc + 2^14) >> 15.
    out[j] = Math.floor((acc + 16384) / 32768);
    idx += stepWhole;
    ph += stepFrac;
    if (ph >= phases) {
      ph -= phases;
      idx++;
    }
  }
  return out;
}

/** Whole-sample reflection about the first and last samples (x[-k] = x[k], x[n-1+k] = x[n-1-k]). */
function mirror(i: number, n: number): number {
  if (n === 1) return 0;
  const period = 2 * (n - 1);
  let k = i % period;
  if (k < 0) k += period;
  return k < n ? k : period - k;
}

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}
