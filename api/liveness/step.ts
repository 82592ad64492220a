// Owns one liveness check as a domain step, free of HTTP: reserve a credit, admit by time and take a fair-use token
// (before the body is read), then run the job, and settle (the worker commits) or release. The caller's credits come
// back with the value, or with the error when the refusal knows them (QuotaExceededError); any other error leaves
// them to the one best-effort snapshot of the error path (app.ts). The route (route.ts) maps this to HTTP.
//
// Order of refusals (docs/liveness-api.md, "Order of refusals"): quota (429 quota_exceeded) before the fair-use throttle
// (429 rate_limited) before capacity (503): a capped caller learns the real reason and when it ends, and a 503
// only ever means "the service cannot serve this in time". Every step spends only what is left of the deadline.
import { z } from 'zod';
import { InternalError, TooManyRequestsError } from '../../shared/errors';
import type { AccountService } from '../../shared/accounts/account-service';
import type { PlanView } from '../../shared/billing/plans';
import type { AuthenticatedKey } from '../../shared/accounts/api-keys';
import type { CreditLedger } from '../../shared/billing/credit-ledger';
import { nextMonthStart } from '../../shared/billing/month';
import type { Deadline } from '../../shared/deadline';
import type { Logger } from '../../shared/logger';
import type { Metrics } from '../../shared/metrics';
import { answerOf, JobTimeoutError, type JobClient, type JobPayload } from '../../shared/queues/job-client';
import type { Admission } from '../../shared/queues/admission';
import { JOB_OUTCOME_SCHEMAS, type JobOutcome, type LivenessInput, type LivenessJobValue } from '../../shared/queues/contracts';
import type { Throttle } from '../http/throttle';
import type { QuotaView } from './envelope';

/** Who calls and by when: the authenticated key, the server's request id and what is left of the budget. */
export interface Caller {
  auth: AuthenticatedKey;
  requestId: string;
  deadline: Deadline;
  log: Logger;
  /** Told when the image is in the queue: the upload's bytes stop counting against the front-end's memory bound. */
  imageQueued?: () => void;
}

/** A credit held for one call (and the fair-use token it spent): settle it by run(), or give it back by release(). */
export interface Reservation {
  plan: PlanView;
  month: string;
  at: number;
  /** What admission decided, before the body was read (the job counts as ahead of later ones until enqueued). */
  admission: Admission | null;
}

/** The public result of a billed call and the caller's credits after it. */
export interface Checked {
  data: Omit<LivenessJobValue['result'], 'stages'>;
  quota: QuotaView;
}

/** 429 quota_exceeded: the hard cap is on and the month's credits are spent (those in flight count as spent). */
export class QuotaExceededError extends TooManyRequestsError {
  constructor(
    readonly quota: QuotaView,
    monthlyLimit: number,
    retryAfterSeconds: number,
  ) {
    super('quota_exceeded', `The monthly limit of ${monthlyLimit} calls is reached and the hard cap is on`, retryAfterSeconds);
  }
}

export interface LivenessCheckDeps {
  accounts: AccountService;
  ledger: CreditLedger;
  jobs: JobClient;
  /** The fair-use limit per account, judged after the quota. */
  throttle: Throttle;
  metrics: Metrics;
}

/**
 * The account's fair-use bucket, shared by its keys (docs/reliability.md "Upload room and fair use": a call's
 * declared bytes before the body is read, the front-end's parse time and the worker's time after).
 */
export const fairUseSubject = (customerId: string) => `account:${customerId}`;

const livenessOutcome = JOB_OUTCOME_SCHEMAS.liveness as z.ZodType<JobOutcome<LivenessJobValue>>;

export class LivenessCheck {
  constructor(private readonly d: LivenessCheckDeps) {}

  /**
   * Before the body is read: a credit (quota) and room in the time budget (admission) are asked at once, then the
   * fair-use token (throttle) once the credit is held; judged in the documented order, quota, throttle, capacity.
   * The throttle is asked only once the credit is held, so a call refused for its quota never touches it (a capped
   * key keeps its whole burst, and a burst's capped calls cannot take tokens its served calls need). A refused call
   * keeps nothing: its credit goes back and its admission is withdrawn. `tokens`: what the call takes from the
   * account's fair use (its declared bytes' worth, at least one).
   */
  async reserve(c: Caller, tokens = 1): Promise<Reservation> {
    const { account } = c.auth;
    const plan = this.d.accounts.planView(account);
    const [reserved, admitted] = await Promise.allSettled([
      c.deadline.race('reservation', this.d.ledger.reserve(account._id, plan, c.requestId)),
      this.d.jobs.assertCapacity(c.deadline, { tenant: account._id, jobId: c.requestId }),
    ]);
    const admission = admitted.status === 'fulfilled' ? admitted.value : null;
    if (reserved.status === 'rejected' || !reserved.value.ok) {
      if (admission) this.d.jobs.withdraw(admission);
      if (reserved.status === 'rejected') throw reserved.reason;
      const at = reserved.value.at;
      this.d.metrics.quotaOutcomes.inc({ outcome: 'capped' });
      const quota: QuotaView = { customerId: account._id, remaining: 0, overLimit: 0, monthlyLimit: plan.monthlyLimit };
      throw new QuotaExceededError(quota, plan.monthlyLimit, Math.ceil((nextMonthStart(new Date(at)).getTime() - at) / 1000));
    }
    const reservation: Reservation = { plan, month: reserved.value.month, at: reserved.value.at, admission };
    try {
      if (tokens > 0) await c.deadline.race('throttle', this.d.throttle.take(fairUseSubject(account._id), tokens));
      if (admitted.status === 'rejected') throw admitted.reason;
    } catch (err) {
      await this.release(c, reservation);
      throw err;
    }
    return reservation;
  }

  /** Gives a reserved credit back and withdraws its admission (the call will not run); late if the deadline passed, but it goes back. */
  async release(c: Caller, r: Reservation): Promise<void> {
    if (r.admission) this.d.jobs.withdraw(r.admission);
    await this.d.ledger.release(c.auth.account._id, r.month, c.requestId).catch(() => false);
  }

  /**
   * Runs the admitted call and answers with the billed result. On any failure the credit is released; a release that finds nothing means the worker
   * committed in the last instant, and its stored answer is the result.
   */
  async run(c: Caller, r: Reservation, image: JobPayload, imageFormat: 'jpeg' | 'png', idempotencyEntry?: string): Promise<Checked> {
    const { account, keyId } = c.auth;
    const input: LivenessInput = {
      imageFormat,
      billing: {
        customerId: account._id,
        keyId,
        month: r.month,
        plan: r.plan.plan,
        monthlyLimit: r.plan.monthlyLimit,
        hardCap: r.plan.hardCap,
        reservedAt: r.at,
        ...(idempotencyEntry ? { idempotencyEntry } : {}),
      },
    };
    let value: LivenessJobValue;
    try {
      const answer = await this.d.jobs.call<LivenessInput, LivenessJobValue>({
        requestId: c.requestId,
        input,
        payload: image,
        deadline: c.deadline,
        tenant: account._id,
        admission: r.admission,
        log: c.log,
        ...(c.imageQueued ? { onQueued: c.imageQueued } : {}),
        // Answered or refused (no face, undecodable), the job's worker time beyond one call's is a debt on the account's bucket.
        onOutcome: (outcome) => this.d.throttle.chargeWork(fairUseSubject(account._id), outcome.workerMs, c.log),
      });
      value = answer.value;
    } catch (err) {
      // Released: the worker's settle step will find no reservation and bill nothing. Not released: the worker
      // committed, and the same Lua script stored its answer, so the late look finds it.
      const released = await this.d.ledger.release(account._id, r.month, c.requestId).catch(() => null);
      if (!(err instanceof JobTimeoutError) || released !== false) throw err;
      value = await this.committedResult(c, err);
    }
    return this.checked(c, value);
  }

  /** The answer of a call the worker billed and stored under an Idempotency-Key (its outcome JSON). */
  replay(c: Caller, outcomeJson: string): Checked {
    return this.checked(c, answerOf(parseOutcome(outcomeJson), c.log).value);
  }

  private checked(c: Caller, value: LivenessJobValue): Checked {
    const customerId = c.auth.account._id;
    this.d.metrics.quotaOutcomes.inc({ outcome: value.usage?.overage ? 'overage' : 'served' });
    const quota: QuotaView = value.usage
      ? { customerId, remaining: value.usage.remaining, overLimit: value.usage.overLimit, monthlyLimit: value.usage.monthlyLimit }
      : { customerId, remaining: null, overLimit: null };
    const { stages: _stages, ...data } = value.result;
    return { data, quota };
  }

  /** After a failed release: the committed call's answer, stored by the same script that committed it. */
  private async committedResult(c: Caller, timeout: JobTimeoutError): Promise<LivenessJobValue> {
    const late = await this.d.jobs.lastLook<LivenessJobValue>(c.requestId, c.auth.account._id);
    if (!late) {
      c.log.error('release found no reservation and no stored answer (Redis lost its data?)');
      throw timeout;
    }
    return answerOf(late, c.log).value;
  }
}

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
