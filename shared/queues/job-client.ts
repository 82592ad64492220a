// Owns the API side of the queue round trip: admit by time (the work ahead of the job in fair order, shared by the
// workers, plus its own time, must fit what is left of the request's budget; fair-queue.ts, service-time.ts), store
// the bytes, enqueue a small job with its round as priority, await the outcome and unwrap it (`call`: the value, or
// the worker's typed error thrown), and keep each tenant's time per job from the workers' cycles. A count cap stays
// as a ceiling. The estimate and why: docs/reliability.md, "Admission by time" and "Fair queueing across tenants".
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Command, type Redis } from 'ioredis';
import { deserializeJobError, ServiceUnavailableError } from '../errors';
import { Deadline, DeadlineExceededError } from '../deadline';
import type { Logger } from '../logger';
import type { z } from 'zod';
import { JOB_OUTCOME_SCHEMAS, type JobEnvelope, type JobOutcome, type QueueName } from './contracts';
import { PAYLOAD_GRACE_MS, queueKeys, type QueueKeys } from './keys';
import { ResultBus, type WorkerCycle } from './result-bus';
import { ServiceTimeEstimate } from './service-time';
import { AT_CAPACITY, FAIR_QUANTUM_SHARE, priorityOfRound, TenantWaiting } from './fair-queue';
import { WarmUpTime } from './warm-up-time';

export interface JobClientOptions {
  /** Producer connection: fails fast while Redis is down. */
  redis: Redis;
  /** Connection factory for BullMQ and the result bus subscriber. */
  subscriber: Redis;
  prefix: string;
  queueName: string;
  log: Logger;
  /** How outcomes are parsed; default: the contract's schema of queueName (a queue without one must pass it). */
  outcomeSchema?: z.ZodType<JobOutcome>;
  /** Ceiling: shed with 503 when this many jobs per worker already wait, whatever the time rule says (0 = none). */
  maxBacklogPerWorker: number;
  /** A fixed worker count for shedding; default: the workers BullMQ sees connected, refreshed every few seconds. */
  expectedWorkers?: number;
}

/**
 * A job's bytes, handed over once: the client lets go of them as soon as they are in Redis, so a request waiting for
 * its answer holds no copy of them (a front-end's memory bound counts a body only until then: upload-gate.ts).
 */
export class JobPayload {
  private bytes: Buffer | null;

  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }

  /** The bytes, once; the holder is empty afterwards. */
  take(): Buffer {
    const bytes = this.bytes;
    if (!bytes) throw new Error('job payload already taken');
    this.bytes = null;
    return bytes;
  }
}

export interface SubmitOptions<I> {
  requestId: string;
  input: I;
  /** The job's bytes; a JobPayload is let go of once they are in Redis. */
  payload: Buffer | JobPayload;
  /** The request's deadline: the job waits at most what is left of it. */
  deadline: Deadline;
  /** What admission decided (its tenant and rank); the job counts as its tenant's waiting job until a worker takes it. */
  admission?: Admission;
  /** Called once the payload is in Redis and the job queued (the caller may let go of its copy of the bytes). */
  onQueued?: () => void;
}

export interface CallOptions<I, R> extends Omit<SubmitOptions<I>, 'admission'> {
  /** Whose fair share of the workers the job counts in (fair-queue.ts): an account, never a header. */
  tenant: string;
  /** Admission already decided for this job (before its body was read); absent or null: admitted here. */
  admission?: Admission | null;
  /** Sees every outcome before it is unwrapped, answered or refused (a refused job took the worker as long). */
  onOutcome?: (outcome: JobOutcome<R>) => void;
  /** The request's logger, for a job that ended with an internal error; default: the client's. */
  log?: Logger;
}

/** An answered job: its value and the worker's time on it. */
export type JobAnswer<R> = Extract<JobOutcome<R>, { ok: true }>;

/**
 * The answer of an outcome, or its error as the typed AppError the worker threw (an internal error is logged: the
 * worker's own log has the cause, this line ties it to the request).
 */
export function answerOf<R>(outcome: JobOutcome<R>, log: Logger): JobAnswer<R> {
  if (outcome.ok) return outcome;
  if (outcome.error.httpStatus === 500) log.error({ code: outcome.error.code }, 'job ended with an internal error');
  throw deserializeJobError(outcome.error);
}

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

export class JobTimeoutError extends ServiceUnavailableError {
  constructor(
    readonly jobId: string,
    readonly wasStarted: boolean,
  ) {
    super('No result within the time budget; try again shortly', 2);
  }
}

export class JobClient {
  readonly queue: Queue;
  private readonly keys: QueueKeys;
  private readonly bus: ResultBus;
  private readonly processId = randomUUID();
  private readonly tenants: TenantWaiting;
  private readonly warmUp: WarmUpTime;

  constructor(private readonly opts: JobClientOptions) {
    this.keys = queueKeys(opts.prefix);
    this.tenants = new TenantWaiting(opts.redis, opts.prefix, opts.queueName);
    this.warmUp = new WarmUpTime(opts.redis, opts.prefix, opts.queueName);
    this.queue = new Queue(opts.queueName, {
      connection: opts.redis,
      prefix: opts.prefix,
      defaultJobOptions: { attempts: 1, removeOnComplete: true, removeOnFail: { age: 3600, count: 1000 } },
    });
    this.bus = new ResultBus(
      opts.subscriber,
      this.keys.replies(this.processId),
      opts.redis,
      this.keys,
      opts.log,
      opts.outcomeSchema ?? JOB_OUTCOME_SCHEMAS[opts.queueName as QueueName],
    );
  }

  async start(): Promise<void> {
    await this.bus.start();
  }

  private readonly serviceTime = new ServiceTimeEstimate();
  /** Each tenant's cost per job, in the estimate's base unit (ServiceTimeEstimate.baseOf). */
  private readonly tenantCost = new Map<string, number>();

  /** An admitted job that will not be enqueued after all (the caller was refused for another reason). */
  withdraw(admission: Admission): void {
    void this.leave(admission);
  }

  /** The job no longer waits (never enqueued, or taken back): its tenant's count drops now, not at its deadline. */
  private async leave(admission: Admission | undefined): Promise<void> {
    if (!admission?.counted) return;
    admission.counted = false;
    await this.tenants
      .leave(admission.tenant, admission.jobId)
      .catch((err: unknown) => this.opts.log.warn({ err, tenant: admission.tenant }, 'waiting job not uncounted; it leaves at its deadline'));
  }

  /** Estimated time per job (service-time.ts); null before the first outcome. */
  get serviceTimeMs(): number | null {
    return this.serviceTime.ms;
  }

  /**
   * Feeds the estimate with the worker's cycle, for answered and refused jobs alike (a refused job's work took the
   * worker as long). An outcome without one (a job skipped before its handler ran, a worker's warm-up jobs) is no
   * sample; until the first sample, a warm-up job's workerMs stands in (pessimistic: warm-up jobs are slow), so a
   * burst on fresh workers is not admitted blind, while a job answered 503 unrun (evicted, expired) stands in for
   * nothing. The first sample replaces it.
   */
  private observe(outcome: JobOutcome<unknown>, cycle: WorkerCycle | null, tenant: string | undefined): void {
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
  async assertCapacity(deadline: Deadline, who: AdmissionRequest): Promise<Admission> {
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

  /**
   * An evicted job goes to the front of the queue, where the next free worker answers it 503 without running it
   * (fair-queue.ts): its caller hears at once, not at its deadline. A job not enqueued yet is hurried by its own
   * API process once it is (run()); one a worker has taken is answered the same way.
   */
  private async hurryEvicted(jobId: string): Promise<void> {
    try {
      await (await this.queue.getJob(jobId))?.changePriority({ priority: 0, lifo: true });
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

  private workersSeen = { count: 1, at: 0 };

  /** Connected workers (CLIENT LIST behind it, so cached for a few seconds). */
  private async workerCount(): Promise<number> {
    if (this.opts.expectedWorkers) return this.opts.expectedWorkers;
    if (Date.now() - this.workersSeen.at > WORKER_COUNT_TTL_MS) {
      this.workersSeen = { count: await this.queue.getWorkersCount(), at: Date.now() };
    }
    return this.workersSeen.count;
  }

  /**
   * Admits the job by time (unless `admission` was decided already), runs it and unwraps its outcome: resolves with
   * the answer, or rejects with the worker's typed error, CapacityError (not admitted) or JobTimeoutError.
   */
  async call<I, R>(o: CallOptions<I, R>): Promise<JobAnswer<R>> {
    const admission = o.admission ?? (await this.assertCapacity(o.deadline, { tenant: o.tenant, jobId: o.requestId }));
    const outcome = await this.run<I, R>({
      requestId: o.requestId,
      input: o.input,
      payload: o.payload,
      deadline: o.deadline,
      admission,
      ...(o.onQueued ? { onQueued: o.onQueued } : {}),
    });
    o.onOutcome?.(outcome);
    return answerOf(outcome, o.log ?? this.opts.log);
  }

  /** Runs one job and resolves with its outcome, or rejects with JobTimeoutError at the deadline. */
  async run<I, R>(o: SubmitOptions<I>): Promise<JobOutcome<R>> {
    const jobId = o.requestId;
    const now = Date.now();
    const budgetMs = o.deadline.remainingMs(now);
    if (o.admission && o.admission.jobId !== jobId) throw new Error(`admission of job ${o.admission.jobId} used for job ${jobId}`);
    if (budgetMs <= 0) {
      await this.leave(o.admission);
      throw new DeadlineExceededError('enqueue');
    }
    const deadline = o.deadline.at;
    const payloadKey = this.keys.payload(jobId);
    const envelope: JobEnvelope<I> = {
      requestId: o.requestId,
      deadline,
      payloadKey,
      replyTo: this.keys.replies(this.processId),
      enqueuedAt: now,
      // The worker that takes the job removes it from its tenant's waiting jobs (fair-queue.ts).
      ...(o.admission ? { tenant: o.admission.tenant } : {}),
      input: o.input,
    };
    const waiting = this.bus.expect<R>(jobId);
    try {
      await this.enqueue(o.payload, envelope, budgetMs + PAYLOAD_GRACE_MS, o.admission);
    } catch {
      await this.leave(o.admission);
      this.bus.forget(jobId);
      await this.opts.redis.del(payloadKey).catch(() => undefined);
      throw new ServiceUnavailableError('Queue unavailable; try again shortly', 5);
    }
    o.onQueued?.();
    // Evicted while its body was read or its enqueue was on its way: the evicting process may not have found it.
    if (o.admission && (await this.tenants.isEvicted(jobId).catch(() => false))) void this.hurryEvicted(jobId);
    const outcome = await waiting.wait(o.deadline.remainingMs());
    if (outcome) {
      this.observe(outcome, waiting.cycle, o.admission?.tenant);
      return outcome;
    }
    // Too late: take the job back if no worker has started it, and free its bytes.
    const removed = await this.queue.remove(jobId).catch(() => 0);
    await Promise.all([this.opts.redis.del(payloadKey).catch(() => undefined), this.leave(o.admission)]);
    // The worker may have finished in the last instant; the stored result settles it.
    const late = await this.bus.lastLook<R>(jobId);
    if (late) return late;
    throw new JobTimeoutError(jobId, removed !== 1);
  }

  /**
   * Stores the payload and adds the job in one round trip: both go out on the same connection in this order, so Redis
   * stores the bytes before the job exists and a worker never finds a job without its payload. Its own frame, so the
   * bytes are not held while the caller waits for the answer.
   * The payload's SET is written at once, on its own (sendCommand, not the connection's auto-pipeline, which the job's
   * commands still take and flush after it): in the auto-pipeline, every payload of an event-loop tick was copied
   * once more into one buffer for the tick's write (docs/liveness-api.md, "The JSON form is read from its bytes").
   */
  private async enqueue<I>(payload: Buffer | JobPayload, envelope: JobEnvelope<I>, payloadTtlMs: number, admission?: Admission): Promise<void> {
    const bytes = payload instanceof JobPayload ? payload.take() : payload;
    await Promise.all([
      this.opts.redis.sendCommand(new Command('set', [envelope.payloadKey, bytes, 'PX', payloadTtlMs])),
      // Its round in fair order is its priority (fair-queue.ts); a job run without admission goes in the first.
      this.queue.add(this.opts.queueName, envelope, { jobId: envelope.requestId, priority: priorityOfRound(admission?.round ?? 1) }),
    ]);
  }

  /** Reads a finished job's stored outcome, if any (used after a timeout to settle billing races). */
  lastLook<R>(jobId: string): Promise<JobOutcome<R> | null> {
    return this.bus.lastLook<R>(jobId);
  }

  async close(): Promise<void> {
    await this.bus.close();
    await this.queue.close();
  }
}
