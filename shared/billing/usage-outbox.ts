// Owns the usage-event outbox: a Redis stream under the deployment's `{prefix}` hash tag that a worker appends
// to in the same Lua script that stores a job's outcome (and, for a billed call, commits its credit). Drainers
// (workers/runtime/usage-drainer.ts) copy the entries to MongoDB in batches and acknowledge only what was
// written, so a crash anywhere loses no event and the request id as `_id` keeps every event single.
// Also owns storing every unbilled job's outcome (storeOutcome: first outcome wins, its event appended and its
// reply published in the same script) and the publish step the billed settle in credit-ledger.ts reuses
// (PUBLISH_STORED): the store and the outbox append are one Lua script, so they live with the outbox.
import type { Redis } from 'ioredis';
import type { UsageEventInput } from './usage-events';
import { hourOf, monthOf } from './month';
import { luaScript } from '../redis-script';

/** The consumer group every drainer of a deployment joins. */
export const OUTBOX_GROUP = 'usage-drainers';

export function outboxKey(prefix: string): string {
  return `${prefix}:outbox:usage`;
}

/** One outbox entry's fields: the request id, the event (JSON, without overage), and overage ('0'/'1', decided by the commit). */
export interface OutboxEntry {
  streamId: string;
  requestId: string;
  event: string;
  overage: string;
}

/** The event as the outbox carries it: everything but the overage flag, with `at` in epoch ms. */
export function encodeOutboxEvent(e: Omit<UsageEventInput, 'requestId' | 'overage'>): string {
  return JSON.stringify({
    service: e.service,
    customerId: e.customerId ?? null,
    keyId: e.keyId ?? null,
    tokenId: e.tokenId ?? null,
    plan: e.plan ?? null,
    month: e.month ?? monthOf(e.at),
    hour: hourOf(e.at),
    billable: e.billable,
    latencyMs: e.latencyMs,
    verdict: e.verdict ?? null,
    at: e.at.getTime(),
  });
}

/** The MongoDB document of an outbox entry (`_id` = request id: writing it twice is a duplicate-key no-op). */
export function usageDocOf(entry: OutboxEntry): Record<string, unknown> & { _id: string } {
  const e = JSON.parse(entry.event) as Record<string, unknown> & { at: number };
  return { _id: entry.requestId, ...e, overage: entry.overage === '1', at: new Date(e.at) };
}

/** Turns XREADGROUP / XAUTOCLAIM / XRANGE replies ([id, [field, value, ...]]) into entries; a deleted entry (null fields) is skipped. */
export function parseOutboxEntries(raw: Array<[string, string[] | null]>): OutboxEntry[] {
  const out: OutboxEntry[] = [];
  for (const [streamId, fields] of raw) {
    if (!fields) continue;
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    out.push({ streamId, requestId: f.id ?? '', event: f.event ?? '{}', overage: f.overage ?? '0' });
  }
  return out;
}

/** Entries not yet removed from the outbox (written or not), for counting what MongoDB may not hold yet. */
export async function pendingOutboxEntries(redis: Redis, prefix: string): Promise<OutboxEntry[]> {
  const raw = (await redis.xrange(outboxKey(prefix), '-', '+')) as Array<[string, string[]]>;
  return parseOutboxEntries(raw);
}

/**
 * Where a settle script publishes the stored outcome, in the same step (shared/lua/includes/publish-stored.lua): `head` + outcome + `}` on `channel` (the
 * waiting API process's reply channel; job-runner.ts writes the head). An empty channel publishes nothing.
 */
export interface OutcomeReply {
  channel: string;
  head: string;
}

const STORE_OUTCOME = luaScript('outcome-store-2');

/**
 * Stores an unbilled outcome, with its usage event in the outbox when given, and publishes it to `reply` when
 * given, in one step. Returns the stored JSON.
 */
export async function storeOutcome(
  redis: Redis,
  prefix: string,
  resultKey: string,
  outcomeJson: string,
  ttlMs: number,
  event?: { requestId: string; json: string },
  reply?: OutcomeReply,
): Promise<string> {
  const args = [outcomeJson, String(ttlMs), reply?.channel ?? '', reply?.head ?? '', ...(event ? [event.requestId, event.json] : [])];
  return (await STORE_OUTCOME.run(redis, [resultKey, outboxKey(prefix)], args)) as string;
}
