// Owns the OpenAPI 3.1 description of the liveness API (/v1/*), generated from the zod schemas of
// the request and of the responses (shared/contracts/http/liveness.ts).
// Served at /v1/openapi.json; every response of the contract tests is checked against it.
import { OpenAPIRegistry, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { HeaderObject, OpenAPIObject } from 'openapi3-ts/oas31';
import { z } from 'zod';
import {
  errorEnvelope,
  healthErrorSchema,
  healthOkSchema,
  LIVENESS_ERROR_CODES,
  livenessRequestSchema,
  livenessResultSchema,
  successEnvelope,
  usageSchema,
  type LivenessErrorStatus,
} from '../../shared/contracts/http/liveness';
import { LIVENESS_API_VERSION } from '../../shared/version';
import { COMMON_HEADERS, generateDocument, headers, registerDocumentPath, UNLISTED_METHOD_RESPONSE, UNLISTED_PATH_RESPONSE } from './common';

export const LIVENESS_OPENAPI_PATH = '/v1/openapi.json';

const HEADERS: Record<string, HeaderObject> = {
  ...COMMON_HEADERS,
  'X-Quota-Limit': { description: 'Monthly credits of the plan (or contract).', schema: { type: 'integer', minimum: 0 }, example: 1000 },
  'X-Quota-Remaining': { description: 'Credits left this month (never below 0).', schema: { type: 'integer', minimum: 0 }, example: 999 },
  'X-Quota-Reset': {
    description: 'When the credits are renewed: the next UTC month start, ISO 8601.',
    schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-01T00:00:00\\.000Z$' },
    example: '2026-12-01T00:00:00.000Z',
  },
  'Access-Control-Allow-Origin': { description: 'CORS: any origin may read this document.', schema: { type: 'string', enum: ['*'] } },
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this is the stored answer of an earlier request with the same `Idempotency-Key` and body; not charged again.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const QUOTA = ['X-Quota-Limit?', 'X-Quota-Remaining?', 'X-Quota-Reset?'];
const CUSTOMER = '0b7e6c1e-2f4d-4c8a-9a51-2d0f6e3b8c47';
const DATE = '2026-11-23T10:15:30.123Z';

const meta = (status: 'success' | 'error', customer: string | null, remaining: number | null, over: number | null) => ({
  date: DATE,
  ver: LIVENESS_API_VERSION,
  customer_id: customer,
  remaining_calls: remaining,
  over_limit_calls: over,
  status,
});

/** One example error body per code, with what the caller would see. */
const ERROR_EXAMPLES: Record<string, { summary: string; message: string; authenticated: boolean }> = {
  invalid_request: {
    summary: 'The body is not a JSON object with a Base64 image and jpeg/png',
    message: 'image_format must be "jpeg" or "png"',
    authenticated: true,
  },
  invalid_image: { summary: 'Undecodable bytes, a format mismatch, or no face', message: 'No face was detected in the image.', authenticated: true },
  invalid_api_key: {
    summary: 'Missing, unknown or regenerated key',
    message: 'The API key is missing, invalid, deactivated, expired or replaced',
    authenticated: false,
  },
  forbidden: { summary: 'The account is suspended, cancelled or not activated', message: 'This account is suspended; contact support', authenticated: false },
  not_found: { summary: 'No such endpoint', message: 'No such endpoint', authenticated: false },
  method_not_allowed: { summary: 'Wrong method for this path', message: 'Method not allowed; use POST', authenticated: false },
  request_in_progress: {
    summary: 'The first request with this Idempotency-Key is still running',
    message: 'A request with this Idempotency-Key is still being processed',
    authenticated: true,
  },
  payload_too_large: {
    summary: 'The Base64 image is over 10,485,760 characters',
    message: 'The request body exceeds the 10 MB image limit',
    authenticated: true,
  },
  idempotency_key_reused: {
    summary: 'The Idempotency-Key was used with another body',
    message: 'This Idempotency-Key was used with a different request body',
    authenticated: true,
  },
  quota_exceeded: {
    summary: 'Monthly limit reached with the hard cap ON (always on the free plan)',
    message: 'The monthly limit of 50 calls is reached and the hard cap is on',
    authenticated: true,
  },
  rate_limited: {
    summary: 'Fair-use throttle (per account), too many uploads in flight (per account), or too many failed authentications (per address)',
    message: 'Too many requests; slow down',
    authenticated: true,
  },
  internal_error: { summary: 'An unexpected error; quote X-Request-Id to support', message: 'Internal server error', authenticated: true },
  service_unavailable: {
    summary: 'No worker, at capacity, no result within the budget, or the database/queue is down',
    message: 'No result within the time budget; try again shortly',
    authenticated: true,
  },
  deadline_exceeded: { summary: 'The job waited past its deadline', message: 'deadline passed before a worker was free', authenticated: true },
  input_expired: { summary: 'The image expired before a worker took it', message: 'job input expired before processing', authenticated: true },
  abandoned: {
    summary: 'The request was given up before its result was ready',
    message: 'the request was abandoned before its result was ready',
    authenticated: true,
  },
};

function errorExamples(codes: readonly string[]) {
  return Object.fromEntries(
    codes.map((code) => {
      const e = ERROR_EXAMPLES[code]!;
      const metadata =
        code === 'quota_exceeded' ? meta('error', CUSTOMER, 0, 0) : e.authenticated ? meta('error', CUSTOMER, 812, 0) : meta('error', null, null, null);
      return [code, { summary: e.summary, value: { metadata, error: { code, message: e.message } } }];
    }),
  );
}

function errorResponse(status: LivenessErrorStatus, description: string, extraHeaders: string[] = []): ResponseConfig {
  const codes = LIVENESS_ERROR_CODES[status];
  const retry = status === 429 || status === 503 ? ['Retry-After'] : [];
  return {
    description,
    headers: headers(HEADERS, ['X-Request-Id', ...QUOTA, ...retry, ...extraHeaders]),
    content: {
      'application/json': {
        schema: errorEnvelope(codes),
        examples: errorExamples(codes),
      },
    },
  };
}

/** The documented answer's data; the tests also settle it as the result of calls they bill without the engine. */
export const LIVENESS_RESULT_EXAMPLE = {
  isFakeFace: false,
  isFakeLikelihood: 0.0213,
  isValidFace: true,
  faceBrightness: 131.4,
  faceRectArea: { x: 212, y: 148, width: 236, height: 301 },
  vFaceRect: [{ x: 212, y: 148, width: 236, height: 301 }],
  msg: '',
  reasons: [],
  latency_ms: 21,
};

const SUCCESS_EXAMPLE = { metadata: meta('success', CUSTOMER, 999, 0), data: LIVENESS_RESULT_EXAMPLE };

const USAGE_EXAMPLE = {
  metadata: meta('success', CUSTOMER, 812, 0),
  data: { year_month: '2026-11', total_calls: 188, monthly_limit: 1000, remaining_calls: 812, over_limit_calls: 0, plan: 'starter', hard_cap_enabled: false },
};

const DESCRIPTION = `Passive face liveness: one still JPEG or PNG in, a spoof verdict and score out.

- **Authentication**: \`X-API-Key: lc_…\` (Primary or Secondary key from the console).
- **Envelope**: every answer except \`GET /v1/health\` is \`{metadata, data}\` or \`{metadata, error: {code, message}}\`.
- **Billing**: only a 200 from \`POST /v1/check/liveness\` uses a credit; every error is free. Authenticated answers carry \`X-Quota-Limit\`, \`X-Quota-Remaining\` and \`X-Quota-Reset\`; 429 and 503 carry \`Retry-After\`; every answer carries \`X-Request-Id\`.
- **Idempotency**: an optional \`Idempotency-Key\` makes a retry of the same body within 24 h replay the stored billed answer; an unbilled answer (any error) is not kept, so a retry runs the call again.
- **Refused before reading**: authentication, the quota, the throttle and the account's share of uploads in flight are decided before the body is read; an answer given before the body was read says \`Connection: close\` and the rest of the upload is never read.
- **Unlisted**: any other path answers 404 \`not_found\` (the \`${UNLISTED_PATH_RESPONSE}\` response); another method on a listed path answers 405 \`method_not_allowed\` with \`Allow\` (the \`${UNLISTED_METHOD_RESPONSE}\` response).
- **Versioning**: \`metadata.ver\` and the \`/v1\` path; minor versions may add fields, so ignore members you do not know.`;

function build(): OpenAPIObject {
  const registry = new OpenAPIRegistry();
  const apiKey = registry.registerComponent('securitySchemes', 'ApiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'A key beginning with `lc_`; a regenerated key stops working at once (401).',
  });
  const security = [{ [apiKey.name]: [] }];
  // Response components reference these schemas by id; the generator is handed them beside the registry.
  const unlistedSchemas = [
    errorEnvelope(LIVENESS_ERROR_CODES[404]).meta({ id: 'NotFoundError' }),
    errorEnvelope(LIVENESS_ERROR_CODES[405]).meta({ id: 'MethodNotAllowedError' }),
  ];
  registry.registerComponent('responses', UNLISTED_PATH_RESPONSE, {
    description: 'No such endpoint.',
    headers: headers(HEADERS, ['X-Request-Id']),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/NotFoundError' }, examples: errorExamples(LIVENESS_ERROR_CODES[404]) } },
  });
  registry.registerComponent('responses', UNLISTED_METHOD_RESPONSE, {
    description: 'The path exists but not with this method; `Allow` lists the methods it takes.',
    headers: headers(HEADERS, ['X-Request-Id', 'Allow']),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/MethodNotAllowedError' }, examples: errorExamples(LIVENESS_ERROR_CODES[405]) } },
  });

  const common = {
    401: errorResponse(401, 'The API key is missing, unknown, or replaced by a regeneration (`customer_id` null).'),
    403: errorResponse(403, 'The key is valid but its account is suspended, cancelled or not activated.'),
    429: errorResponse(
      429,
      '`quota_exceeded`: the monthly limit is reached with the hard cap ON (`Retry-After` counts to the next UTC month). `rate_limited`: the fair-use throttle per account (both keys; a call takes a token per started MiB of its body, and owes its parse and worker time), too many request bodies in flight for this account (12 MiB by default; wait for their answers), or too many failed authentications from this address (only failures count).',
    ),
    500: errorResponse(500, 'Internal error; nothing was charged.'),
    503: errorResponse(
      503,
      'Temporarily unavailable: no worker, at capacity, no result within the budget, or the database or queue is down. Nothing was charged.',
    ),
  };

  registry.registerPath({
    method: 'post',
    path: '/v1/check/liveness',
    operationId: 'checkLiveness',
    tags: ['Liveness'],
    summary: 'Check one face image for liveness',
    description: 'Decides whether the face in one still image is live or a spoof (print, screen, mask). A 200 uses one credit.',
    security,
    request: {
      headers: z.object({
        'Idempotency-Key': z
          .string()
          .regex(/^[\x21-\x7e]{1,255}$/)
          .optional()
          .meta({
            description:
              'Optional, 1–255 printable ASCII characters. The same key and body within 24 h replay the stored billed answer (not charged again); an error is not kept, so a retry runs the call again.',
            example: 'order-42',
          }),
      }),
      body: {
        required: true,
        content: {
          'application/json': {
            schema: livenessRequestSchema.meta({
              id: 'LivenessRequest',
              description:
                '`image`: the Base64 image bytes (standard alphabet, no `data:` prefix, line breaks allowed), at most 10,485,760 characters (else 413). `image_format`: the real format of the bytes.',
            }),
            example: { image: '/9j/4AAQSkZJRgABAQAAAQABAAD…', image_format: 'jpeg' },
          },
          'image/jpeg': {
            schema: { type: 'string', format: 'binary', description: 'The raw JPEG bytes (no Base64, no JSON), at most 7,864,320 bytes (else 413).' },
          },
          'image/png': {
            schema: { type: 'string', format: 'binary', description: 'The raw PNG bytes (no Base64, no JSON), at most 7,864,320 bytes (else 413).' },
          },
        },
      },
    },
    responses: {
      200: {
        description: 'The verdict. One credit used (unless this is an idempotent replay).',
        headers: headers(HEADERS, ['X-Request-Id', ...QUOTA, 'Idempotent-Replayed?']),
        content: { 'application/json': { schema: successEnvelope(livenessResultSchema).meta({ id: 'LivenessResponse' }), example: SUCCESS_EXAMPLE } },
      },
      400: errorResponse(
        400,
        '`invalid_request`: the body is not a JSON object with `image` (Base64) and `image_format` (`jpeg`|`png`) (a body of 1 MiB or more is refused as it streams, the rest unread), a bad `Idempotency-Key`, or a body that arrived slower than 64 KiB/s after its first 2 s (cut). `invalid_image`: the bytes cannot be decoded, do not match `image_format`, or hold no face.',
        ['Idempotent-Replayed?'],
      ),
      401: common[401],
      403: common[403],
      409: errorResponse(409, 'The first request with this `Idempotency-Key` is still running.'),
      413: errorResponse(413, 'The Base64 image exceeds 10,485,760 characters (refused before it is read).', ['Idempotent-Replayed?']),
      422: errorResponse(422, 'This `Idempotency-Key` was used with a different body.'),
      429: common[429],
      500: common[500],
      503: common[503],
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/v1/usage',
    operationId: 'getUsage',
    tags: ['Usage'],
    summary: "This month's usage",
    description: 'Calls, limit, remaining credits and overage of the current UTC month. Free.',
    security,
    responses: {
      200: {
        description: "The caller's usage this month.",
        headers: headers(HEADERS, ['X-Request-Id', 'X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset']),
        content: { 'application/json': { schema: successEnvelope(usageSchema).meta({ id: 'UsageResponse' }), example: USAGE_EXAMPLE } },
      },
      ...common,
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/v1/health',
    operationId: 'getHealth',
    tags: ['Health'],
    summary: 'Service health',
    description: 'No authentication, no envelope. 503 when the database (checked first) or the queue is unavailable.',
    security: [],
    responses: {
      200: {
        description: 'Healthy.',
        headers: headers(HEADERS, ['X-Request-Id']),
        content: { 'application/json': { schema: healthOkSchema, example: { status: 'ok' } } },
      },
      503: {
        description: 'The database or the queue is unavailable.',
        headers: headers(HEADERS, ['X-Request-Id']),
        content: { 'application/json': { schema: healthErrorSchema, example: { status: 'error', message: 'database unavailable' } } },
      },
    },
  });

  registerDocumentPath(registry, LIVENESS_OPENAPI_PATH, 'Health', HEADERS);

  return generateDocument(registry, unlistedSchemas, { title: 'Liveness API', version: LIVENESS_API_VERSION, description: DESCRIPTION }, [
    { name: 'Liveness', description: 'Face liveness (anti-spoofing) checks.' },
    { name: 'Usage', description: 'Credits and plan.' },
    { name: 'Health', description: 'Health and this description.' },
  ]);
}

let cached: OpenAPIObject | null = null;

/** The liveness API's OpenAPI document (built once per process). */
export function livenessOpenApi(): OpenAPIObject {
  cached ??= build();
  return cached;
}
