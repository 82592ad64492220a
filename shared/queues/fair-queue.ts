// Owns fair queueing across tenants: each tenant's waiting jobs in Redis, the rank a new job takes among its
// tenant's, and the admission decision made from the jobs that would be ahead of it in that order.
//
// Why fair queueing (and not a per-tenant concurrency cap): the workers are few (one emotion worker, a couple of
// liveness workers), so a cap of "one worker per tenant" would either leave workers idle while a single tenant
// has work (a tenant alone must be able to use them all) or still let one tenant hold every worker when the cap
// is set to the worker count. Fair queueing costs nothing when a tenant is alone and bounds what a flooding tenant
// does to the others to the jobs already running: a tenant's n-th waiting job gets BullMQ priority n (start-time
// fair queueing by rank), so a polite tenant's first job goes ahead of a flooding tenant's second, and within one
// priority BullMQ keeps arrival order.
//
// The waiting jobs are one sorted set per tenant (member: job id, score: the job's deadline) and a sorted set of
// tenants. A job enters its tenant's set at admission (one Lua script decides and adds atomically, so concurrent
// admissions in several API processes see each other at once) and leaves it when a worker takes it, when it is
// withdrawn or timed out by the API. A job whose API process died leaves by itself: entries past their deadline are
// dropped at the next admission (a worker skips such a job anyway), so the counts heal without a sweeper. The
// script reaches each tenant's keys by name from the prefix it is given: they share the queue prefix's hash tag
// ({lc}), so they sit in one Redis Cluster slot with the keys it declares.
//
// Admission estimates the wait of a tenant's job of rank r from the jobs ahead of it: its own tenant's r − 1 and,
// of every other tenant, min(waiting, r), each at its tenant's own time per job (a tenant's jobs may cost far more
// than the average: long audio), shared by the workers, plus this job's own time — a flooding tenant's 50th job sees everyone's backlog ahead of it and is
// shed, while a polite tenant's first job sees one job per busy tenant and is admitted. Jobs of later polite
// tenants may still pass a flooding tenant's admitted job; that job then waits longer than estimated and, at
// worst, ends at its deadline with 503, uncharged: the price of the flood is paid by the flooder.
import type { Redis } from 'ioredis';
import { LuaScript } from '../redis-script';

/** BullMQ's highest priority number (lowest priority): ranks above it share it. */
export const MAX_PRIORITY = 2_097_151;

// KEYS[1] tenants, KEYS[2] this tenant's waiting jobs. ARGV: key prefix of a tenant's set, tenant, job id,
// deadline (epoch ms), now (epoch ms), service ms (-1: not measured yet), workers, usable ms, ceiling of waiting
// jobs in all (0: none), scale (a tenant's cost figure x scale = its time per job), key prefix of a tenant's cost.
// Returns {verdict (0 admitted, 1 expected wait too long, 2 ceiling), rank, ahead, waiting, expected wait ms (-1)}.
const ADMIT = new LuaScript(`
local now = tonumber(ARGV[5])
local service, workers, scale = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[10])
local function perJob(t)
  local cost = tonumber(redis.call('GET', ARGV[11] .. t))
  if cost == nil or service < 0 then return service end
  return cost * scale
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local mine = redis.call('ZCARD', KEYS[2])
local rank = mine + 1
local own = perJob(ARGV[2])
local ahead, waiting, aheadMs = mine, mine, mine * own
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for _, t in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if t ~= ARGV[2] then
    local k = ARGV[1] .. t
    redis.call('ZREMRANGEBYSCORE', k, '-inf', now)
    local n = redis.call('ZCARD', k)
    if n == 0 then
      redis.call('ZREM', KEYS[1], t)
    else
      waiting = waiting + n
      ahead = ahead + math.min(n, rank)
      aheadMs = aheadMs + math.min(n, rank) * perJob(t)
    end
  end
end
local expected = -1
if service >= 0 then expected = math.ceil(aheadMs / workers + own) end
local verdict = 0
if expected > tonumber(ARGV[8]) then
  verdict = 1
elseif tonumber(ARGV[9]) > 0 and waiting >= tonumber(ARGV[9]) then
  verdict = 2
else
  local deadline = tonumber(ARGV[4])
  redis.call('ZADD', KEYS[2], deadline, ARGV[3])
  redis.call('PEXPIREAT', KEYS[2], deadline + 1000)
  local latest = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[2]))
  if latest == nil or latest < deadline then redis.call('ZADD', KEYS[1], deadline, ARGV[2]) end
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 or ttl < deadline - now + 1000 then redis.call('PEXPIREAT', KEYS[1], deadline + 1000) end
end
return {verdict, rank, ahead, waiting, expected}
`);

/** How long a tenant's cost figure is kept after its last job: a tenant back after an hour is measured anew. */
const COST_TTL_MS = 3_600_000;

export interface FairAdmissionRule {
  /** Estimated time per job; null before the first outcome (only the ceiling applies then). */
  serviceMs: number | null;
  /** Turns a tenant's cost figure into its time per job (ServiceTimeEstimate.scale); a tenant without one counts serviceMs. */
  scale: number;
  workers: number;
  /** What the expected wait may fill of the request's remaining budget. */
  usableMs: number;
  /** Ceiling of waiting jobs across tenants (0 = none). */
  maxWaiting: number;
}

export interface FairAdmission {
  verdict: 'admitted' | 'expected_wait' | 'ceiling';
  /** This job's place among its tenant's waiting jobs (1 = its first); its BullMQ priority. */
  rank: number;
  /** Jobs that would run before it in fair order. */
  ahead: number;
  /** Jobs waiting across all tenants (admitted, not yet taken by a worker). */
  waiting: number;
  /** The jobs ahead at their tenants' time per job, shared by the workers, plus this job's own; null before a measure. */
  expectedWaitMs: number | null;
}

const VERDICTS = ['admitted', 'expected_wait', 'ceiling'] as const;

/** The waiting jobs of each tenant on one queue (the keys live beside the queue's, under the same hash tag). */
export class TenantWaiting {
  private readonly base: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    queueName: string,
  ) {
    this.base = `${prefix}:fair:${queueName}`;
  }

  private tenantKey(tenant: string): string {
    return `${this.base}:t:${tenant}`;
  }

  /** Decides and, when admitted, counts the job as its tenant's waiting job, in one step. */
  async admit(tenant: string, jobId: string, deadlineAt: number, rule: FairAdmissionRule): Promise<FairAdmission> {
    const [verdict, rank, ahead, waiting, expected] = (await ADMIT.run(
      this.redis,
      [`${this.base}:tenants`, this.tenantKey(tenant)],
      [
        `${this.base}:t:`,
        tenant,
        jobId,
        deadlineAt,
        Date.now(),
        rule.serviceMs ?? -1,
        Math.max(1, rule.workers),
        rule.usableMs,
        rule.maxWaiting,
        rule.scale,
        `${this.base}:cost:`,
      ],
    )) as [number, number, number, number, number];
    return { verdict: VERDICTS[verdict]!, rank, ahead, waiting, expectedWaitMs: expected < 0 ? null : expected };
  }

  /** A tenant's cost per job in the estimate's base unit (ServiceTimeEstimate.baseOf), for every API process's admissions. */
  async setCost(tenant: string, cost: number): Promise<void> {
    await this.redis.set(`${this.base}:cost:${tenant}`, cost.toFixed(2), 'PX', COST_TTL_MS);
  }

  /** The job stopped waiting (a worker took it, or it was withdrawn or removed); idempotent. */
  async leave(tenant: string, jobId: string): Promise<void> {
    await this.redis.zrem(this.tenantKey(tenant), jobId);
  }
}

/** A tenant's job of this rank, as a BullMQ priority. */
export function priorityOfRank(rank: number): number {
  return Math.min(MAX_PRIORITY, Math.max(1, rank));
}
