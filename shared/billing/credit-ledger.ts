// Owns monthly credits: reserve before enqueuing, settle on success (by the worker: commit, stored answer, usage
// event and publish in one Lua script), release on failure or when the API gives up; and the rebuild of a missing
// month hash (Redis restarted, new month, a cold customer) from the usage counter document plus the customer's
// undrained outbox calls, one read each however long the history. Why the counters live in Redis and not in a
// MongoDB document: docs/billing.md, "Credits". Every key a script touches carries the hash tag of the customer's
// partition (shared/redis-partitions.ts), so the settle script's keys share a Redis Cluster slot.
import type { Redis } from 'ioredis';
import type { Models } from '../db/models';
import type { PlanView } from './plans';
import { dayOf, monthOf, nextMonthStart, type Clock } from './month';
import { encodeOutboxEvent, orphansKey, outboxKey, undrainedCalls, undrainedKey, type UndrainedCall } from './usage-outbox';
import { appliedIds, UsageCounters } from './usage-counters';
import { SingleFlight } from '../single-flight';
import { luaScript } from '../redis-script';
import { partitionPrefix } from '../redis-partitions';

export interface UsageSnapshot {
  month: string;
  used: number;
  overage: number;
  monthlyLimit: number;
  remaining: number;
  /** Committed calls per UTC day of the month ('01'..'31'). */
  daily: Record<string, number>;
}

/** `at`: the reservation's instant (epoch ms): it alone decides the call's month, day and hour. */
export type ReserveResult = { ok: true; month: string; at: number } | { ok: false; reason: 'quota_exceeded'; month: string; at: number };

export interface SettleRequest {
  customerId: string;
  month: string;
  requestId: string;
  limit: number;
  hardCap: boolean;
  /** The reservation's instant (epoch ms): the day counter and the event's hour and `at`. */
  reservedAt: number;
  /** The engine's result as JSON (embedded verbatim in the stored outcome). */
  resultJson: string;
  workerMs: number;
  resultKey: string;
  resultTtlMs: number;
  /** The usage event of the call, without the overage flag the commit decides. */
  event: { keyId: string; plan: string; latencyMs: number; verdict: Record<string, unknown> };
  /** Stored instead when the reservation is gone (released by the API, or committed before). */
  abandonedOutcomeJson: string;
  /** The caller's idempotency entry: still pending for this request, it takes the committed answer. */
  idempotency?: { key: string; ttlMs: number };
  /**
   * Where the stored outcome is published in the same step (none: not published): shared/queues/outcome-store.ts's
   * OutcomeReply, spelled out here so that billing does not import the queue layer that stands on it.
   */
  reply?: { channel: string; head: string };
}

export interface SettleResult {
  committed: boolean;
  /** The outcome stored under the result key (what the worker publishes). */
  stored: string;
}

/** A reservation older than this was orphaned by a crashed API process; it is released when seen. */
export const STALE_RESERVATION_MS = 120_000;
/** Reads of the counter document around the outbox read before the last one is taken as it is (drainers busy). */
const REBUILD_READS = 3;
/** Credit hashes outlive their month by this much, for late usage questions (events keep the rest). */
const RETAIN_AFTER_MONTH_MS = 40 * 24 * 3600 * 1000;

// The hash's fields, and each script's KEYS, ARGV and reply: the headers of shared/lua/credits-*.lua.
const RESERVE = luaScript('credits-reserve-1');
const SETTLE = luaScript('credits-settle-5');
const RELEASE = luaScript('credits-release-1');
const SEED = luaScript('credits-seed-2');
const ORPHANS = luaScript('credits-orphans-2');

/** The customer's credits hash of a month, in its partition. */
export function creditsKey(prefix: string, customerId: string, month: string): string {
  return `${partitionPrefix(prefix, customerId)}:credits:${customerId}:${month}`;
}

export class CreditLedger {
  /** One rebuild per customer and month however many calls find the counters missing at once (a burst's first calls). */
  private readonly seeds = new SingleFlight<void>();
  private readonly counters: UsageCounters;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    models: Models,
    private readonly clock: Clock,
  ) {
    this.counters = new UsageCounters(redis, prefix, models);
  }

  private key(customerId: string, month: string): string {
    return creditsKey(this.prefix, customerId, month);
  }

  /**
   * Rebuilds the month's counters (called when Redis does not have them) from the customer's usage counter
   * document and its undrained calls the document does not hold yet, counted once per request id.
   */
  private seed(customerId: string, month: string): Promise<void> {
    return this.seeds.run(`${customerId}:${month}`, () => this.rebuild(customerId, month));
  }

  /**
   * The document is read around the read of the undrained calls, until no drainer wrote it in between (its `rev`
   * unchanged): then a call still undrained is either in the document's applied ids (counted, not yet
   * acknowledged) or not counted, and a call gone from the index is counted (the drainer removes it with the
   * outbox entry's acknowledgement, after the count). A missing document counts nothing (docs/billing.md,
   * "Usage counters on an upgraded deployment": the backfill gives every month with events a document).
   */
  private async rebuild(customerId: string, month: string): Promise<void> {
    let doc = await this.counters.month('liveness', customerId, month);
    let undrained: UndrainedCall[] = [];
    for (let attempt = 0; attempt < REBUILD_READS; attempt++) {
      undrained = await undrainedCalls(this.redis, this.prefix, customerId, month);
      const again = await this.counters.month('liveness', customerId, month);
      const unchanged = (again?.rev ?? 0) === (doc?.rev ?? 0);
      doc = again;
      if (unchanged) break;
    }
    const held = appliedIds(doc);
    const daily = new Map<string, number>(Object.entries((doc?.daily ?? {}) as Record<string, number>));
    let used = doc?.used ?? 0;
    let overage = doc?.overage ?? 0;
    for (const call of undrained) {
      if (held.has(call.requestId)) continue;
      used++;
      if (call.overage) overage++;
      daily.set(call.day, (daily.get(call.day) ?? 0) + 1);
    }
    await this.seedCounts(customerId, month, used, overage, daily, doc?.rev ?? 0);
  }

  /** Creates the month's hash from these billed calls; a no-op when it exists (another process got there first). */
  async seedFrom(customerId: string, month: string, calls: Array<{ at: Date; overage: boolean }>): Promise<void> {
    const daily = new Map<string, number>();
    let overage = 0;
    for (const e of calls) {
      const day = dayOf(e.at);
      daily.set(day, (daily.get(day) ?? 0) + 1);
      if (e.overage) overage++;
    }
    await this.seedCounts(customerId, month, calls.length, overage, daily, 0);
  }

  /** `rev`: the revision of the usage counter document the counts come from (0: none). */
  private async seedCounts(customerId: string, month: string, used: number, overage: number, daily: Map<string, number>, rev: number): Promise<void> {
    const dailyArgs = [...daily].filter(([, n]) => n > 0).flatMap(([d, n]) => [d, String(n)]);
    await SEED.run(
      this.redis,
      [this.key(customerId, month), orphansKey(partitionPrefix(this.prefix, customerId), customerId, month)],
      [String(used), String(overage), String(this.hashTtlMs(month)), String(rev), ...dailyArgs],
    );
  }

  /**
   * Calls a drainer counted in the usage counter document (now at revision `rev`) after Redis lost their outbox
   * entries, and with them the undrained index the month's hash is rebuilt from: the hash gets each call once, now if
   * it was built from an older revision, or when it is next built (credits-orphans-2.lua). Returns how many it added now.
   */
  async addOrphanedCalls(customerId: string, month: string, rev: number, calls: UndrainedCall[]): Promise<number> {
    if (calls.length === 0) return 0;
    const args = calls.flatMap((c) => [c.requestId, `${c.overage ? 1 : 0}:${c.day}`]);
    return (await ORPHANS.run(
      this.redis,
      [this.key(customerId, month), orphansKey(partitionPrefix(this.prefix, customerId), customerId, month)],
      [String(rev), String(this.hashTtlMs(month)), ...args],
    )) as number;
  }

  /** How long a month's hash (and what rebuilds it) is kept: to its month's end and RETAIN_AFTER_MONTH_MS more, a day at least. */
  private hashTtlMs(month: string): number {
    const [y, m] = month.split('-').map(Number) as [number, number];
    // Relative TTL: Redis keeps real time, our clock may be a test's.
    return Math.max(24 * 3600 * 1000, nextMonthStart(new Date(Date.UTC(y, m - 1, 1))).getTime() + RETAIN_AFTER_MONTH_MS - this.clock().getTime());
  }

  /** Takes one credit for `requestId`, atomically refusing past the limit when the hard cap is on. */
  async reserve(customerId: string, plan: PlanView, requestId: string): Promise<ReserveResult> {
    // One reading of the clock per call: month here, day and hour at the commit, all from this instant.
    const at = this.clock().getTime();
    const month = monthOf(new Date(at));
    const run = () =>
      RESERVE.run(
        this.redis,
        [this.key(customerId, month)],
        [String(plan.monthlyLimit), plan.hardCap ? '1' : '0', requestId, String(at), String(STALE_RESERVATION_MS)],
      );
    let ok = await run();
    if (ok === -1) {
      await this.seed(customerId, month);
      ok = await run();
    }
    return ok === 1 ? { ok: true, month, at } : { ok: false, reason: 'quota_exceeded', month, at };
  }

  /**
   * The worker's step after the engine: commit the reservation, store the answer with the committed counts and
   * append the usage event, atomically (one Lua script); or, with the reservation gone, bill nothing.
   */
  async settle(r: SettleRequest): Promise<SettleResult> {
    const reservedAt = new Date(r.reservedAt);
    const event = encodeOutboxEvent({
      service: 'liveness',
      customerId: r.customerId,
      keyId: r.event.keyId,
      plan: r.event.plan,
      month: r.month,
      billable: true,
      latencyMs: r.event.latencyMs,
      verdict: r.event.verdict,
      at: reservedAt,
    });
    const credits = this.key(r.customerId, r.month);
    const home = partitionPrefix(this.prefix, r.customerId);
    // Without an idempotency entry the credits key stands in for it: the script declares five keys and skips it.
    const keys = [credits, r.resultKey, outboxKey(home), r.idempotency?.key ?? credits, undrainedKey(home, r.customerId, r.month)];
    const [committed, stored] = (await SETTLE.run(this.redis, keys, [
      r.requestId,
      String(r.limit),
      r.hardCap ? '1' : '0',
      dayOf(reservedAt),
      r.resultJson,
      String(r.workerMs),
      String(r.resultTtlMs),
      event,
      r.abandonedOutcomeJson,
      String(r.idempotency?.ttlMs ?? 0),
      r.reply?.channel ?? '',
      r.reply?.head ?? '',
    ])) as [number, string];
    return { committed: committed === 1, stored };
  }

  /** Returns a reservation's credit; a no-op (false) when the worker already committed it. */
  async release(customerId: string, month: string, requestId: string): Promise<boolean> {
    return (await RELEASE.run(this.redis, [this.key(customerId, month)], [requestId])) === 1;
  }

  async snapshot(customerId: string, plan: PlanView): Promise<UsageSnapshot> {
    const month = monthOf(this.clock());
    const key = this.key(customerId, month);
    let h = await this.redis.hgetall(key);
    if (Object.keys(h).length === 0) {
      await this.seed(customerId, month);
      h = await this.redis.hgetall(key);
    }
    const used = Number(h.used ?? 0);
    const daily: Record<string, number> = {};
    for (const [field, value] of Object.entries(h)) if (field.startsWith('d:')) daily[field.slice(2)] = Number(value);
    return {
      month,
      used,
      overage: Number(h.overage ?? 0),
      monthlyLimit: plan.monthlyLimit,
      remaining: Math.max(0, plan.monthlyLimit - used),
      daily,
    };
  }
}
