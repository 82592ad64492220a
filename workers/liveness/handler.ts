// Owns the liveness job: run the engine, then commit the reserved credit and record the usage event.
import { ServiceUnavailableError } from '../../shared/errors';
import type { Models } from '../../shared/db/models';
import { CreditLedger } from '../../shared/billing/credit-ledger';
import { recordUsageEvent } from '../../shared/billing/usage-events';
import type { Clock } from '../../shared/billing/month';
import type { LivenessInput, LivenessJobValue, LivenessResult } from '../../shared/queues/contracts';
import type { Logger } from '../../shared/logger';
import type { JobHandler } from '../runtime/job-runner';

export interface LivenessAnalyzer {
  analyze(image: Buffer, format: 'jpeg' | 'png'): Promise<LivenessResult>;
}

const EVENT_RETRIES = 5;

export function createLivenessHandler(engine: LivenessAnalyzer, ledger: CreditLedger, models: Models, clock: Clock): JobHandler<LivenessInput, LivenessJobValue> {
  return async ({ envelope, payload, log }) => {
    const { input, requestId } = envelope;
    const result = await engine.analyze(payload, input.imageFormat);
    const billing = input.billing;
    if (!billing) return { result, usage: null };
    const plan = { plan: billing.plan as never, monthlyLimit: billing.monthlyLimit, hardCap: billing.hardCap };
    // Bill only what can be recorded: with the database down, fail now (503) rather than bill without an event.
    if (models.UsageEvent.db.readyState !== 1) throw new ServiceUnavailableError('database unavailable', 5);
    const commit = await ledger.commit(billing.customerId, billing.month, requestId, plan);
    if (!commit.committed) {
      // The API released the credit (it gave up waiting) or this is a replay of a committed job.
      throw new ServiceUnavailableError('the request was abandoned before its result was ready', 2, 'abandoned');
    }
    // After the commit nothing may fail the job: the customer is billed and must get the answer.
    await writeEvent(models, log, {
      requestId,
      service: 'liveness',
      customerId: billing.customerId,
      keyId: billing.keyId,
      plan: billing.plan,
      month: billing.month,
      billable: true,
      overage: commit.overage,
      latencyMs: result.latency_ms,
      verdict: { isFakeFace: result.isFakeFace, isFakeLikelihood: result.isFakeLikelihood, isValidFace: result.isValidFace },
      at: clock(),
    });
    return {
      result,
      usage: {
        remaining: Math.max(0, plan.monthlyLimit - commit.used),
        overLimit: commit.overageCalls,
        monthlyLimit: plan.monthlyLimit,
        used: commit.used,
        overage: commit.overage,
      },
    };
  };
}

/** One attempt inline; if the database blips, keep retrying in the background (the event id makes it idempotent). */
async function writeEvent(models: Models, log: Logger, e: Parameters<typeof recordUsageEvent>[1]): Promise<void> {
  try {
    await recordUsageEvent(models, e);
  } catch {
    void (async () => {
      for (let attempt = 1; attempt <= EVENT_RETRIES; attempt++) {
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
        try {
          await recordUsageEvent(models, e);
          return;
        } catch (err) {
          if (attempt === EVENT_RETRIES) log.error({ err, requestId: e.requestId }, 'usage event not written: reconcile from the tally');
        }
      }
    })();
  }
}
