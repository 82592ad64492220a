// Owns the ffprobe step and the spec's table of accepted audio: which codec each sniffed format may carry,
// sample rate, channels, bit depth and bit rate, turned into precise 400 codes before anything is decoded.
// Opus and Vorbis (Ogg, WebM/Matroska) are accepted beyond the spec's table, with its rate and channel rules.
import fs from 'node:fs';
import { InvalidInputError } from '../../../shared/errors';
import { AUDIO_FORMAT_NAMES, type AudioFormatName } from '../../../shared/contracts/http/emotion';
import { runChild } from './child';
import type { AnalysisBudget } from './analysis-budget';
import type { Sniffed, SniffedFormat } from './sniff';

export interface ProbedAudio {
  /** ffprobe's names, reported as the response's meta. */
  meta: { sample_rate: number; channels: number; bit_rate: number; format_name: AudioFormatName };
  codec: string;
  /** Container duration in seconds (an estimate for ADTS); the decoded length is authoritative. */
  duration: number;
  /** The ffmpeg demuxer to force when decoding, so untrusted bytes only ever reach the detected demuxer. */
  demuxer: string;
}

export interface ProbeLimits {
  /** Longest audio (seconds) the engine accepts; longer files get 400 too_long without being decoded. */
  maxDurationSeconds: number;
}

/** The demuxer forced for each sniffed format (ffprobe/ffmpeg -f). */
export const DEMUXER: Record<SniffedFormat, string> = {
  wav: 'wav',
  aiff: 'aiff',
  aac: 'aac',
  m4a: 'mov',
  mp3: 'mp3',
  wma: 'asf',
  flac: 'flac',
  ogg: 'ogg',
  webm: 'matroska',
};

/** What ffprobe calls each format with its forced demuxer (the public contract's list; tested against ffprobe). */
const FORMAT_NAME: Record<SniffedFormat, AudioFormatName> = AUDIO_FORMAT_NAMES;

// Opus and Vorbis (beyond the spec) are left out: Opus is built for speech at 16–32 kbps (voice notes), so the
// spec's 96 kbps floor would refuse exactly the recordings they are accepted for.
const LOSSY: ReadonlySet<SniffedFormat> = new Set(['aac', 'm4a', 'mp3', 'wma']);

/** Codecs the spec's formats may carry; anything else in a known container is unsupported. */
const CODECS: Record<SniffedFormat, readonly string[]> = {
  wav: ['pcm_s16le', 'gsm_ms'],
  aiff: ['pcm_s16be', 'pcm_s16le'],
  aac: ['aac'],
  m4a: ['aac'],
  mp3: ['mp3'],
  wma: ['wmav1', 'wmav2', 'wmapro'],
  flac: ['flac'],
  ogg: ['opus', 'vorbis'],
  webm: ['opus', 'vorbis'],
};

/** The containers beyond the spec, which a browser or a messaging app may fill with a video track too. */
const BEYOND_SPEC: ReadonlySet<SniffedFormat> = new Set(['ogg', 'webm']);

const BIT_RATE_MIN = 96_000;
const BIT_RATE_MAX = 320_000;
/** VBR streams report an average and containers add overhead: a small tolerance around the spec's bounds. */
const BIT_RATE_TOLERANCE = 0.05;

interface FfprobeStream {
  codec_type?: string;
  codec_name?: string;
  disposition?: { attached_pic?: number };
  sample_rate?: string;
  channels?: number;
  bit_rate?: string;
  bits_per_sample?: number;
  bits_per_raw_sample?: string;
  duration?: string;
}
interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { format_name?: string; bit_rate?: string; duration?: string };
}

export async function probe(ffprobePath: string, file: string, sniffed: Sniffed, limits: ProbeLimits, deadline: AnalysisBudget): Promise<ProbedAudio> {
  const demuxer = DEMUXER[sniffed.format];
  // A canonical PCM WAV header already says all ffprobe would (ffprobe costs ~0.1 s just to start); the
  // samples are then read in process (pcm.ts), or by ffmpeg for a rate the in-process resampler does not
  // cover, and a lying header ends in corrupt_audio or no_audio.
  // The same holds for a 16-bit PCM AIFF (ffprobe names it pcm_s16be, or pcm_s16le for AIFF-C 'sowt').
  if ((sniffed.format === 'wav' || sniffed.format === 'aiff') && sniffed.pcm) {
    const { sampleRate, channels, frames, bigEndian } = sniffed.pcm;
    const codec = bigEndian ? 'pcm_s16be' : 'pcm_s16le';
    const stream: FfprobeStream = { codec_type: 'audio', codec_name: codec, sample_rate: String(sampleRate), channels, bits_per_sample: 16 };
    const probed: ProbedAudio = {
      meta: { sample_rate: sampleRate, channels, bit_rate: sampleRate * channels * 16, format_name: FORMAT_NAME[sniffed.format] },
      codec,
      duration: sampleRate > 0 ? frames / sampleRate : 0,
      demuxer,
    };
    validate(sniffed, stream, probed, limits);
    return probed;
  }
  const args = ['-v', 'error', '-protocol_whitelist', 'file', '-f', demuxer, '-show_format', '-show_streams', '-of', 'json', file];
  const res = await runChild(ffprobePath, args, { deadline, stage: 'probe' });
  if (res.code !== 0) {
    throw new InvalidInputError('corrupt_audio', `The ${sniffed.format} file could not be read: ${firstLine(res.stderr.split(file).join('input'))}`);
  }
  const out = JSON.parse(res.stdout.toString('utf8')) as FfprobeOutput;
  const stream = out.streams?.find((s) => s.codec_type === 'audio');
  const video = out.streams?.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  if (!stream) {
    const holds = video ? ` (it holds only a ${video.codec_name ?? 'video'} video track)` : '';
    throw new InvalidInputError('no_audio', `The ${sniffed.format} file has no audio ${sniffed.format === 'webm' ? 'track' : 'stream'}${holds}`);
  }
  if (video && BEYOND_SPEC.has(sniffed.format)) {
    throw new InvalidInputError('unsupported_format', `This is a video file (a ${video.codec_name ?? 'video'} track beside the audio); send the audio only`);
  }
  const probed = describe(sniffed.format, demuxer, stream, out.format ?? {});
  if (sniffed.format === 'webm' && !(probed.duration > 0)) await measureLiveRecording(ffprobePath, file, probed, deadline);
  validate(sniffed, stream, probed, limits);
  return probed;
}

/**
 * A WebM written as a live stream (a browser's MediaRecorder) carries no duration, so the too_long rule would
 * have nothing to act on: list the audio track's packet times once (demuxing only, no decoding) and take the
 * end of the last one; the bit rate follows from the file size.
 */
async function measureLiveRecording(ffprobePath: string, file: string, probed: ProbedAudio, deadline: AnalysisBudget): Promise<void> {
  const args = ['-v', 'error', '-protocol_whitelist', 'file', '-f', 'matroska', '-select_streams', 'a:0'];
  args.push('-show_entries', 'packet=pts_time,duration_time', '-of', 'csv=p=0', file);
  const res = await runChild(ffprobePath, args, { deadline, stage: 'probe' });
  if (res.code !== 0) {
    throw new InvalidInputError('corrupt_audio', `The webm file could not be read: ${firstLine(res.stderr.split(file).join('input'))}`);
  }
  let end = 0;
  for (const line of res.stdout.toString('utf8').split('\n')) {
    const [pts, dur] = line.split(',').map(Number);
    if (Number.isFinite(pts)) end = Math.max(end, pts! + (Number.isFinite(dur) ? dur! : 0));
  }
  probed.duration = end;
  if (probed.meta.bit_rate === 0 && end > 0) probed.meta.bit_rate = Math.round(((await fs.promises.stat(file)).size * 8) / end);
}

function describe(format: SniffedFormat, demuxer: string, s: FfprobeStream, f: NonNullable<FfprobeOutput['format']>): ProbedAudio {
  const num = (v: string | number | undefined): number => {
    const n = Number(v);
    return Number.isFinite(n) ? n : 0;
  };
  // The stream's bit rate is the codec's; the container's includes cover art and tags, so it is the fallback
  // only (FLAC streams carry none).
  const bitRate = num(s.bit_rate) > 0 ? num(s.bit_rate) : num(f.bit_rate);
  const duration = num(s.duration) > 0 ? num(s.duration) : num(f.duration);
  return {
    meta: {
      sample_rate: num(s.sample_rate),
      channels: num(s.channels),
      bit_rate: Math.round(bitRate),
      format_name: FORMAT_NAME[format],
    },
    codec: s.codec_name ?? 'unknown',
    duration,
    demuxer,
  };
}

function validate(sniffed: Sniffed, s: FfprobeStream, p: ProbedAudio, limits: ProbeLimits): void {
  const fmt = sniffed.format;
  const { sample_rate: rate, channels, bit_rate: bitRate } = p.meta;

  if (fmt === 'wav' || fmt === 'aiff') {
    // PCM depth comes from the header; ffprobe names 8/24/32-bit and float PCM with their own codecs.
    const bits = sniffed.bitsPerSample ?? s.bits_per_sample ?? 0;
    if (sniffed.subtype === 'pcm' && bits !== 16) {
      throw new InvalidInputError('bit_depth_unsupported', `${fmt} PCM must be 16-bit; this file is ${bits}-bit`);
    }
  }
  if (!CODECS[fmt].includes(p.codec)) {
    throw new InvalidInputError('unsupported_format', `A ${fmt} file carrying ${p.codec} audio is not accepted`);
  }

  const [minRate, maxRate] = fmt === 'wav' || fmt === 'aiff' ? [8000, 80000] : [8000, 48000];
  if (!(rate >= minRate && rate <= maxRate)) {
    throw new InvalidInputError('sample_rate_out_of_range', `Sample rate ${rate} Hz is outside ${minRate / 1000}–${maxRate / 1000} kHz for ${fmt}`);
  }
  if (!(channels >= 1 && channels <= 2)) {
    throw new InvalidInputError('channels_out_of_range', `${channels} channels; 1 or 2 are accepted`);
  }
  if (LOSSY.has(fmt)) {
    const min = lossyMinimumBitRate(rate);
    if (bitRate > 0 && (bitRate < min * (1 - BIT_RATE_TOLERANCE) || bitRate > BIT_RATE_MAX * (1 + BIT_RATE_TOLERANCE))) {
      throw new InvalidInputError(
        'bit_rate_out_of_range',
        `Bit rate ${Math.round(bitRate / 1000)} kbps is outside ${Math.round(min / 1000)}–${BIT_RATE_MAX / 1000} kbps for ${fmt} at ${rate} Hz`,
      );
    }
  }
  if (p.duration > limits.maxDurationSeconds) {
    throw new InvalidInputError(
      'too_long',
      `The audio lasts ${Math.round(p.duration)} s; at most ${limits.maxDurationSeconds} s can be analysed within the processing time-out`,
    );
  }
}

/**
 * The spec's 96 kbps floor for lossy audio, scaled down below 32 kHz. MPEG-2/2.5 rates cannot reach
 * 96 kbps (LAME caps 8 kHz MP3 at 64 kbps, ffmpeg's AAC at 16 kHz mono gives ~80 kbps), so a literal
 * floor would reject every valid narrow-band file. Scaling keeps the row's intent, bits per sample:
 * 8 kHz → 24 kbps, 16 kHz → 48 kbps, 22.05 kHz → 66 kbps, ≥ 32 kHz → 96 kbps.
 */
export function lossyMinimumBitRate(sampleRate: number): number {
  return Math.round(BIT_RATE_MIN * Math.min(1, sampleRate / 32000));
}

function firstLine(s: string): string {
  return (s.split('\n').find((l) => l.trim() !== '') ?? 'unreadable').trim().slice(0, 200);
}
