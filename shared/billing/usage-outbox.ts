// Owns the usage-event outbox: a Redis stream per partition of the deployment's prefix (shared/redis-partitions.ts:
// an account's events go to its partition's stream, a job's to its result's), that a worker appends to in the same
// Lua script that stores a job's outcome (and, for a billed call, commits its credit). Drainers
// (workers/runtime/usage-drainer.ts) copy the entries to MongoDB in batches and acknowledge only what was
// written, so a crash anywhere loses no event and the request id as `_id` keeps every event single.
// The appends themselves happen inside the scripts that store an outcome (shared/queues/outcome-store.ts and
// credit-ledger.ts's settle); this module owns the stream's name, its
// entries' encoding (and the MongoDB document each becomes) and how they are read back.
import type { Redis } from 'ioredis';
import type { UsageEventInput } from './usage-events';
import { hourOf, monthOf } from './month';
import { allPartitionPrefixes, partitionPrefix } from '../redis-partitions';

/** The consumer group every drainer of a deployment joins. */
export const OUTBOX_GROUP = 'usage-drainers';

export function outboxKey(prefix: string): string {
  return `${prefix}:outbox:usage`;
}

/**
 * The stream's epoch: a random id set (if missing) whenever a drainer creates the stream's group. A Redis that comes
 * back empty loses it with the stream, and the next group it creates gets a new one; a Redis restored from its
 * persistence keeps both. A drainer tags each entry it reads with the epoch it saw, so an entry missing from its
 * pending ones later is told apart: taken over by another drainer (same epoch), or lost with Redis's data (the
 * epoch changed or is gone), when the drainer, which still holds the event, counts it itself.
 */
export function outboxEpochKey(prefix: string): string {
  return `${prefix}:outbox:epoch`;
}

/**
 * A customer's billed calls of a month that a drainer counted after Redis lost their outbox entries: request id ->
 * 'rev:overage:DD', `rev` being the usage counter document's revision once it held the call. A credit hash built
 * from an older revision of the document lacks those calls, and adds them (credits-seed-2.lua, credits-orphans-2.lua).
 */
export function orphansKey(prefix: string, customerId: string, month: string): string {
  return `${prefix}:outbox:orphans:${customerId}:${month}`;
}

/** Every outbox stream of a deployment: each partition's, then the one of the layout before partitions. */
export function outboxStreams(prefix: string): string[] {
  return [...allPartitionPrefixes(prefix).map(outboxKey), outboxKey(prefix)];
}

/** Entries in all the deployment's outbox streams (written by a drainer or not yet). */
export async function outboxLength(redis: Redis, prefix: string): Promise<number> {
  const lengths = await Promise.all(outboxStreams(prefix).map((k) => redis.xlen(k)));
  return lengths.reduce((a, b) => a + b, 0);
}

/**
 * A customer's billed liveness calls of a month that are in the outbox and not yet written by a drainer: request
 * id -> 'overage:DD' ('0'/'1', the reservation's day of the month). The settle script adds a call with its outbox
 * entry; the drainer removes it with the entry's acknowledgement, once MongoDB holds the event and its count. So a
 * cold customer's counters are rebuilt from its own undrained calls, never from a read of the whole outbox
 * (which holds everyone's, and grows while MongoDB is down).
 */
export function undrainedKey(prefix: string, customerId: string, month: string): string {
  return `${prefix}:outbox:undrained:${customerId}:${month}`;
}

export interface UndrainedCall {
  requestId: string;
  overage: boolean;
  /** The day of the month ('01'..'31'). */
  day: string;
}

/**
 * The customer's undrained calls of the month: its partition's index, and the deployment prefix's own (where they
 * were before the partitioned layout: an upgrade's calls still in the old outbox count until drained there).
 */
export async function undrainedCalls(redis: Redis, prefix: string, customerId: string, month: string): Promise<UndrainedCall[]> {
  const [h, old] = await Promise.all([
    redis.hgetall(undrainedKey(partitionPrefix(prefix, customerId), customerId, month)),
    redis.hgetall(undrainedKey(prefix, customerId, month)),
  ]);
  return Object.entries({ ...old, ...h }).map(([requestId, v]) => ({ requestId, overage: v.startsWith('1:'), day: v.slice(2) }));
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
