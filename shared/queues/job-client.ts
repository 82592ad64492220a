// Owns the API side of the queue round trip: store the bytes, enqueue a small job, await the outcome.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors';
import type { Logger } from '../logger';
import type { JobEnvelope, JobOutcome } from './contracts';
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
  /** Shed load with 503 when this many jobs already wait (0 = never). */
  maxBacklog: number;
}

export interface SubmitOptions<I> {
  requestId: string;
  input: I;
  payload: Buffer;
  budgetMs: number;
}

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
    this.bus = new ResultBus(opts.subscriber, this.keys.replies(this.processId), opts.redis, this.keys, opts.log);
  }

  async start(): Promise<void> {
    await this.bus.start();
  }

  /** Sheds load before any work is done: a backlog that cannot be served in time gets 503 now. */
  async assertCapacity(): Promise<void> {
    if (this.opts.maxBacklog <= 0) return;
    const waiting = await this.queue.getWaitingCount();
    if (waiting >= this.opts.maxBacklog) {
      throw new ServiceUnavailableError('The service is at capacity; try again shortly', 2);
    }
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
