// Owns POST /v1/check/liveness: validate, reserve a credit, run the job, answer within the budget.
import type { Request, Response } from 'express';
import { z } from 'zod';
import { AppError, deserializeJobError, InvalidRequestError, PayloadTooLargeError, TooManyRequestsError } from '../../shared/errors';
import type { AccountService } from '../../shared/accounts/account-service';
import type { CreditLedger } from '../../shared/billing/credit-ledger';
import type { JobClient } from '../../shared/queues/job-client';
import { JobTimeoutError } from '../../shared/queues/job-client';
import type { LivenessInput, LivenessJobValue } from '../../shared/queues/contracts';
import type { Metrics } from '../../shared/metrics';
import type { Clock } from '../../shared/billing/month';
import { nextMonthStart } from '../../shared/billing/month';
import type { IdempotencyStore, StoredResponse } from './idempotency';
import { metadata, quotaOf, setQuotaHeaders, type QuotaView } from './envelope';

/** 10 MB of Base64 text, with MB = 2^20 bytes (the more lenient reading; see README Decisions). */
export const MAX_IMAGE_BASE64_CHARS = 10 * 1024 * 1024;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The request body (the OpenAPI document is generated from this schema). */
export const livenessRequestSchema = z.object({
  image: z
    .string({ error: 'image must be a Base64 string' })
    .min(1, 'image must not be empty'),
  image_format: z.enum(['jpeg', 'png'], { error: 'image_format must be "jpeg" or "png"' }),
});

/** Parses the body into the image bytes, with the spec's invalid_request cases. */
export function parseLivenessRequest(body: unknown): { image: Buffer; imageFormat: 'jpeg' | 'png'; canonical: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError('The body must be a JSON object with "image" and "image_format" (Content-Type: application/json)');
  }
  // reportInput: tells a missing member ("is required") from one of the wrong type.
  const parsed = livenessRequestSchema.safeParse(body, { reportInput: true });
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const field = first?.path.join('.') || 'body';
    const message = first?.code === 'invalid_type' && first.input === undefined ? `${field} is required` : (first?.message ?? 'invalid body');
    throw new InvalidRequestError(message, { field });
  }
  const text = parsed.data.image.replace(/[\r\n]/g, '');
  if (text.length > MAX_IMAGE_BASE64_CHARS) {
    throw new PayloadTooLargeError(`image exceeds ${MAX_IMAGE_BASE64_CHARS} Base64 characters (10 MB)`);
  }
  if (!BASE64.test(text) || text.length % 4 === 1) {
    throw new InvalidRequestError('image is not valid Base64 (standard alphabet, no data: URL prefix)', { field: 'image' });
  }
  const image = Buffer.from(text, 'base64');
  if (image.length === 0) throw new InvalidRequestError('image decodes to no bytes', { field: 'image' });
  return { image, imageFormat: parsed.data.image_format, canonical: `${parsed.data.image_format}:${text}` };
}

export interface CheckDeps {
  accounts: AccountService;
  ledger: CreditLedger;
  jobs: JobClient;
  idempotency: IdempotencyStore;
  metrics: Metrics;
  clock: Clock;
  budgetMs: number;
}

const LATE_RESULT_POLL_MS = 100;
const LATE_RESULT_TRIES = 20;

export function checkLivenessHandler(d: CheckDeps) {
  return async (req: Request, res: Response) => {
    const auth = req.auth!;
    const { image, imageFormat, canonical } = parseLivenessRequest(req.body);
    const claim = await d.idempotency.claim(auth.account._id, req.get('idempotency-key'), canonical);
    if (claim.kind === 'replay') {
      res.setHeader('Idempotent-Replayed', 'true');
      res.status(claim.response.status).json(claim.response.body);
      return;
    }
    const finish = claim.kind === 'new' ? claim.finish : async () => undefined;
    try {
      const stored = await runAndBill(d, req, res, image, imageFormat);
      await finish(stored);
    } catch (err) {
      const keep = err instanceof AppError && err.httpStatus >= 400 && err.httpStatus < 500 && err.httpStatus !== 429;
      await finish(keep ? errorForReplay(d.clock, err, quotaOf(res)) : null).catch(() => undefined);
      throw err;
    }
  };
}

function errorForReplay(clock: Clock, err: AppError, q: QuotaView): StoredResponse {
  return { status: err.httpStatus, body: { metadata: metadata(clock, 'error', q), error: { code: err.code, message: err.message } } };
}

async function runAndBill(d: CheckDeps, req: Request, res: Response, image: Buffer, imageFormat: 'jpeg' | 'png'): Promise<StoredResponse> {
  const auth = req.auth!;
  const customerId = auth.account._id;
  const plan = d.accounts.planView(auth.account);
  await d.jobs.assertCapacity();
  const reservation = await d.ledger.reserve(customerId, plan, req.requestId);
  if (!reservation.ok) {
    d.metrics.quotaOutcomes.inc({ outcome: 'capped' });
    // Credits still in flight count as spent: a capped caller has none left to use.
    res.locals.quota = { customerId, remaining: 0, overLimit: 0, monthlyLimit: plan.monthlyLimit };
    const retryAfter = Math.ceil((nextMonthStart(d.clock()).getTime() - d.clock().getTime()) / 1000);
    throw new TooManyRequestsError('quota_exceeded', `The monthly limit of ${plan.monthlyLimit} calls is reached and the hard cap is on`, retryAfter);
  }
  const input: LivenessInput = {
    imageFormat,
    billing: { customerId, keyId: auth.keyId, month: reservation.month, plan: plan.plan, monthlyLimit: plan.monthlyLimit, hardCap: plan.hardCap },
  };
  let value: LivenessJobValue;
  try {
    value = await runJob(d, req.requestId, input, image);
  } catch (err) {
    // A release that finds nothing means the worker committed first: the answer exists, serve it.
    if (err instanceof JobTimeoutError && !(await d.ledger.release(customerId, reservation.month, req.requestId))) {
      value = await awaitCommittedResult(d, req.requestId, err);
    } else {
      if (!(err instanceof JobTimeoutError)) await d.ledger.release(customerId, reservation.month, req.requestId).catch(() => false);
      throw err;
    }
  }
  d.metrics.quotaOutcomes.inc({ outcome: value.usage?.overage ? 'overage' : 'served' });
  if (value.usage) {
    res.locals.quota = { customerId, remaining: value.usage.remaining, overLimit: value.usage.overLimit, monthlyLimit: value.usage.monthlyLimit };
  }
  const { stages: _stages, ...data } = value.result;
  const body = { metadata: metadata(d.clock, 'success', quotaOf(res)), data };
  setQuotaHeaders(res, quotaOf(res), d.clock);
  res.status(200).json(body);
  return { status: 200, body };
}

async function runJob(d: CheckDeps, requestId: string, input: LivenessInput, image: Buffer): Promise<LivenessJobValue> {
  const outcome = await d.jobs.run<LivenessInput, LivenessJobValue>({ requestId, input, payload: image, budgetMs: d.budgetMs });
  if (!outcome.ok) throw deserializeJobError(outcome.error);
  return outcome.value;
}

async function awaitCommittedResult(d: CheckDeps, requestId: string, timeout: JobTimeoutError): Promise<LivenessJobValue> {
  for (let i = 0; i < LATE_RESULT_TRIES; i++) {
    const late = await d.jobs.lastLook<LivenessJobValue>(requestId);
    if (late?.ok) return late.value;
    if (late && !late.ok) throw deserializeJobError(late.error);
    await new Promise((r) => setTimeout(r, LATE_RESULT_POLL_MS));
  }
  throw timeout;
}
