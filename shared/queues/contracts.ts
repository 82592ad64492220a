// Owns the queue contracts: queue names, the job envelope, and each queue's input and result schemas.
import { z } from 'zod';
import type { SerializedJobError } from '../errors';
import { livenessResultSchema as publicLivenessResultSchema, rectangleSchema } from '../contracts/http/liveness';
import { emotionAnalysisSchema, emotionIntervalSchema } from '../contracts/http/emotion';

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
  /** Whose fair share the job counts in (fair-queue.ts); absent for a job run without admission. */
  tenant: z.string().min(1).optional(),
  input: z.unknown(),
});
export type JobEnvelope<I = unknown> = Omit<z.infer<typeof jobEnvelopeSchema>, 'input'> & { input: I };

/** What a worker stores and publishes when a job ends. */
export type JobOutcome<R = unknown> = { ok: true; value: R; workerMs: number } | { ok: false; error: SerializedJobError; workerMs: number };

const serializedJobErrorSchema: z.ZodType<SerializedJobError> = z.object({
  code: z.string().min(1),
  message: z.string(),
  httpStatus: z.number().int().min(400).max(599),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** The schema of a stored/published outcome whose value has `value`'s shape (parsed at the API, never cast). */
export function jobOutcomeSchema<R>(value: z.ZodType<R>): z.ZodType<JobOutcome<R>> {
  return z.union([
    z.object({ ok: z.literal(true), value, workerMs: z.number().nonnegative() }),
    z.object({ ok: z.literal(false), error: serializedJobErrorSchema, workerMs: z.number().nonnegative() }),
  ]);
}

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
      /** Epoch ms of the reservation: the one instant that decides the call's month, day and hour. */
      reservedAt: z.number().int().positive(),
      /** The caller's idempotency entry (a Redis key), so the commit can keep the committed answer there. */
      idempotencyEntry: z.string().min(1).optional(),
    })
    .optional(),
});
export type LivenessInput = z.infer<typeof livenessInputSchema>;

/** Usage after a billed call, so the API can answer with the committed numbers. */
const usageAfterCallSchema = z.object({
  remaining: z.number().int().nonnegative(),
  overLimit: z.number().int().nonnegative(),
  monthlyLimit: z.number().int().nonnegative(),
  used: z.number().int().nonnegative(),
  /** Whether this call itself was billed as overage. */
  overage: z.boolean(),
});

export const emotionInputSchema = z.object({
  contentType: z.string(),
  tokenId: z.string().optional(),
});
export type EmotionInput = z.infer<typeof emotionInputSchema>;

export type Rectangle = z.infer<typeof rectangleSchema>;

/** Per-stage milliseconds, for metrics and logs; the APIs do not return them. */
const stagesSchema = z.record(z.string(), z.number()).optional();

/** The liveness worker's answer: the public result (shared/contracts/http/liveness.ts) plus its stage timings. */
const livenessResultSchema = publicLivenessResultSchema.extend({ stages: stagesSchema });
export type LivenessResult = z.infer<typeof livenessResultSchema>;

const livenessJobValueSchema = z.object({
  result: livenessResultSchema,
  /** Null when the call is not billed; the commit fills it in with the committed counts. */
  usage: usageAfterCallSchema.nullable(),
});
export type LivenessJobValue = z.infer<typeof livenessJobValueSchema>;

export type EmotionInterval = z.infer<typeof emotionIntervalSchema>;

/** The emotion worker's answer: the public analysis body (shared/contracts/http/emotion.ts) plus its stage timings. */
const emotionResultSchema = emotionAnalysisSchema.extend({ stages: stagesSchema });
export type EmotionResult = z.infer<typeof emotionResultSchema>;

/** Each queue's outcome schema: what an API process accepts from Redis for that queue. */
export const JOB_OUTCOME_SCHEMAS: Record<QueueName, z.ZodType<JobOutcome>> = {
  liveness: jobOutcomeSchema(livenessJobValueSchema),
  emotion: jobOutcomeSchema(emotionResultSchema),
};
