// Owns the liveness job: run the engine; then settle it: commit the reserved credit, store the answer with the
// committed counts and append the usage event to the outbox, all in one Lua script (CreditLedger.settle).
import fs from 'node:fs';
import path from 'node:path';
import { serializeJobError, ServiceUnavailableError } from '../../shared/errors';
import type { Logger } from '../../shared/logger';
import type { CreditLedger } from '../../shared/billing/credit-ledger';
import { storeOutcome } from '../../shared/queues/outcome-store';
import type { Redis } from 'ioredis';
import type { LivenessInput, LivenessJobValue, LivenessResult } from '../../shared/queues/contracts';
import { RESULT_TTL_MS } from '../../shared/queues/keys';
import type { JobHandler, Settle } from '../runtime/job-runner';

export interface LivenessAnalyzer {
  analyze(image: Buffer, format: 'jpeg' | 'png'): Promise<LivenessResult>;
}

/** How long a committed answer stays under the caller's Idempotency-Key (the API's replay window). */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The picture the warm-up analyses: the models' own fixture (several faces), fetched with the models. */
const WARM_UP_IMAGE = path.join('fixtures', 'human-samples.jpg');

/** The first run pays the one-off costs; the fastest of the others is the engine's warm time. */
const WARM_UP_RUNS = 3;

/**
 * Runs the engine on the fixture before the worker takes a job: a fresh engine's first runs cost 3–10× a warm
 * one's (first ONNX runs, JIT), which the first customers would wait for and which would make the API's
 * admission estimate shed a burst on fresh workers. Returns the least CPU time of a warm run: the API's
 * admission estimate until its first outcome (shared/queues/warm-up-time.ts). CPU time, like the estimate's own
 * base: a worker warms up while the rest of the service starts, and its clock time then said 82–382 ms for the
 * same work. Skipped (logged, undefined) when the fixture is absent.
 */
export async function warmUpLiveness(engine: LivenessAnalyzer, modelsDir: string, log: Logger): Promise<number | undefined> {
  const file = path.join(modelsDir, WARM_UP_IMAGE);
  if (!fs.existsSync(file)) {
    log.warn({ file }, 'liveness warm-up skipped: fixture missing; the first jobs will be slow');
    return undefined;
  }
  const image = fs.readFileSync(file);
  const started = performance.now();
  let warmCpuMs = Infinity;
  for (let i = 0; i < WARM_UP_RUNS; i++) {
    const cpu = process.cpuUsage();
    await engine.analyze(image, 'jpeg').catch(() => undefined);
    const { user, system } = process.cpuUsage(cpu);
    if (i > 0) warmCpuMs = Math.min(warmCpuMs, (user + system) / 1000);
  }
  log.info({ ms: Math.round(performance.now() - started), warmCpuMs: Math.round(warmCpuMs) }, 'liveness engine warmed up');
  return warmCpuMs;
}

export function createLivenessHandler(engine: LivenessAnalyzer): JobHandler<LivenessInput, LivenessJobValue> {
  return async ({ envelope, payload }) => ({ result: await engine.analyze(payload, envelope.input.imageFormat), usage: null });
}

/**
 * The outcome stored when the API released the credit (it gave up waiting) or this job was committed before:
 * nothing is billed. Built once: an error object per job (its stack trace) cost more than the rest of the settle.
 */
const ABANDONED = serializeJobError(new ServiceUnavailableError('the request was abandoned before its result was ready', 2, 'abandoned'));

export function createLivenessSettle(ledger: CreditLedger, redis: Redis): Settle<LivenessInput, LivenessJobValue> {
  return async (outcome, { requestId, resultKey, envelope, reply }) => {
    const billing = envelope?.input.billing;
    if (!outcome.ok || !billing) return storeOutcome(redis, resultKey, JSON.stringify(outcome), RESULT_TTL_MS, undefined, reply);
    const { result } = outcome.value;
    const abandoned = { ok: false, error: ABANDONED, workerMs: outcome.workerMs };
    const settled = await ledger.settle({
      customerId: billing.customerId,
      month: billing.month,
      requestId,
      limit: billing.monthlyLimit,
      hardCap: billing.hardCap,
      reservedAt: billing.reservedAt,
      resultJson: JSON.stringify(result),
      workerMs: outcome.workerMs,
      resultKey,
      resultTtlMs: RESULT_TTL_MS,
      event: {
        keyId: billing.keyId,
        plan: billing.plan,
        latencyMs: result.latency_ms,
        verdict: { isFakeFace: result.isFakeFace, isFakeLikelihood: result.isFakeLikelihood, isValidFace: result.isValidFace },
      },
      abandonedOutcomeJson: JSON.stringify(abandoned),
      idempotency: billing.idempotencyEntry ? { key: billing.idempotencyEntry, ttlMs: IDEMPOTENCY_TTL_MS } : undefined,
      reply,
    });
    return settled.stored;
  };
}
