// Owns the liveness API's public shapes (/v1/*) as zod schemas: the check's request body and its limits, the
// envelope, the data of each endpoint and the error codes per HTTP status. The OpenAPI document (api/openapi) is
// generated from them and the contract tests check every response against that document.
import { z } from 'zod';
import { PLAN_IDS } from '../../billing/plans';

/** 10 MB of Base64 text, with MB = 2^20 bytes (the more lenient reading; docs/liveness-api.md, "10 MB"). */
export const MAX_IMAGE_BASE64_CHARS = 10 * 1024 * 1024;

/** The raw-bytes form's limit: what 10 MB of Base64 decodes to (7,864,320 bytes). */
export const MAX_IMAGE_BYTES = (MAX_IMAGE_BASE64_CHARS / 4) * 3;

/** The image media types taken as raw bytes on the same route (additive; docs/liveness-api.md, "Raw image bytes"). */
export const RAW_IMAGE_TYPES = { 'image/jpeg': 'jpeg', 'image/png': 'png' } as const;

/** The request body of POST /v1/check/liveness (api/liveness/route.ts parses it; the OpenAPI document shows it). */
export const livenessRequestSchema = z.object({
  image: z.string({ error: 'image must be a Base64 string' }).min(1, 'image must not be empty'),
  image_format: z.enum(['jpeg', 'png'], { error: 'image_format must be "jpeg" or "png"' }),
});

/** Machine-readable quality reasons next to `msg` (additive field; docs/liveness-api.md). */
export const QUALITY_REASONS = [
  'face_too_small',
  'face_cut_off',
  'too_dark',
  'too_bright',
  'blurry',
  'noisy',
  'too_compressed',
  'multiple_faces',
  'low_confidence',
] as const;

export const rectangleSchema = z
  .strictObject({ x: z.number().int().min(0), y: z.number().int().min(0), width: z.number().int().min(0), height: z.number().int().min(0) })
  .meta({ id: 'Rectangle', description: 'A face rectangle in the pixels of the submitted image.' });

export const livenessResultSchema = z
  .strictObject({
    isFakeFace: z.boolean().meta({ description: 'true = suspected photo or spoof; `isFakeLikelihood > 0.15` (the default threshold).' }),
    isFakeLikelihood: z
      .number()
      .min(0)
      .max(1)
      .meta({ description: 'Spoofing score, 0.0 (live) to 1.0 (spoof). Compare with your own threshold for a stricter verdict.' }),
    isValidFace: z.boolean().meta({ description: 'Whether the face is fit for a verdict (size, framing, light, focus, compression, one person).' }),
    faceBrightness: z.number().min(0).max(255).meta({ description: 'Mean brightness (luma, 0–255) of the face region.' }),
    faceRectArea: rectangleSchema.meta({ description: 'The adopted (largest) face rectangle.' }),
    vFaceRect: z.array(rectangleSchema).min(1).meta({ description: 'All detected face rectangles, largest first.' }),
    msg: z.string().meta({ description: 'Supplementary message; empty when the face passes every quality check.' }),
    reasons: z.array(z.enum(QUALITY_REASONS)).meta({ description: 'Machine-readable quality reasons behind `msg` (additive); empty when `isValidFace`.' }),
    latency_ms: z.number().int().min(0).meta({ description: 'Inference latency in milliseconds.' }),
  })
  .meta({ id: 'LivenessResult' });

export const usageSchema = z
  .strictObject({
    year_month: z
      .string()
      .regex(/^\d{4}-(0[1-9]|1[0-2])$/)
      .meta({ description: 'The month counted, `YYYY-MM`, UTC.' }),
    total_calls: z.number().int().min(0).meta({ description: 'Billed calls this month.' }),
    monthly_limit: z.number().int().min(0).meta({ description: "The plan's (or contract's) monthly credits." }),
    remaining_calls: z.number().int().min(0).meta({ description: 'Credits left this month (never below 0).' }),
    over_limit_calls: z.number().int().min(0).meta({ description: 'Overage calls this month; always 0 on the free plan or with the hard cap ON.' }),
    plan: z.enum(PLAN_IDS).meta({ description: 'The plan in effect this month.' }),
    hard_cap_enabled: z.boolean().meta({ description: 'Whether calls stop with 429 `quota_exceeded` at the limit.' }),
  })
  .meta({ id: 'Usage' });

const isoMillis = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const metadataShape = {
  date: isoMillis.meta({ description: 'When the response was made: ISO 8601, UTC, milliseconds.' }),
  ver: z
    .string()
    .regex(/^\d+\.\d+\.\d+$/)
    .meta({ description: 'The API version applied (semantic version).' }),
  customer_id: z.uuid().nullable().meta({ description: "The caller's customer UUID; null when authentication failed." }),
  remaining_calls: z.number().int().min(0).nullable().meta({ description: 'Credits left this month (clipped at 0); null when unknown.' }),
  over_limit_calls: z.number().int().min(0).nullable().meta({ description: 'Overage calls this month; null when unknown.' }),
};

export const successMetadataSchema = z.strictObject({ ...metadataShape, status: z.literal('success') }).meta({ id: 'SuccessMetadata' });
export const errorMetadataSchema = z.strictObject({ ...metadataShape, status: z.literal('error') }).meta({ id: 'ErrorMetadata' });

/** The success envelope of an endpoint whose `data` is `data`. */
export function successEnvelope<T extends z.ZodType>(data: T) {
  return z.strictObject({ metadata: successMetadataSchema, data });
}

/** Every error code the liveness API answers, by HTTP status (the spec's table plus docs/liveness-api.md, "Codes beyond the table"). */
export const LIVENESS_ERROR_CODES = {
  400: ['invalid_request', 'invalid_image'],
  401: ['invalid_api_key'],
  403: ['forbidden'],
  404: ['not_found'],
  405: ['method_not_allowed'],
  409: ['request_in_progress'],
  413: ['payload_too_large'],
  422: ['idempotency_key_reused'],
  429: ['quota_exceeded', 'rate_limited'],
  500: ['internal_error'],
  // A worker's own 503 codes reach the caller when it gave up on a job (see shared/errors.ts).
  503: ['service_unavailable', 'deadline_exceeded', 'input_expired', 'abandoned'],
} as const satisfies Record<number, readonly [string, ...string[]]>;
export type LivenessErrorStatus = keyof typeof LIVENESS_ERROR_CODES;

/** The error envelope with `error.code` limited to `codes`. */
export function errorEnvelope(codes: readonly [string, ...string[]]) {
  return z.strictObject({
    metadata: errorMetadataSchema,
    error: z.strictObject({
      code: z.enum(codes).meta({ description: 'Machine-readable code.' }),
      message: z.string().min(1).meta({ description: 'Human-readable text; the wording is not part of the contract.' }),
    }),
  });
}

/** The error envelope with any documented code: what the API's error renderer must produce. */
export const anyErrorEnvelopeSchema = errorEnvelope(Object.values(LIVENESS_ERROR_CODES).flat() as unknown as readonly [string, ...string[]]);

export const healthOkSchema = z.strictObject({ status: z.literal('ok') }).meta({ id: 'HealthOk' });
export const healthErrorSchema = z
  .strictObject({ status: z.literal('error'), message: z.enum(['database unavailable', 'queue unavailable']) })
  .meta({ id: 'HealthError' });
