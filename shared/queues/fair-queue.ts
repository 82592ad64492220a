// Owns fair queueing across tenants: each tenant's waiting jobs in Redis (one sorted set per tenant, scored by
// deadline), the round (BullMQ priority) a new job takes, the admission decision made from the work that would be
// ahead of it in that order, and push-out (a job that does not fit may take the place of the latest waiting jobs of
// the tenants with the most waiting work). The design, its measurements and what was tried instead:
// docs/reliability.md, "Fair queueing across tenants".
import type { Redis } from 'ioredis';
import { luaScript } from '../redis-script';

/** The quantum as a share of the request's remaining budget at admission (docs/reliability.md). */
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

  /**
   * Decides and, when admitted, counts the job as its tenant's waiting job, in one step. `now` (epoch ms) is the
   * instant whose past deadlines no longer count.
   */
  async admit(tenant: string, jobId: string, deadlineAt: number, rule: FairAdmissionRule, now = Date.now()): Promise<FairAdmission> {
    const [verdict, rank, ahead, waiting, expected, round, ...taken] = (await ADMIT.run(
      this.redis,
      [`${this.base}:tenants`, this.tenantKey(tenant)],
      [
        `${this.base}:t:`,
        tenant,
        jobId,
        deadlineAt,
        now,
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
