// Owns the emotion API's public shapes (/feelings/v3/analysis): the request's path, size limit and content
// types, and as zod schemas the analysis body and the error body with its codes per HTTP status. The OpenAPI document (api/openapi) is
// generated from them and the contract tests check every response against that document.
import { z } from 'zod';

export const ANALYSIS_PATH = '/feelings/v3/analysis';

/** 10 MB with MB = 2^20 bytes (docs/emotion-engine.md, "Size"). */
export const MAX_AUDIO_BYTES = 10 * 1024 * 1024;

/** Browsers and file pickers label a WebM or Ogg audio recording video/webm or application/ogg; the bytes
 *  decide the format either way (a file with a video track is refused by the engine). */
const CONTAINER_TYPES: ReadonlySet<string> = new Set(['video/webm', 'video/x-matroska', 'application/ogg', 'video/ogg']);

/** The request's Content-Type rule: audio/*, or a WebM or Ogg container type. */
export function acceptedContentType(header: string): boolean {
  const type = header.split(';')[0]!.trim().toLowerCase();
  return type.startsWith('audio/') || CONTAINER_TYPES.has(type);
}

const unit = z.number().min(0).max(1);

/**
 * `meta.format_name` for each detected format: what ffprobe reports with the engine's forced demuxer (checked
 * against the real ffprobe in test/integration/emotion-engine/format-names.test.ts). m4a is read by the mov demuxer and wma by
 * asf, hence their names.
 */
export const AUDIO_FORMAT_NAMES = {
  wav: 'wav',
  aiff: 'aiff',
  aac: 'aac',
  m4a: 'mov,mp4,m4a,3gp,3g2,mj2',
  mp3: 'mp3',
  wma: 'asf',
  flac: 'flac',
  ogg: 'ogg',
  webm: 'matroska,webm',
} as const;
export type AudioFormatName = (typeof AUDIO_FORMAT_NAMES)[keyof typeof AUDIO_FORMAT_NAMES];
const audioFormatNames = Object.values(AUDIO_FORMAT_NAMES) as [AudioFormatName, ...AudioFormatName[]];

export const emotionIntervalSchema = z
  .strictObject({
    from: z.number().min(0).meta({ description: 'Start of the interval in seconds (the spec sample\'s "form" is a typo).' }),
    to: z.number().min(0).meta({ description: "End of the interval in seconds; the last interval ends at the audio's duration." }),
    rough: unit.meta({ description: 'Strain of the voice (emotion intensity), 0–1.' }),
    soft: unit.meta({ description: 'Softness of the voice (friendly, gentle tone), 0–1.' }),
    speech_ratio: unit.meta({ description: 'Share of the interval that is speech, 0–1 (additive). Under 0.3 s of speech scores 0/0.' }),
  })
  .meta({ id: 'EmotionInterval' });

export const emotionAnalysisSchema = z
  .strictObject({
    meta: z
      .strictObject({
        sample_rate: z.number().int().positive().meta({ description: 'Hz' }),
        channels: z.number().int().min(1).max(2),
        bit_rate: z.number().int().min(0).meta({ description: "The audio stream's bits per second." }),
        format_name: z.enum(audioFormatNames).meta({
          description:
            'The format detected from the bytes, as ffprobe names it: m4a is `mov,mp4,m4a,3gp,3g2,mj2`, wma is `asf`; `ogg` and `matroska,webm` carry Opus or Vorbis, beyond the spec.',
        }),
      })
      .meta({ id: 'AudioMeta' }),
    results: z.array(emotionIntervalSchema).meta({ description: 'Consecutive 5 s intervals from 0.0.' }),
    summary: z
      .strictObject({
        rough_mean: unit,
        rough_max: unit,
        soft_mean: unit,
        soft_max: unit,
        speech_ratio: unit,
        duration: z.number().min(0).meta({ description: 'Seconds of decoded audio.' }),
      })
      .meta({ id: 'AnalysisSummary', description: 'Whole-file figures (additive).' }),
  })
  .meta({ id: 'EmotionAnalysis' });

/** Every error code the emotion API answers, by HTTP status (docs/emotion-api.md, docs/emotion-engine.md). */
export const EMOTION_ERROR_CODES = {
  400: [
    'invalid_request',
    'no_audio',
    'unsupported_format',
    'corrupt_audio',
    'sample_rate_out_of_range',
    'channels_out_of_range',
    'bit_depth_unsupported',
    'bit_rate_out_of_range',
    'too_long',
  ],
  401: ['missing_token'],
  403: ['invalid_token'],
  404: ['not_found'],
  405: ['method_not_allowed'],
  413: ['payload_too_large'],
  429: ['rate_limited'],
  500: ['internal_error'],
  503: ['service_unavailable', 'processing_timeout', 'deadline_exceeded', 'input_expired'],
} as const satisfies Record<number, readonly [string, ...string[]]>;
export type EmotionErrorStatus = keyof typeof EMOTION_ERROR_CODES;

/** The error body with `error.code` limited to `codes`. */
export function emotionErrorBody(codes: readonly [string, ...string[]]) {
  return z.strictObject({
    error: z.strictObject({
      code: z.enum(codes).meta({ description: 'Machine-readable code.' }),
      message: z.string().min(1).meta({ description: 'Human-readable text; the wording is not part of the contract.' }),
    }),
  });
}
