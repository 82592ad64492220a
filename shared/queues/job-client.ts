// Owns the API side of the queue round trip: store the bytes, enqueue a small job, await the outcome.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors';
import type { Logger } from '../logger';
import type { z } from 'zod';
import { JOB_OUTCOME_SCHEMAS, type JobEnvelope, type JobOutcome, type QueueName } from './contracts';
import { PAYLOAD_GRACE_MS, queueKeys, type QueueKeys } from './keys';
import { ResultBus } from './result-bus';

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
  /** Shed load with 503 when more than this many jobs per worker already wait (0 = never). */
  maxBacklogPerWorker: number;
  /** A fixed worker count for shedding; default: the workers BullMQ sees connected, refreshed every few seconds. */
  expectedWorkers?: number;
}

export interface SubmitOptions<I> {
  requestId: string;
  input: I;
  payload: Buffer;
  budgetMs: number;
}

const WORKER_COUNT_TTL_MS = 3000;

export class JobTimeoutError extends ServiceUnavailableError {
  constructor(readonly jobId: string, readonly wasStarted: boolean) {
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
    this.bus = new ResultBus(opts.subscriber, this.keys.replies(this.processId), opts.redis, this.keys, opts.log, opts.outcomeSchema ?? JOB_OUTCOME_SCHEMAS[opts.queueName as QueueName]);
  }

  async start(): Promise<void> {
    await this.bus.start();
  }

  /** Sheds load before any work is done: a backlog that cannot be served in time gets 503 now. */
  async assertCapacity(): Promise<void> {
    if (this.opts.maxBacklogPerWorker <= 0) return;
    const [waiting, workers] = await Promise.all([this.queue.getWaitingCount(), this.workerCount()]);
    if (workers === 0) throw new ServiceUnavailableError('No worker is running for this queue; try again shortly', 5);
    if (waiting >= this.opts.maxBacklogPerWorker * workers) {
      throw new ServiceUnavailableError('The service is at capacity; try again shortly', 2);
    }
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

  /** Runs one job and resolves with its outcome, or rejects with JobTimeoutError after budgetMs. */
  async run<I, R>(o: SubmitOptions<I>): Promise<JobOutcome<R>> {
    const jobId = o.requestId;
    const now = Date.now();
    const deadline = now + o.budgetMs;
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
      await this.opts.redis.set(payloadKey, o.payload, 'PX', o.budgetMs + PAYLOAD_GRACE_MS);
      await this.queue.add(this.opts.queueName, envelope, { jobId });
    } catch (err) {
      this.bus.forget(jobId);
      await this.opts.redis.del(payloadKey).catch(() => undefined);
      throw new ServiceUnavailableError('Queue unavailable; try again shortly', 5);
    }
    const outcome = await waiting.wait(o.budgetMs);
    if (outcome) return outcome;
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
