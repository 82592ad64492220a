// Owns monthly credits: reserve before enqueuing, commit on success (by the worker), release on failure.
//
// Why Redis and not a MongoDB counter document: FerretDB 1.24 (our local MongoDB-wire engine) loses
// concurrent updates to one document — measured here, 100 concurrent `$inc` on one document left 16,
// on both its SQLite and PostgreSQL handlers. So the hot counters live in one Redis hash per customer
// and month, changed only by atomic Lua scripts, while MongoDB keeps the durable ledger: one insert-only
// usage event per billed call (unique request id). A missing hash (Redis restarted, new month) is
// rebuilt from those events before use. One key per customer-month keeps Redis Cluster happy.
import type { Redis } from 'ioredis';
import type { Models } from '../db/models';
import type { PlanView } from '../accounts/account-service';
import { monthOf, nextMonthStart, type Clock } from './month';

export interface UsageSnapshot {
  month: string;
  used: number;
  overage: number;
  monthlyLimit: number;
  remaining: number;
  /** Committed calls per UTC day of the month ('01'..'31'). */
  daily: Record<string, number>;
}

export type ReserveResult = { ok: true; month: string } | { ok: false; reason: 'quota_exceeded'; month: string };

export interface CommitResult {
  /** False when the reservation was already released (the API gave up) or committed before. */
  committed: boolean;
  /** Whether this call was billed as overage. */
  overage: boolean;
  /** The month's committed calls and overage calls after this commit (0 when not committed). */
  used: number;
  overageCalls: number;
}

/** A reservation older than this was orphaned by a crashed API process; it is released when seen. */
export const STALE_RESERVATION_MS = 120_000;
/** Credit hashes outlive their month by this much, for late usage questions (events keep the rest). */
const RETAIN_AFTER_MONTH_MS = 40 * 24 * 3600 * 1000;

// Hash fields: calls (committed + in flight), used, overage, d:DD (daily committed), p:<requestId> (in flight, value = ms).
// Returns -1 when the hash is missing (seed it from the events, then ask again), 0 when capped, 1 when reserved.
const RESERVE = `
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return -1 end
local limit, capped, rid, now, stale = tonumber(ARGV[1]), ARGV[2] == '1', ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local calls = tonumber(redis.call('HGET', key, 'calls') or '0')
if capped and calls >= limit then
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 'p:' and tonumber(fields[i + 1]) < now - stale then
      redis.call('HDEL', key, fields[i])
      calls = tonumber(redis.call('HINCRBY', key, 'calls', -1))
    end
  end
  if calls >= limit then return 0 end
end
redis.call('HINCRBY', key, 'calls', 1)
redis.call('HSET', key, 'p:' .. rid, now)
return 1
`;

const COMMIT = `
local key = KEYS[1]
local rid, limit, capped, day = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
if redis.call('HDEL', key, 'p:' .. rid) == 0 then return {0, 0} end
local used = redis.call('HINCRBY', key, 'used', 1)
redis.call('HINCRBY', key, 'd:' .. day, 1)
local over = 0
if (not capped) and used > limit then
  redis.call('HINCRBY', key, 'overage', 1)
  over = 1
end
return {1, over, used, tonumber(redis.call('HGET', key, 'overage') or '0')}
`;

const RELEASE = `
if redis.call('HDEL', KEYS[1], 'p:' .. ARGV[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'calls', -1)
return 1
`;

// Seeds a missing hash from the durable counts; a no-op when another process got there first.
const SEED = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'calls', ARGV[1], 'used', ARGV[1], 'overage', ARGV[2])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], 'd:' .. ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

export class CreditLedger {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly models: Models,
    private readonly clock: Clock,
  ) {}

  private key(customerId: string, month: string): string {
    return `${this.prefix}:credits:${customerId}:${month}`;
  }

  /** Rebuilds the month's counters from the usage events (called when Redis does not have them). */
  private async seed(customerId: string, month: string): Promise<void> {
    const key = this.key(customerId, month);
    const events = await this.models.UsageEvent.find(
      { service: 'liveness', customerId, month, billable: true },
      { at: 1, overage: 1 },
    ).lean();
    const daily = new Map<string, number>();
    let overage = 0;
    for (const e of events) {
      const day = e.at.toISOString().slice(8, 10);
      daily.set(day, (daily.get(day) ?? 0) + 1);
      if (e.overage) overage++;
    }
    const [y, m] = month.split('-').map(Number) as [number, number];
    // Relative TTL: Redis keeps real time, our clock may be a test's.
    const ttlMs = Math.max(24 * 3600 * 1000, nextMonthStart(new Date(Date.UTC(y, m - 1, 1))).getTime() + RETAIN_AFTER_MONTH_MS - this.clock().getTime());
    const dailyArgs = [...daily].flatMap(([d, n]) => [d, String(n)]);
    await this.redis.eval(SEED, 1, key, String(events.length), String(overage), String(ttlMs), ...dailyArgs);
  }

  /** Takes one credit for `requestId`, atomically refusing past the limit when the hard cap is on. */
  async reserve(customerId: string, plan: PlanView, requestId: string): Promise<ReserveResult> {
    const month = monthOf(this.clock());
    const run = () =>
      this.redis.eval(
        RESERVE, 1, this.key(customerId, month), String(plan.monthlyLimit), plan.hardCap ? '1' : '0', requestId,
        String(this.clock().getTime()), String(STALE_RESERVATION_MS),
      );
    let ok = await run();
    if (ok === -1) {
      await this.seed(customerId, month);
      ok = await run();
    }
    return ok === 1 ? { ok: true, month } : { ok: false, reason: 'quota_exceeded', month };
  }

  /** Turns a reservation into a billed call; decides overage from the committed count. */
  async commit(customerId: string, month: string, requestId: string, plan: PlanView): Promise<CommitResult> {
    const day = this.clock().toISOString().slice(8, 10);
    const [committed, over, used, overageCalls] = (await this.redis.eval(
      COMMIT, 1, this.key(customerId, month), requestId, String(plan.monthlyLimit), plan.hardCap ? '1' : '0', day,
    )) as [number, number, number?, number?];
    if (committed !== 1) return { committed: false, overage: false, used: 0, overageCalls: 0 };
    return { committed: true, overage: over === 1, used: used ?? 0, overageCalls: overageCalls ?? 0 };
  }

  /** Returns a reservation's credit; a no-op (false) when the worker already committed it. */
  async release(customerId: string, month: string, requestId: string): Promise<boolean> {
    return (await this.redis.eval(RELEASE, 1, this.key(customerId, month), requestId)) === 1;
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
