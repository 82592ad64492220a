// Owns fair queueing across tenants: each tenant's waiting jobs in Redis, the round (queue priority) a new job
// takes, and the admission decision made from the work that would be ahead of it in that order.
//
// Why fair queueing (and not a per-tenant concurrency cap): the workers are few (one emotion worker, a couple of
// liveness workers), so a cap of "one worker per tenant" would either leave workers idle while a single tenant
// has work (a tenant alone must be able to use them all) or still let one tenant hold every worker when the cap
// is set to the worker count. Fair queueing costs nothing when a tenant is alone and bounds what a flooding tenant
// does to the others to about one quantum of its work plus the jobs already running.
//
// The order is by rounds of work (deficit round robin in BullMQ priorities): a job's round is 1 + its tenant's
// waiting work ahead of it (waiting jobs × the tenant's own time per job) ÷ the quantum (a tenth of the request's
// budget: 1 s for liveness, 0.5 s for emotion), and its BullMQ priority is its round; within a round BullMQ keeps
// arrival order. So everyone's first quantum of work is served in arrival order (a burst of ordinary calls keeps
// FIFO, and admission's estimate of it holds), while a tenant with more waiting goes to later rounds, behind a
// polite tenant's first job. Priorities by rank alone (a tenant's n-th job, priority n) were tried first: a burst of
// 30 customers × 10 calls was then reordered across customers as it arrived, and 34–46 of 300 calls admitted early
// were passed by calls admitted later and waited out their budget. A quantum of a fiftieth (tried in session 11)
// did the same: in bench:field's cold burst every customer got some of its 5 calls, but 27–34 calls admitted early
// were passed and waited out their budget (2 of 300 in the bursts test). A fixed share per tenant once the queue is
// half full was tried too: every tenant got some, but a burst of 30 customers that the estimate nearly fitted lost
// a third of its answers.
//
// A full queue (push-out). With a tenth, a burst that overflows the budget was first come, first served by
// customer (bench:field: 17–33 of 60 customers got none of their 5 calls). So a job that does not fit takes the
// place of waiting jobs instead of being refused, when that is fair: one at a time, each the latest job of the
// tenant with the most waiting work whose latest job is ahead of this one, only while that tenant keeps at least as
// much waiting work as this job's tenant then has (a tenant's only job is never taken; a flooding tenant's own next
// job finds no one to take from), and only if at most a quantum of work per worker makes it fit (else it is refused
// and nothing is taken). A taken job leaves its tenant's set and is marked evicted in the same script; the evicting API
// process moves it to the front of the BullMQ queue, where the next free worker answers it 503 "at capacity" without
// running it (unbilled, like a refusal at admission), so its caller hears within a job's time, not at its deadline.
// A job evicted before its enqueue landed is moved up by its own API process, which looks once it is enqueued; a
// worker taking a job asks, in one MULTI with its leaving the set, whether it was evicted. Work ahead of every other
// job only shrinks: the newcomer joins the end of its round, where the evicted jobs' time was. Measured: README
// Decisions (bench:field: every customer served in four of seven runs, as many answers in all). Not taken: a job in
// a later round than the newcomer's (behind it anyway), nor the first-round jobs of a tenant whose latest job is in a
// later round (the estimate counts that tenant's first round as full either way), so a burst of about a quantum per
// customer, admitted while the time per job reads high, is still first come, first served by customer.
//
// The waiting jobs are one sorted set per tenant (member: job id, score: the job's deadline) and a sorted set of
// tenants. A job enters its tenant's set at admission (one Lua script decides and adds atomically, so concurrent
// admissions in several API processes see each other at once) and leaves it when a worker takes it, when it is
// withdrawn or timed out by the API. A job whose API process died leaves by itself: entries past their deadline are
// dropped at the next admission (a worker skips such a job anyway), so the counts heal without a sweeper. The
// script reaches each tenant's keys by name from the prefix it is given: they share the queue prefix's hash tag
// ({lc}), so they sit in one Redis Cluster slot with the keys it declares.
//
// Admission estimates a job's wait from the work ahead of it: its own tenant's waiting work, and of every other
// tenant with jobs waiting, its work in rounds up to this job's (at most round × quantum) — and at least
// (round − 1) × quantum, since that tenant's later jobs in earlier rounds will pass this one too — shared by the
// workers, plus this job's own time; each tenant's work at its own time per job (a tenant's jobs may cost far more
// than the average: long audio). A flooding tenant's late jobs see everyone's work ahead and are shed; a polite
// tenant's first job sees at most a quantum per busy tenant and is admitted. Jobs of tenants idle at its admission
// may still pass an admitted job of a later round; it then waits longer than estimated and, at worst, ends at its
// deadline with 503, uncharged.
import type { Redis } from 'ioredis';
import { luaScript } from '../redis-script';

/** The quantum as a share of the request's remaining budget at admission (see the header). */
export const FAIR_QUANTUM_SHARE = 0.1;

/** What a caller refused for capacity hears: at admission, or when its waiting job gave its place to another tenant's. */
export const AT_CAPACITY = 'The service is at capacity; try again shortly';

/**
 * The most work one admission may take the place of, in quanta per worker: a job that does not fit by more is
 * refused. Each evicted job shortens the wait by its time ÷ the workers; usually one is enough, but when the time per
 * job is measured higher during a burst, the queue admitted at the lower figure overflows for every later caller, and
 * a cap of two jobs per worker then left 9 of 30 customers of the bursts test with no answer at all.
 */
const EVICTABLE_QUANTA_PER_WORKER = 1;

/** BullMQ's highest priority number (lowest priority): rounds above it share it. */
const MAX_PRIORITY = 2_097_151;

const ADMIT = luaScript('fair-admit-2');

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
  /** Work (estimated ms) a tenant may have waiting in one round, in arrival order with everyone's. */
  quantumMs: number;
}

export interface FairAdmission {
  verdict: 'admitted' | 'expected_wait' | 'ceiling';
  /** This job's place among its tenant's waiting jobs (1 = its first). */
  rank: number;
  /** Its round (1 + its tenant's waiting work ÷ the quantum): its BullMQ priority. */
  round: number;
  /** Jobs that would run before it in fair order. */
  ahead: number;
  /** Jobs waiting across all tenants (admitted, not yet taken by a worker). */
  waiting: number;
  /** The jobs ahead at their tenants' time per job, shared by the workers, plus this job's own; null before a measure. */
  expectedWaitMs: number | null;
  /** The waiting jobs whose place this one took (see the header); usually none. */
  evicted: Array<{ tenant: string; jobId: string }>;
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
    const [verdict, rank, ahead, waiting, expected, round, ...taken] = (await ADMIT.run(
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
        Math.max(1, rule.quantumMs),
        this.evictedKey(''),
        EVICTABLE_QUANTA_PER_WORKER * Math.max(1, rule.quantumMs) * Math.max(1, rule.workers),
      ],
    )) as [number, number, number, number, number, number, ...string[]];
    const evicted: FairAdmission['evicted'] = [];
    for (let i = 0; i + 1 < taken.length; i += 2) evicted.push({ jobId: taken[i]!, tenant: taken[i + 1]! });
    return { verdict: VERDICTS[verdict]!, rank, round, ahead, waiting, expectedWaitMs: expected < 0 ? null : expected, evicted };
  }

  private evictedKey(jobId: string): string {
    return `${this.base}:evicted:${jobId}`;
  }

  /** Whether another tenant's job took this job's place (it must not run: its worker answers it 503 at once). */
  async isEvicted(jobId: string): Promise<boolean> {
    return (await this.redis.exists(this.evictedKey(jobId))) === 1;
  }

  /**
   * A worker takes the job: it stops waiting, in one step with the question whether it was evicted (then it must
   * not run). Evicted and taken exclude each other: admission evicts only a job still in its tenant's set.
   */
  async take(tenant: string, jobId: string): Promise<{ evicted: boolean }> {
    const replies = await this.redis.multi().zrem(this.tenantKey(tenant), jobId).exists(this.evictedKey(jobId)).exec();
    const [err, exists] = replies?.[1] ?? [new Error('transaction aborted'), 0];
    if (err) throw err;
    return { evicted: exists === 1 };
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

/** A job's round, as a BullMQ priority. */
export function priorityOfRound(round: number): number {
  return Math.min(MAX_PRIORITY, Math.max(1, round));
}
