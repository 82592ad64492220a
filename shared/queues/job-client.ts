// Owns the API side of the queue round trip: admit by time, store the bytes, enqueue a small job,
// await the outcome. Admission is by time, not by count: a job is shed (503) only when the wait the
// backlog implies — jobs waiting x measured time per job / workers, plus its own time — would not fit
// what is left of the request's budget. The time per job comes from the cycle each worker reports with its
// outcome (fetch, payload, engine, settle, publish, on the worker's own clock and in its CPU time;
// job-runner.ts), turned into one figure by service-time.ts — not from the time the API sees between enqueue
// and answer: that one also holds the API's own queueing during a burst and inflated the estimate until a
// third of a servable burst was shed. A count cap stays as a ceiling for Redis memory and for the time before
// the first outcome has been measured.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors';
import { Deadline, DeadlineExceededError } from '../deadline';
import type { Logger } from '../logger';
import type { z } from 'zod';
import { JOB_OUTCOME_SCHEMAS, type JobEnvelope, type JobOutcome, type QueueName } from './contracts';
import { PAYLOAD_GRACE_MS, queueKeys, type QueueKeys } from './keys';
import { ResultBus, type WorkerCycle } from './result-bus';
import { ServiceTimeEstimate } from './service-time';

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

export interface SubmitOptions<I> {
  requestId: string;
  input: I;
  payload: Buffer;
  /** The request's deadline: the job waits at most what is left of it. */
  deadline: Deadline;
  /** What admission decided: the job stops counting as pending once enqueued. */
  admission?: Admission;
}

const WORKER_COUNT_TTL_MS = 3000;
/**
 * Share of the remaining budget the expected wait may fill; a tenth is left for the estimate's error and the
 * answer's way back. 0.8 shed the tail of bursts the workers then served with seconds to spare.
 */
export const ADMISSION_HEADROOM = 0.9;

/** What admission decided, for logs and tests: the expected wait against what the budget has left. */
export interface Admission {
  waiting: number;
  workers: number;
  /** Estimated time per job (service-time.ts); null before the first outcome. */
  serviceMs: number | null;
  expectedWaitMs: number | null;
  remainingMs: number;
  /** Set while the admitted job is counted as ahead of others but not yet in the queue. */
  pendingEnqueue?: boolean;
}

export class CapacityError extends ServiceUnavailableError {
  constructor(
    readonly admission: Admission,
    retryAfterSeconds: number,
  ) {
    super('The service is at capacity; try again shortly', retryAfterSeconds);
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

  constructor(private readonly opts: JobClientOptions) {
    this.keys = queueKeys(opts.prefix);
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
  private admittedNotEnqueued = 0;

  /** An admitted job reached the queue (or never will): stop counting it as pending. */
  private enqueued(admission?: Admission): void {
    if (!admission?.pendingEnqueue) return;
    admission.pendingEnqueue = false;
    this.admittedNotEnqueued--;
  }

  /** An admitted job that will not be enqueued after all (the caller was refused for another reason). */
  withdraw(admission: Admission): void {
    this.enqueued(admission);
  }

  /** Estimated time per job (service-time.ts); null before the first outcome. */
  get serviceTimeMs(): number | null {
    return this.serviceTime.ms;
  }

  /**
   * Feeds the estimate with the worker's cycle. An outcome without one (a failed job, a worker's warm-up jobs)
   * is no sample; until the first sample, its workerMs stands in (pessimistic: warm-up jobs are slow), so a
   * burst on fresh workers is not admitted blind. The first sample replaces it.
   */
  private observe(outcome: JobOutcome<unknown>, cycle: WorkerCycle | null): void {
    if (cycle === null) this.serviceTime.observeProvisional(outcome.workerMs);
    else this.serviceTime.observe(cycle);
  }

  /**
   * Sheds load before any work is done: a job whose expected wait would not fit the deadline gets 503
   * now (Retry-After: the seconds by which it would miss), never a 503 after waiting the budget out.
   */
  async assertCapacity(deadline: Deadline): Promise<Admission> {
    const [queued, workers] = await deadline.race('admission', Promise.all([this.queue.getWaitingCount(), this.workerCount()]));
    // Jobs this process admitted that are not in the queue yet count as ahead too: a burst's requests are
    // admitted concurrently, before any of their enqueues show in the count.
    const waiting = queued + this.admittedNotEnqueued;
    const remainingMs = deadline.remainingMs();
    const serviceMs = this.serviceTime.ms;
    const expectedWaitMs = serviceMs === null ? null : (waiting / Math.max(1, workers) + 1) * serviceMs;
    const admission: Admission = { waiting, workers, serviceMs, expectedWaitMs, remainingMs };
    if (workers === 0) throw new ServiceUnavailableError('No worker is running for this queue; try again shortly', 5);
    const usableMs = remainingMs * ADMISSION_HEADROOM;
    if (expectedWaitMs !== null && expectedWaitMs > usableMs) {
      this.refused(admission, 'expected wait exceeds the remaining budget');
      throw new CapacityError(admission, Math.max(1, Math.ceil((expectedWaitMs - usableMs) / 1000)));
    }
    if (this.opts.maxBacklogPerWorker > 0 && waiting >= this.opts.maxBacklogPerWorker * workers) {
      this.refused(admission, 'backlog ceiling reached');
      throw new CapacityError(admission, 2);
    }
    this.admittedNotEnqueued++;
    admission.pendingEnqueue = true;
    return admission;
  }

  private refused(a: Admission, reason: string): void {
    const round = (ms: number | null) => (ms === null ? null : Math.round(ms));
    this.opts.log.warn(
      {
        reason,
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

  /** Runs one job and resolves with its outcome, or rejects with JobTimeoutError at the deadline. */
  async run<I, R>(o: SubmitOptions<I>): Promise<JobOutcome<R>> {
    const jobId = o.requestId;
    const now = Date.now();
    const budgetMs = o.deadline.remainingMs(now);
    if (budgetMs <= 0) {
      this.enqueued(o.admission);
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
      input: o.input,
    };
    const waiting = this.bus.expect<R>(jobId);
    try {
      // One round trip: both go out on the same connection in this order, so Redis stores the bytes
      // before the job exists and a worker never finds a job without its payload.
      await Promise.all([
        this.opts.redis.set(payloadKey, o.payload, 'PX', budgetMs + PAYLOAD_GRACE_MS),
        this.queue.add(this.opts.queueName, envelope, { jobId }),
      ]);
    } catch {
      this.enqueued(o.admission);
      this.bus.forget(jobId);
      await this.opts.redis.del(payloadKey).catch(() => undefined);
      throw new ServiceUnavailableError('Queue unavailable; try again shortly', 5);
    }
    this.enqueued(o.admission);
    const outcome = await waiting.wait(o.deadline.remainingMs());
    if (outcome) {
      this.observe(outcome, waiting.cycle);
      return outcome;
    }
    // Too late: take the job back if no worker has started it, and free its bytes.
    const removed = await this.queue.remove(jobId).catch(() => 0);
    await this.opts.redis.del(payloadKey).catch(() => undefined);
    // The worker may have finished in the last instant; the stored result settles it.
    const late = await this.bus.lastLook<R>(jobId);
    if (late) return late;
    throw new JobTimeoutError(jobId, removed !== 1);
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
