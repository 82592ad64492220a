// Test helpers for the credit ledger: settle a reserved call the way the liveness worker does (one Lua script:
// commit, stored answer, usage event in the outbox; the answer is the OpenAPI document's example result), and wait
// until the outbox drainers have written every event (outboxDrained lives with the process harness, which the
// benchmarks share).
import type { Redis } from 'ioredis';
import { outboxStreams, parseOutboxEntries, type OutboxEntry } from '../../shared/billing/usage-outbox';
import type { CreditLedger, SettleResult } from '../../shared/billing/credit-ledger';
import type { PlanView } from '../../shared/billing/plans';
import { queueKeys } from '../../shared/queues/keys';
import { LIVENESS_RESULT_EXAMPLE } from '../../api/openapi/liveness-document';

export function settleReserved(
  ledger: CreditLedger,
  prefix: string,
  c: { customerId: string; month: string; at: number; requestId: string; plan: PlanView; idempotency?: { key: string; ttlMs: number } },
): Promise<SettleResult> {
  return ledger.settle({
    customerId: c.customerId,
    month: c.month,
    requestId: c.requestId,
    limit: c.plan.monthlyLimit,
    hardCap: c.plan.hardCap,
    reservedAt: c.at,
    resultJson: JSON.stringify(LIVENESS_RESULT_EXAMPLE),
    workerMs: 7,
    resultKey: queueKeys(prefix).result(c.requestId, c.customerId),
    resultTtlMs: 60_000,
    event: { keyId: 'key-test', plan: c.plan.plan, latencyMs: 5, verdict: { isFakeFace: false } },
    abandonedOutcomeJson: JSON.stringify({ ok: false, error: { code: 'abandoned', message: 'abandoned', httpStatus: 503 }, workerMs: 7 }),
    idempotency: c.idempotency,
  });
}

export { outboxDrained } from '../../dev/harness/harness';

/** Polls a count until it equals `expected` (usage events arrive through the outbox after the answer); returns the last count. */
export async function settledCount(count: () => Promise<number>, expected: number, timeoutMs = 20_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  let n = await count();
  while (n !== expected && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    n = await count();
  }
  return n;
}

/** Every entry still in the outbox, all its streams (written by a drainer or not). */
export async function pendingOutboxEntries(redis: Redis, prefix: string): Promise<OutboxEntry[]> {
  const raws = await Promise.all(outboxStreams(prefix).map((k) => redis.xrange(k, '-', '+') as Promise<Array<[string, string[]]>>));
  return raws.flatMap((raw) => parseOutboxEntries(raw));
}
