// Owns the liveness API's client (/v1): createLivenessClient({ baseUrl, apiKey }) with one method per operation
// of its OpenAPI document, typed by the generated `paths`; every call answers an ApiResult. See docs/client.md.
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './generated/liveness';
import type { ErrorCodeOf } from './errors';
import { settle, type ApiResult } from './result';
import { retryingFetch, type RetryPolicy } from './retry';

export type LivenessRequest = components['schemas']['LivenessRequest'];
export type LivenessResponse = components['schemas']['LivenessResponse'];
export type UsageResponse = components['schemas']['UsageResponse'];
type Json<Op extends keyof operations, S extends keyof operations[Op]['responses']> = operations[Op]['responses'][S] extends {
  content: { 'application/json': infer B };
}
  ? B
  : never;
export type LivenessHealth = Json<'getHealth', 200>;

export interface LivenessClientOptions {
  /** Where the API is, e.g. `https://liveness.example.com` (the paths start with /v1). */
  baseUrl: string;
  /** An `lc_…` key from the console (Primary or Secondary). */
  apiKey: string;
  retry?: RetryPolicy;
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface CheckOptions extends CallOptions {
  /** Replays the stored billed answer for the same key and body within 24 h (not charged again). */
  idempotencyKey?: string;
}

export interface LivenessClient {
  /** POST /v1/check/liveness with a JSON body: the Base64 image and its format. A 200 uses one credit. */
  checkLiveness(body: LivenessRequest, options?: CheckOptions): Promise<ApiResult<LivenessResponse, ErrorCodeOf<operations['checkLiveness']>>>;
  /** POST /v1/check/liveness with the raw JPEG or PNG bytes (no Base64). */
  checkLivenessImage(
    image: Uint8Array | Blob,
    format: 'jpeg' | 'png',
    options?: CheckOptions,
  ): Promise<ApiResult<LivenessResponse, ErrorCodeOf<operations['checkLiveness']>>>;
  /** GET /v1/usage: this month's calls, limit and remaining credits. */
  getUsage(options?: CallOptions): Promise<ApiResult<UsageResponse, ErrorCodeOf<operations['getUsage']>>>;
  /** GET /v1/health (no key needed): `{ status: 'ok' }`; its 503 comes back as `service_unavailable`, the message naming what is down. */
  getHealth(options?: CallOptions): Promise<ApiResult<LivenessHealth, 'service_unavailable'>>;
  /** GET /v1/openapi.json: the document this client was generated from, as the service serves it now. */
  getOpenApi(options?: CallOptions): Promise<ApiResult<Record<string, unknown>, never>>;
}

/** The health check's 503 body is `{ status: 'error', message }`: no code, so the client names it. */
function healthError(body: unknown): { code: 'service_unavailable'; message: string } | null {
  const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? { code: 'service_unavailable', message } : null;
}

export function createLivenessClient(o: LivenessClientOptions): LivenessClient {
  const client = createClient<paths>({ baseUrl: o.baseUrl, fetch: retryingFetch(o.retry, o.fetch), headers: { 'X-API-Key': o.apiKey } });
  const idempotency = (key: string | undefined) => (key === undefined ? {} : { header: { 'Idempotency-Key': key } });
  return {
    checkLiveness: (body, { idempotencyKey, signal } = {}) =>
      settle(() => client.POST('/v1/check/liveness', { body, params: idempotency(idempotencyKey), signal })),
    checkLivenessImage: (image, format, { idempotencyKey, signal } = {}) =>
      settle(() =>
        client.POST('/v1/check/liveness', {
          // The document's raw-image bodies: the bytes go as they are, with their own Content-Type.
          body: image as unknown as string,
          bodySerializer: (bytes: unknown) => bytes,
          headers: { 'Content-Type': `image/${format}` },
          params: idempotency(idempotencyKey),
          signal,
        }),
      ),
    getUsage: ({ signal } = {}) => settle(() => client.GET('/v1/usage', { signal })),
    getHealth: ({ signal } = {}) => settle(() => client.GET('/v1/health', { signal }), undefined, healthError),
    getOpenApi: ({ signal } = {}) => settle(() => client.GET('/v1/openapi.json', { signal })),
  };
}
