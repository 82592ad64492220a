// Owns the voice emotion API's client (/feelings/v3): createEmotionClient({ baseUrl, token }) with one method per
// operation of its OpenAPI document, typed by the generated `paths`; every call answers an ApiResult. See docs/client.md.
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './generated/emotion';
import type { ErrorCodeOf } from './errors';
import { settle, type ApiResult } from './result';
import { retryingFetch, type RetryPolicy } from './retry';

export type EmotionAnalysis = components['schemas']['EmotionAnalysis'];

/** What the service takes as the audio's Content-Type; it reads the real format from the bytes. */
export type AudioContentType = `audio/${string}` | 'video/webm' | 'video/x-matroska' | 'application/ogg' | 'video/ogg';

/** The CORS preflight's answer, from its headers (it has no body). */
export interface EmotionPreflight {
  allowOrigin: string | null;
  allowMethods: string | null;
  allowHeaders: string | null;
  maxAgeSeconds: number | null;
}

export interface EmotionClientOptions {
  /** Where the API is, e.g. `https://emotion.example.com` (the paths start with /feelings/v3). */
  baseUrl: string;
  /** An access token from an operator or the console's Emotion API page. */
  token: string;
  retry?: RetryPolicy;
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch;
}

export interface EmotionCallOptions {
  signal?: AbortSignal;
}

export interface EmotionClient {
  /** POST /feelings/v3/analysis: the audio file's bytes as they are (not JSON, not multipart). */
  analyzeEmotion(
    audio: Uint8Array | Blob,
    contentType: AudioContentType,
    options?: EmotionCallOptions,
  ): Promise<ApiResult<EmotionAnalysis, ErrorCodeOf<operations['analyzeEmotion']>>>;
  /** OPTIONS /feelings/v3/analysis: what a browser's CORS preflight is told. */
  analyzeEmotionPreflight(options?: EmotionCallOptions): Promise<ApiResult<EmotionPreflight, never>>;
  /** GET /feelings/v3/openapi.json: the document this client was generated from, as the service serves it now. */
  getOpenApi(options?: EmotionCallOptions): Promise<ApiResult<Record<string, unknown>, never>>;
}

function preflight(_data: unknown, response: Response): EmotionPreflight {
  const maxAge = response.headers.get('access-control-max-age');
  return {
    allowOrigin: response.headers.get('access-control-allow-origin'),
    allowMethods: response.headers.get('access-control-allow-methods'),
    allowHeaders: response.headers.get('access-control-allow-headers'),
    maxAgeSeconds: maxAge === null ? null : Number(maxAge),
  };
}

export function createEmotionClient(o: EmotionClientOptions): EmotionClient {
  const client = createClient<paths>({ baseUrl: o.baseUrl, fetch: retryingFetch(o.retry, o.fetch) });
  const auth = { Authorization: `Bearer ${o.token}` };
  return {
    analyzeEmotion: (audio, contentType, { signal } = {}) =>
      settle(() =>
        client.POST('/feelings/v3/analysis', {
          body: audio,
          bodySerializer: (bytes: unknown) => bytes,
          headers: { ...auth, 'Content-Type': contentType },
          signal,
        }),
      ),
    analyzeEmotionPreflight: ({ signal } = {}) => settle(() => client.OPTIONS('/feelings/v3/analysis', { signal }), preflight),
    getOpenApi: ({ signal } = {}) => settle(() => client.GET('/feelings/v3/openapi.json', { signal })),
  };
}
