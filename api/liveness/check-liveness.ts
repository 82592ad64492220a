// Owns POST /v1/check/liveness: validate, reserve a credit, run the job, answer within the budget.
// Order of refusals (README Decisions): quota (429 quota_exceeded) before the fair-use throttle
// (429 rate_limited) before capacity (503): a capped caller learns the real reason and when it ends,
// and a 503 only ever means "the service cannot serve this in time". Every step spends only what is
// left of the request's deadline.
import type { Request, Response } from 'express';
import { z } from 'zod';
import { AppError, deserializeJobError, InternalError, InvalidRequestError, PayloadTooLargeError, TooManyRequestsError } from '../../shared/errors';
import type { AccountService } from '../../shared/accounts/account-service';
import type { CreditLedger, ReserveResult } from '../../shared/billing/credit-ledger';
import type { JobClient } from '../../shared/queues/job-client';
import { JobTimeoutError, type Admission } from '../../shared/queues/job-client';
import { JOB_OUTCOME_SCHEMAS, type JobOutcome, type LivenessInput, type LivenessJobValue } from '../../shared/queues/contracts';
import type { PlanView } from '../../shared/accounts/account-service';
import type { Metrics } from '../../shared/metrics';
import type { Clock } from '../../shared/billing/month';
import type { Throttle } from '../http/throttle';
import { nextMonthStart } from '../../shared/billing/month';
import type { IdempotencyStore, StoredResponse } from './idempotency';
import { metadata, quotaFromSnapshot, quotaOf, setQuota, setQuotaHeaders, type QuotaView } from './envelope';
import { decodeStrictBase64 } from './strict-base64';

/** 10 MB of Base64 text, with MB = 2^20 bytes (the more lenient reading; see README Decisions). */
export const MAX_IMAGE_BASE64_CHARS = 10 * 1024 * 1024;

/** The request body (the OpenAPI document is generated from this schema). */
export const livenessRequestSchema = z.object({
  image: z.string({ error: 'image must be a Base64 string' }).min(1, 'image must not be empty'),
  image_format: z.enum(['jpeg', 'png'], { error: 'image_format must be "jpeg" or "png"' }),
});

/**
 * Parses the body into the image bytes, with the spec's invalid_request cases. `canonical` (the text an
 * Idempotency-Key's body hash covers) is built only when read: most calls carry no key.
 */
export function parseLivenessRequest(body: unknown): { image: Buffer; imageFormat: 'jpeg' | 'png'; readonly canonical: string } {
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
  const raw = parsed.data.image;
  const text = raw.includes('\n') || raw.includes('\r') ? raw.replace(/[\r\n]/g, '') : raw;
  if (text.length > MAX_IMAGE_BASE64_CHARS) {
    throw new PayloadTooLargeError(`image exceeds ${MAX_IMAGE_BASE64_CHARS} Base64 characters (10 MB)`);
  }
  const image = decodeStrictBase64(text);
  if (!image) {
    throw new InvalidRequestError('image is not valid Base64 (standard alphabet, no data: URL prefix)', { field: 'image' });
  }
  if (image.length === 0) throw new InvalidRequestError('image decodes to no bytes', { field: 'image' });
  const imageFormat = parsed.data.image_format;
  return {
    image,
    imageFormat,
    get canonical() {
      return `${imageFormat}:${text}`;
    },
  };
}

export interface CheckDeps {
  accounts: AccountService;
  ledger: CreditLedger;
  jobs: JobClient;
  idempotency: IdempotencyStore;
  /** The fair-use limit per API key, checked after the quota (see the module header). */
  throttle: Throttle;
  metrics: Metrics;
  clock: Clock;
  budgetMs: number;
}

export function checkLivenessHandler(d: CheckDeps) {
  return async (req: Request, res: Response) => {
    const auth = req.auth!;
    const request = parseLivenessRequest(req.body);
    const { image, imageFormat } = request;
    const idempotencyKey = req.get('idempotency-key');
    const claim = await req.deadline.race(
      'idempotency',
      d.idempotency.claim(auth.account._id, idempotencyKey, idempotencyKey === undefined ? '' : request.canonical, req.requestId),
    );
    if (claim.kind === 'replay') {
      res.setHeader('Idempotent-Replayed', 'true');
      res.status(claim.response.status).json(claim.response.body);
      return;
    }
    if (claim.kind === 'committed') {
      // The worker billed this key's call but its answer never reached the caller (a 503 or a crash): serve it now.
      res.setHeader('Idempotent-Replayed', 'true');
      answer(d, req, res, valueOf(req, parseOutcome(claim.outcomeJson)));
      return;
    }
    const finish = claim.kind === 'new' ? claim.finish : async () => undefined;
    try {
      const stored = await runAndBill(d, req, res, image, imageFormat, claim.kind === 'new' ? claim.entryKey : undefined);
      await finish(stored);
    } catch (err) {
      const keep = err instanceof AppError && err.httpStatus >= 400 && err.httpStatus < 500 && err.httpStatus !== 429;
      if (keep && claim.kind === 'new') await fillQuota(d, req, res).catch(() => undefined);
      await finish(keep ? errorForReplay(d.clock, err, quotaOf(res)) : null).catch(() => undefined);
      throw err;
    }
  };
}

/** The caller's credits for a stored 4xx, so its replay carries the numbers the first answer had. */
async function fillQuota(d: CheckDeps, req: Request, res: Response): Promise<void> {
  if (quotaOf(res).remaining !== null) return;
  const account = req.auth!.account;
  const usage = await d.ledger.snapshot(account._id, d.accounts.planView(account));
  setQuota(res, quotaFromSnapshot(account._id, usage));
}

function errorForReplay(clock: Clock, err: AppError, q: QuotaView): StoredResponse {
  return { status: err.httpStatus, body: { metadata: metadata(clock, 'error', q), error: { code: err.code, message: err.message } } };
}

async function runAndBill(
  d: CheckDeps,
  req: Request,
  res: Response,
  image: Buffer,
  imageFormat: 'jpeg' | 'png',
  idempotencyEntry: string | undefined,
): Promise<StoredResponse> {
  const auth = req.auth!;
  const customerId = auth.account._id;
  const plan: PlanView = d.accounts.planView(auth.account);
  const { reservation, admission } = await reserveAndAdmit(d, req, res, plan);
  const input: LivenessInput = {
    imageFormat,
    billing: {
      customerId,
      keyId: auth.keyId,
      month: reservation.month,
      plan: plan.plan,
      monthlyLimit: plan.monthlyLimit,
      hardCap: plan.hardCap,
      reservedAt: reservation.at,
      ...(idempotencyEntry ? { idempotencyEntry } : {}),
    },
  };
  let value: LivenessJobValue;
  try {
    value = await runJob(d, req, input, image, admission);
  } catch (err) {
    // Released: the worker's settle step will find no reservation and bill nothing. Not released: the worker
    // committed, and the same Lua script stored its answer, so the late look finds it.
    const released = await d.ledger.release(customerId, reservation.month, req.requestId).catch(() => null);
    if (!(err instanceof JobTimeoutError) || released !== false) throw err;
    value = await committedResult(d, req, err);
  }
  return answer(d, req, res, value);
}

/**
 * The three checks before any work — a credit (quota), a fair-use token (throttle), room in the time budget
 * (admission) — go out at once, one round trip, and are judged in the documented order: quota, then throttle, then
 * capacity. A refused call keeps nothing: the credit goes back (late if the deadline passed, but it goes back),
 * and a caller refused for its quota gets its fair-use token back too, as if the throttle had not been asked.
 */
async function reserveAndAdmit(
  d: CheckDeps,
  req: Request,
  res: Response,
  plan: PlanView,
): Promise<{ reservation: ReserveResult & { ok: true }; admission: Admission }> {
  const { account } = req.auth!;
  const throttleKey = fairUseKey(req);
  const [reserved, throttled, admitted] = await Promise.allSettled([
    req.deadline.race('reservation', d.ledger.reserve(account._id, plan, req.requestId)),
    req.deadline.race('throttle', d.throttle.take(throttleKey)),
    d.jobs.assertCapacity(req.deadline, { tenant: account._id, jobId: req.requestId }),
  ]);
  if (reserved.status === 'rejected' || !reserved.value.ok) {
    if (admitted.status === 'fulfilled') d.jobs.withdraw(admitted.value);
    if (throttled.status === 'fulfilled') await d.throttle.refund(throttleKey).catch(() => undefined);
    if (reserved.status === 'rejected') throw reserved.reason;
    const at = reserved.value.at;
    d.metrics.quotaOutcomes.inc({ outcome: 'capped' });
    // Credits still in flight count as spent: a capped caller has none left to use.
    setQuota(res, { customerId: account._id, remaining: 0, overLimit: 0, monthlyLimit: plan.monthlyLimit });
    const retryAfter = Math.ceil((nextMonthStart(new Date(at)).getTime() - at) / 1000);
    throw new TooManyRequestsError('quota_exceeded', `The monthly limit of ${plan.monthlyLimit} calls is reached and the hard cap is on`, retryAfter);
  }
  const reservation = reserved.value;
  if (throttled.status === 'rejected' || admitted.status === 'rejected') {
    if (admitted.status === 'fulfilled') d.jobs.withdraw(admitted.value);
    await d.ledger.release(account._id, reservation.month, req.requestId).catch(() => false);
    throw throttled.status === 'rejected' ? throttled.reason : (admitted as PromiseRejectedResult).reason;
  }
  return { reservation, admission: admitted.value };
}

/** Writes the 200 answer of a call and returns it for the idempotency entry. */
function answer(d: CheckDeps, req: Request, res: Response, value: LivenessJobValue): StoredResponse {
  const customerId = req.auth!.account._id;
  d.metrics.quotaOutcomes.inc({ outcome: value.usage?.overage ? 'overage' : 'served' });
  if (value.usage) {
    setQuota(res, { customerId, remaining: value.usage.remaining, overLimit: value.usage.overLimit, monthlyLimit: value.usage.monthlyLimit });
  }
  const { stages: _stages, ...data } = value.result;
  const body = { metadata: metadata(d.clock, 'success', quotaOf(res)), data };
  setQuotaHeaders(res, quotaOf(res), d.clock);
  res.status(200).json(body);
  return { status: 200, body };
}

/** The key's fair-use bucket (README Decisions: a call's token plus its worker time). */
const fairUseKey = (req: Request) => `key:${req.auth!.keyId}`;

async function runJob(d: CheckDeps, req: Request, input: LivenessInput, image: Buffer, admission: Admission): Promise<LivenessJobValue> {
  const outcome = await d.jobs.run<LivenessInput, LivenessJobValue>({ requestId: req.requestId, input, payload: image, deadline: req.deadline, admission });
  // Answered or refused (no face, undecodable), the job's worker time beyond one call's is a debt on the key's bucket.
  d.throttle.chargeWork(fairUseKey(req), outcome.workerMs, req.log);
  return valueOf(req, outcome);
}

function valueOf(req: Request, outcome: JobOutcome<LivenessJobValue>): LivenessJobValue {
  if (!outcome.ok) {
    if (outcome.error.httpStatus === 500) req.log.error({ code: outcome.error.code }, 'job ended with an internal error');
    throw deserializeJobError(outcome.error);
  }
  return outcome.value;
}

const livenessOutcome = JOB_OUTCOME_SCHEMAS.liveness as z.ZodType<JobOutcome<LivenessJobValue>>;

/** Parses an outcome kept in an idempotency entry; a malformed one is an internal error, never a cast. */
function parseOutcome(json: string): JobOutcome<LivenessJobValue> {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    raw = null;
  }
  const parsed = livenessOutcome.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new InternalError('the stored answer of this Idempotency-Key is unreadable');
}

/** After a failed release: the committed call's answer, stored by the same script that committed it. */
async function committedResult(d: CheckDeps, req: Request, timeout: JobTimeoutError): Promise<LivenessJobValue> {
  const late = await d.jobs.lastLook<LivenessJobValue>(req.requestId);
  if (!late) {
    req.log.error('release found no reservation and no stored answer (Redis lost its data?)');
    throw timeout;
  }
  return valueOf(req, late);
}
