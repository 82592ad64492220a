// Owns storing a job's outcome where the API finds it: under the job's result key (first outcome wins: a re-run
// after a stall must not overwrite what a waiter may have read), published to the waiting API process's reply
// channel in the same Lua step (shared/lua/outcome-store-2.lua), with the call's usage event appended to the
// usage outbox (shared/billing/usage-outbox.ts) in that step when one is given. Every job that is not billed is
// settled here; a billed liveness call is settled by the credit ledger's script (shared/billing/credit-ledger.ts),
// which publishes with the same fragment (shared/lua/includes/publish-stored.lua) and takes the same reply.
import type { Redis } from 'ioredis';
import { outboxKey } from '../billing/usage-outbox';
import { luaScript } from '../redis-script';
import { prefixOfKey } from '../redis-partitions';

/**
 * Where the stored outcome is published in the same step: `head` + outcome + `}` on `channel` (the waiting API
 * process's reply channel; workers/runtime/job-runner.ts writes the head). An empty channel publishes nothing.
 */
export interface OutcomeReply {
  channel: string;
  head: string;
}

const STORE_OUTCOME = luaScript('outcome-store-2');

/**
 * Stores an unbilled outcome, with its usage event in the outbox when given, and publishes it to `reply` when
 * given, in one step. Returns the stored JSON (this outcome, or the one stored before it).
 */
export async function storeOutcome(
  redis: Redis,
  resultKey: string,
  outcomeJson: string,
  ttlMs: number,
  event?: { requestId: string; json: string },
  reply?: OutcomeReply,
): Promise<string> {
  const args = [outcomeJson, String(ttlMs), reply?.channel ?? '', reply?.head ?? '', ...(event ? [event.requestId, event.json] : [])];
  // The event goes to the outbox of the result's partition (shared/redis-partitions.ts): one slot for the script.
  return (await STORE_OUTCOME.run(redis, [resultKey, outboxKey(prefixOfKey(resultKey))], args)) as string;
}
