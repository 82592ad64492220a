// Owns admission by time for one queue, on the API side: the work ahead of a job in fair order (fair-queue.ts), shared
// by the workers, plus its own time, must fit what is left of the request's budget, with a count cap as a ceiling;
// each tenant's admitted job counts as waiting until enqueued or withdrawn; the time per job is learnt from the
// workers' cycles (service-time.ts) and each tenant's own cost shared through Redis. The job client (job-client.ts)
// asks it before each enqueue. The estimate and why: docs/reliability.md, "Admission by time" and "Fair queueing
// across tenants".
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors';
import type { Deadline } from '../deadline';
import type { Logger } from '../logger';
import type { JobOutcome } from './contracts';
import type { WorkerCycle } from './result-bus';
import { ServiceTimeEstimate } from './service-time';
import { AT_CAPACITY, FAIR_QUANTUM_SHARE, TenantWaiting } from './fair-queue';
import { WarmUpTime } from './warm-up-time';

const WORKER_COUNT_TTL_MS = 3000;
/** Weight of a tenant's newest job in its cost figure (about its last ten jobs matter, like the global estimate). */
const TENANT_COST_ALPHA = 0.2;
/** Tenants whose cost this process remembers; past it, it starts over (the figures stay in Redis for an hour). */
const MAX_TENANTS_REMEMBERED = 10_000;
/**
 * Share of the remaining budget the expected wait may fill; a tenth is left for the estimate's error and the
 * answer's way back. 0.8 shed the tail of bursts the workers then served with seconds to spare.
 */
const ADMISSION_HEADROOM = 0.9;

/** Who a job is for: the tenant its fair share is counted for (ours: an account, never a header) and its job id. */
export interface AdmissionRequest {
  tenant: string;
  jobId: string;
}

/** What admission decided, for logs and tests: the expected wait against what the budget has left. */
export interface Admission {
  tenant: string;
  jobId: string;
  /** The job's place among its tenant's waiting jobs (1 = the tenant's only one). */
  rank: number;
  /** Its round in fair order (fair-queue.ts): its queue priority. */
  round: number;
  /** Jobs that would run before it in fair order (fair-queue.ts). */
  ahead: number;
  /** Jobs waiting across all tenants. */
  waiting: number;
  workers: number;
  /** Estimated time per job (service-time.ts); null before the first outcome. */
  serviceMs: number | null;
  expectedWaitMs: number | null;
  remainingMs: number;
  /** Set while the admitted job is counted as its tenant's waiting job by this process (until enqueued or withdrawn). */
  counted?: boolean;
  /** The waiting jobs of other tenants whose place this one took (fair-queue.ts). */
  evicted?: Array<{ tenant: string; jobId: string }>;
}

export class CapacityError extends ServiceUnavailableError {
  constructor(
    readonly admission: Admission,
    retryAfterSeconds: number,
  ) {
    super(AT_CAPACITY, retryAfterSeconds);
  }
}

export interface AdmissionOptions {
  /** Producer connection: fails fast while Redis is down. */
  redis: Redis;
  prefix: string;
  queueName: string;
  /** The queue the admitted jobs go to: its connected workers, and where an evicted job is moved up. */
  queue: Queue;
  log: Logger;
  /** Ceiling: shed with 503 when this many jobs per worker already wait, whatever the time rule says (0 = none). */
  maxBacklogPerWorker: number;
  /** A fixed worker count for shedding; default: the workers BullMQ sees connected, refreshed every few seconds. */
  expectedWorkers?: number;
}

export class AdmissionControl {
  private readonly tenants: TenantWaiting;
  private readonly warmUp: WarmUpTime;
  private readonly serviceTime = new ServiceTimeEstimate();
  /** Each tenant's cost per job, in the estimate's base unit (ServiceTimeEstimate.baseOf). */
  private readonly tenantCost = new Map<string, number>();
  private workersSeen = { count: 1, at: 0 };

  constructor(private readonly opts: AdmissionOptions) {
    this.tenants = new TenantWaiting(opts.redis, opts.prefix, opts.queueName);
    this.warmUp = new WarmUpTime(opts.redis, opts.prefix, opts.queueName);
  }

  /** Estimated time per job (service-time.ts); null before the first outcome. */
  get serviceTimeMs(): number | null {
    return this.serviceTime.ms;
  }

  /** The job no longer waits (never enqueued, or taken back): its tenant's count drops now, not at its deadline. */
  async leave(admission: Admission | undefined): Promise<void> {
    if (!admission?.counted) return;
    admission.counted = false;
    await this.tenants
      .leave(admission.tenant, admission.jobId)
      .catch((err: unknown) => this.opts.log.warn({ err, tenant: admission.tenant }, 'waiting job not uncounted; it leaves at its deadline'));
  }

  /**
   * Feeds the estimate with the worker's cycle, for answered and refused jobs alike (a refused job's work took the
   * worker as long). An outcome without one (a job skipped before its handler ran, a worker's warm-up jobs) is no
   * sample; until the first sample, a warm-up job's workerMs stands in (pessimistic: warm-up jobs are slow), so a
   * burst on fresh workers is not admitted blind, while a job answered 503 unrun (evicted, expired) stands in for
   * nothing. The first sample replaces it.
   */
  observe(outcome: JobOutcome<unknown>, cycle: WorkerCycle | null, tenant: string | undefined): void {
    if (cycle === null) {
      // A job answered 503 before its handler ran (evicted, past its deadline, input gone) did no work to stand in.
      if (outcome.ok || outcome.error.httpStatus !== 503) this.serviceTime.observeProvisional(outcome.workerMs);
      return;
    }
    this.serviceTime.observe(cycle);
    const base = tenant === undefined ? null : this.serviceTime.baseOf(cycle);
    if (tenant === undefined || base === null) return;
    // The tenant's own figure (about its last ten jobs), shared through Redis with the other API processes.
    const previous = this.tenantCost.get(tenant);
    const cost = previous === undefined ? base : previous + TENANT_COST_ALPHA * (base - previous);
    if (this.tenantCost.size >= MAX_TENANTS_REMEMBERED && previous === undefined) this.tenantCost.clear();
    this.tenantCost.set(tenant, cost);
    this.tenants.setCost(tenant, cost).catch((err: unknown) => this.opts.log.warn({ err, tenant }, 'tenant cost not stored'));
  }

  /**
   * Sheds load before any work is done: a job whose expected wait would not fit the deadline gets 503
   * now (Retry-After: the seconds by which it would miss), never a 503 after waiting the budget out. The wait
   * counts the jobs ahead of this one in fair order (fair-queue.ts), and an admitted job counts as its tenant's
   * waiting job at once, for every API process: a burst's requests are admitted before their enqueues land.
   */
  async admit(deadline: Deadline, who: AdmissionRequest): Promise<Admission> {
    const workers = await deadline.race('admission', this.workerCount());
    if (workers === 0) throw new ServiceUnavailableError('No worker is running for this queue; try again shortly', 5);
    const remainingMs = deadline.remainingMs();
    if (this.serviceTime.ms === null) {
      // No outcome seen yet (a cold start): the workers' warm-up time stands in, so a burst is not admitted blind.
      const warmUpMs = await deadline.race('admission', this.warmUp.read());
      if (warmUpMs !== null) this.serviceTime.observeProvisional(warmUpMs);
    }
    const serviceMs = this.serviceTime.ms;
    const usableMs = remainingMs * ADMISSION_HEADROOM;
    const fair = await deadline.race(
      'admission',
      this.tenants.admit(who.tenant, who.jobId, deadline.at, {
        serviceMs,
        scale: this.serviceTime.scale,
        workers,
        usableMs,
        maxWaiting: this.opts.maxBacklogPerWorker * workers,
        quantumMs: remainingMs * FAIR_QUANTUM_SHARE,
      }),
    );
    const expectedWaitMs = fair.expectedWaitMs;
    const admission: Admission = {
      ...who,
      rank: fair.rank,
      round: fair.round,
      ahead: fair.ahead,
      waiting: fair.waiting,
      workers,
      serviceMs,
      expectedWaitMs,
      remainingMs,
    };
    if (fair.verdict === 'expected_wait') {
      this.refused(admission, 'expected wait exceeds the remaining budget');
      throw new CapacityError(admission, Math.max(1, Math.ceil((expectedWaitMs! - usableMs) / 1000)));
    }
    if (fair.verdict === 'ceiling') {
      this.refused(admission, 'backlog ceiling reached');
      throw new CapacityError(admission, 2);
    }
    admission.counted = true;
    if (fair.evicted.length > 0) {
      admission.evicted = fair.evicted;
      this.opts.log.info({ tenant: who.tenant, rank: fair.rank, evicted: fair.evicted }, 'admission took the place of waiting jobs');
      for (const { jobId } of fair.evicted) void this.hurryEvicted(jobId);
    }
    return admission;
  }

  /** An enqueued job evicted while its body was read or its enqueue was on its way: the evicting process may not have found it. */
  async hurryIfEvicted(jobId: string): Promise<void> {
    if (await this.tenants.isEvicted(jobId).catch(() => false)) void this.hurryEvicted(jobId);
  }

  /**
   * An evicted job goes to the front of the queue, where the next free worker answers it 503 without running it
   * (fair-queue.ts): its caller hears at once, not at its deadline. A job not enqueued yet is hurried by its own
   * API process once it is (hurryIfEvicted); one a worker has taken is answered the same way.
   */
  private async hurryEvicted(jobId: string): Promise<void> {
    try {
      await (await this.opts.queue.getJob(jobId))?.changePriority({ priority: 0, lifo: true });
    } catch (err) {
      this.opts.log.warn({ err, jobId }, 'evicted job not moved up; a worker answers it in its turn');
    }
  }

  private refused(a: Admission, reason: string): void {
    const round = (ms: number | null) => (ms === null ? null : Math.round(ms));
    this.opts.log.warn(
      {
        reason,
        tenant: a.tenant,
        rank: a.rank,
        round: a.round,
        ahead: a.ahead,
        waiting: a.waiting,
        workers: a.workers,
        serviceMs: round(a.serviceMs),
        ...this.serviceTime.parts,
        expectedWaitMs: round(a.expectedWaitMs),
        remainingMs: a.remainingMs,
      },
      'admission refused',
    );
  }

  /** Connected workers (CLIENT LIST behind it, so cached for a few seconds). */
  private async workerCount(): Promise<number> {
    if (this.opts.expectedWorkers) return this.opts.expectedWorkers;
    if (Date.now() - this.workersSeen.at > WORKER_COUNT_TTL_MS) {
      this.workersSeen = { count: await this.opts.queue.getWorkersCount(), at: Date.now() };
    }
    return this.workersSeen.count;
  }
}
