// Owns the OpenAPI 3.1 description of the emotion API (/feelings/v3/analysis), generated from the zod
// schemas of its responses (shared/contracts/http/emotion.ts). Served at /feelings/v3/openapi.json;
// every response of the emotion contract tests is checked against it.
import { OpenAPIRegistry, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { HeaderObject, OpenAPIObject } from 'openapi3-ts/oas31';
import { EMOTION_ERROR_CODES, emotionAnalysisSchema, emotionErrorBody, type EmotionErrorStatus } from '../../shared/contracts/http/emotion';
import { EMOTION_API_VERSION } from '../../shared/version';
import { COMMON_HEADERS, generateDocument, headers, registerDocumentPath, UNLISTED_METHOD_RESPONSE, UNLISTED_PATH_RESPONSE } from './common';

export const EMOTION_OPENAPI_PATH = '/feelings/v3/openapi.json';
const ANALYSIS = '/feelings/v3/analysis';

const HEADERS: Record<string, HeaderObject> = {
  ...COMMON_HEADERS,
  Allow: { ...COMMON_HEADERS.Allow, example: 'POST, OPTIONS' },
  'Access-Control-Allow-Origin': { description: 'CORS: every origin may call the API.', schema: { type: 'string', enum: ['*'] } },
  'Access-Control-Expose-Headers': {
    description: 'CORS: the headers a browser may read.',
    schema: { type: 'string' },
    example: 'X-Request-Id, X-Client-Request-Id, Retry-After, Server-Timing',
  },
  'Access-Control-Allow-Methods': { description: 'CORS preflight: the methods allowed.', schema: { type: 'string' }, example: 'POST, OPTIONS' },
  'Access-Control-Allow-Headers': {
    description: 'CORS preflight: the request headers allowed.',
    schema: { type: 'string' },
    example: 'Authorization, Content-Type',
  },
  'Access-Control-Max-Age': { description: 'CORS preflight: seconds a browser may cache this answer.', schema: { type: 'integer', minimum: 0 }, example: 600 },
  'Server-Timing': {
    description:
      'W3C Server-Timing: milliseconds per stage (`receive`, `probe`, `decode`, `vad`, `features`, `mapping`, `total` (the analysis), `worker`, `queue` (the rest of the round trip: admission, to the worker and back)).',
    schema: { type: 'string', pattern: '^[a-z_]+;dur=\\d+(\\.\\d+)?(, [a-z_]+;dur=\\d+(\\.\\d+)?)*$' },
    example: 'receive;dur=1.2, probe;dur=0.4, decode;dur=3.1, vad;dur=9.8, features;dur=31.0, mapping;dur=0.3, worker;dur=46.0',
  },
};

const CORS = ['Access-Control-Allow-Origin', 'Access-Control-Expose-Headers'];

const ERROR_EXAMPLES: Record<string, string> = {
  invalid_request: 'Content-Type must be audio/* (the raw audio file bytes)',
  no_audio: 'The request body is empty: send the audio file bytes',
  unsupported_format: 'Ogg audio; accepted: wav (PCM 16-bit, GSM 6.10), aiff (PCM 16-bit), aac (ADTS, m4a), mp3, wma, flac',
  corrupt_audio: 'The mp3 file could not be read: Invalid data found when processing input',
  sample_rate_out_of_range: 'Sample rate 96000 Hz is outside 8–48 kHz for mp3',
  channels_out_of_range: '6 channels; 1 or 2 are accepted',
  bit_depth_unsupported: 'wav PCM must be 16-bit; this file is 24-bit',
  bit_rate_out_of_range: 'Bit rate 64 kbps is outside 96–320 kbps for mp3 at 44100 Hz',
  too_long: 'The audio lasts 3600 s; at most 1800 s can be analysed within the processing time-out',
  missing_token: 'Authorization: Bearer <ACCESS_TOKEN> is required',
  invalid_token: 'The access token is wrong or revoked',
  not_found: 'No such endpoint (the endpoint is /feelings/v3/analysis)',
  method_not_allowed: 'Method not allowed; use POST, OPTIONS',
  payload_too_large: 'The audio file exceeds 10 MB (10,485,760 bytes)',
  rate_limited: 'Too many requests; retry after the time in Retry-After',
  internal_error: 'Internal server error',
  service_unavailable: 'No result within the time budget; try again shortly',
  processing_timeout: 'Analysis did not finish within the processing time-out (during features)',
  deadline_exceeded: 'deadline passed before a worker was free',
  input_expired: 'job input expired before processing',
};

function errorExamples(codes: readonly string[]) {
  return Object.fromEntries(codes.map((code) => [code, { value: { error: { code, message: ERROR_EXAMPLES[code]! } } }]));
}

function errorContent(codes: readonly [string, ...string[]]) {
  return { 'application/json': { schema: emotionErrorBody(codes), examples: errorExamples(codes) } };
}

function errorResponse(status: EmotionErrorStatus, description: string): ResponseConfig {
  const retry = status === 429 || status === 503 ? ['Retry-After'] : [];
  return { description, headers: headers(HEADERS, ['X-Request-Id', ...CORS, ...retry]), content: errorContent(EMOTION_ERROR_CODES[status]) };
}

const ANALYSIS_EXAMPLE = {
  meta: { sample_rate: 44100, channels: 2, bit_rate: 128000, format_name: 'mp3' },
  results: [
    { from: 0, to: 5, rough: 0.21, soft: 0.34, speech_ratio: 0.82 },
    { from: 5, to: 10, rough: 0.33, soft: 0.28, speech_ratio: 0.9 },
    { from: 10, to: 12.48, rough: 0.18, soft: 0.41, speech_ratio: 0.64 },
  ],
  summary: { rough_mean: 0.25, rough_max: 0.33, soft_mean: 0.33, soft_max: 0.41, speech_ratio: 0.81, duration: 12.48 },
};

const DESCRIPTION = `Voice emotion: one audio file in, \`rough\` and \`soft\` (0–1) for every 5 s of it out.

- **Authentication**: \`Authorization: Bearer <ACCESS_TOKEN>\` (missing: 401 \`missing_token\`; wrong or revoked: 403 \`invalid_token\`).
- **Body**: the raw file bytes with \`Content-Type: audio/*\`; the format is detected from the bytes: WAV (PCM 16-bit, GSM 6.10), AIFF (PCM), AAC (ADTS, M4A), MP3, WMA, FLAC; beyond the spec also Opus (Ogg, WebM/Matroska) and Vorbis (Ogg), with \`Content-Type\` \`audio/*\`, \`video/webm\`, \`video/x-matroska\`, \`application/ogg\` or \`video/ogg\`; at most 10,485,760 bytes and 30 minutes.
- **Errors**: \`{"error": {"code", "message"}}\`; 429 and 503 carry \`Retry-After\`; every answer carries \`X-Request-Id\` and \`Access-Control-Allow-Origin: *\`.
- **Unlisted**: any other path answers 404 \`not_found\` (the \`${UNLISTED_PATH_RESPONSE}\` response); another method on a listed path answers 405 \`method_not_allowed\` with \`Allow\` (the \`${UNLISTED_METHOD_RESPONSE}\` response).`;

function build(): OpenAPIObject {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'Bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An access token issued by an operator or on the console dashboard; no expiry, revocable.',
  });
  const unlistedSchemas = [
    emotionErrorBody(EMOTION_ERROR_CODES[404]).meta({ id: 'NotFoundError' }),
    emotionErrorBody(EMOTION_ERROR_CODES[405]).meta({ id: 'MethodNotAllowedError' }),
  ];
  registry.registerComponent('responses', UNLISTED_PATH_RESPONSE, {
    description: 'No such endpoint (a misspelled analysis path gets a hint naming the real one).',
    headers: headers(HEADERS, ['X-Request-Id', ...CORS]),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/NotFoundError' }, examples: errorExamples(EMOTION_ERROR_CODES[404]) } },
  });
  registry.registerComponent('responses', UNLISTED_METHOD_RESPONSE, {
    description: 'The path exists but not with this method; `Allow` lists the methods it takes.',
    headers: headers(HEADERS, ['X-Request-Id', ...CORS, 'Allow']),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/MethodNotAllowedError' }, examples: errorExamples(EMOTION_ERROR_CODES[405]) } },
  });

  registry.registerPath({
    method: 'post',
    path: ANALYSIS,
    operationId: 'analyzeEmotion',
    tags: ['Emotion'],
    summary: 'Analyse the emotion in a voice recording',
    description:
      '`rough` (vocal strain, arousal) and `soft` (gentle, breathy voice) for each consecutive 5 s interval, plus a whole-file summary. Processing time-out: 5 s.',
    security: [{ [bearer.name]: [] }],
    requestBody: {
      required: true,
      description: 'The audio file bytes (not JSON, not multipart). `Content-Type` must be `audio/*`; the format is read from the bytes.',
      content: { 'audio/*': {} },
    },
    responses: {
      200: {
        description: 'The analysis.',
        headers: headers(HEADERS, ['X-Request-Id', ...CORS, 'Server-Timing']),
        content: { 'application/json': { schema: emotionAnalysisSchema, example: ANALYSIS_EXAMPLE } },
      },
      400: errorResponse(
        400,
        '`invalid_request`: `Content-Type` is not `audio/*`. The other codes say what is wrong with the audio (see `docs/emotion-engine.md`).',
      ),
      401: errorResponse(401, 'The `Authorization: Bearer` header is missing or malformed.'),
      403: errorResponse(403, 'The token is wrong or revoked.'),
      413: errorResponse(413, 'The body exceeds 10,485,760 bytes (refused while it streams in).'),
      429: errorResponse(
        429,
        'Too many requests for the account behind the token (all tokens of an account share one fair-use allowance), or too many failed authentications from this address; `Retry-After` is 60 s or more.',
      ),
      500: errorResponse(500, 'Internal error.'),
      503: errorResponse(503, 'Temporarily unavailable (no worker, at capacity, or the 5 s processing time-out passed).'),
    },
  });

  registry.registerPath({
    method: 'options',
    path: ANALYSIS,
    operationId: 'analyzeEmotionPreflight',
    tags: ['Emotion'],
    summary: 'CORS preflight',
    security: [],
    responses: {
      204: {
        description: 'Browsers may call the endpoint from any origin.',
        headers: headers(HEADERS, ['X-Request-Id', ...CORS, 'Access-Control-Allow-Methods', 'Access-Control-Allow-Headers', 'Access-Control-Max-Age']),
      },
    },
  });

  registerDocumentPath(registry, EMOTION_OPENAPI_PATH, 'Meta', HEADERS);

  return generateDocument(registry, unlistedSchemas, { title: 'Voice Emotion API', version: EMOTION_API_VERSION, description: DESCRIPTION }, [
    { name: 'Emotion', description: 'Emotion analysis of speech audio.' },
    { name: 'Meta', description: 'This description.' },
  ]);
}

let cached: OpenAPIObject | null = null;

/** The emotion API's OpenAPI document (built once per process). */
export function emotionOpenApi(): OpenAPIObject {
  cached ??= build();
  return cached;
}
