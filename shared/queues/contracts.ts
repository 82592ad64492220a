// Owns the queue contracts: queue names, the job envelope, and each queue's input and result schemas.
import { z } from 'zod';
import type { SerializedJobError } from '../errors';

export const QUEUE_NAMES = {
  liveness: 'liveness',
  emotion: 'emotion',
} as const;
export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** Every job carries this envelope; the bytes themselves live under payloadKey, never in job data. */
export const jobEnvelopeSchema = z.object({
  requestId: z.string().min(1),
  /** Epoch milliseconds after which nobody waits for the answer; workers skip expired jobs. */
  deadline: z.number().int().positive(),
  payloadKey: z.string().min(1),
  replyTo: z.string().min(1),
  enqueuedAt: z.number().int().positive(),
  input: z.unknown(),
});
export type JobEnvelope<I = unknown> = Omit<z.infer<typeof jobEnvelopeSchema>, 'input'> & { input: I };

/** What a worker stores and publishes when a job ends. */
export type JobOutcome<R = unknown> =
  | { ok: true; value: R; workerMs: number }
  | { ok: false; error: SerializedJobError; workerMs: number };

export const livenessInputSchema = z.object({
  imageFormat: z.enum(['jpeg', 'png']),
  /** Billing context: the worker commits the reserved credit and writes the usage event. */
  billing: z
    .object({
      customerId: z.string(),
      keyId: z.string(),
      month: z.string().regex(/^\d{4}-\d{2}$/),
      plan: z.string(),
      monthlyLimit: z.number().int().nonnegative(),
      hardCap: z.boolean(),
    })
    .optional(),
});
export type LivenessInput = z.infer<typeof livenessInputSchema>;

/** Usage after a billed call, so the API can answer with the committed numbers. */
export interface UsageAfterCall {
  remaining: number;
  overLimit: number;
  monthlyLimit: number;
  used: number;
  /** Whether this call itself was billed as overage. */
  overage: boolean;
}

export interface LivenessJobValue {
  result: LivenessResult;
  usage: UsageAfterCall | null;
}

export const emotionInputSchema = z.object({
  contentType: z.string(),
  tokenId: z.string().optional(),
});
export type EmotionInput = z.infer<typeof emotionInputSchema>;

export interface Rectangle {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The liveness worker's answer: the spec's "Liveness result" plus additive fields. */
export interface LivenessResult {
  isFakeFace: boolean;
  isFakeLikelihood: number;
  isValidFace: boolean;
  faceBrightness: number;
  faceRectArea: Rectangle;
  vFaceRect: Rectangle[];
  msg: string;
  /** Machine-readable quality reasons (additive): e.g. face_too_small, too_dark, blurry. Empty when valid. */
  reasons: string[];
  latency_ms: number;
  /** Per-stage milliseconds, for metrics; the API does not return them. */
  stages?: Record<string, number>;
}

export interface EmotionInterval {
  from: number;
  to: number;
  rough: number;
  soft: number;
  /** Share of the interval that is speech, 0..1 (additive). */
  speech_ratio: number;
}

/** The emotion worker's answer: the spec's analysis body plus additive fields. */
export interface EmotionResult {
  meta: { sample_rate: number; channels: number; bit_rate: number; format_name: string };
  results: EmotionInterval[];
  summary: { rough_mean: number; rough_max: number; soft_mean: number; soft_max: number; speech_ratio: number; duration: number };
  stages?: Record<string, number>;
}
