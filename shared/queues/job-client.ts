// Owns the API side of the queue round trip: admit the job by time (admission.ts), store the bytes, enqueue a small
// job with its round in fair order as priority, await the outcome and unwrap it (`call`: the value, or the worker's
// typed error thrown), and hand each outcome's worker cycle back to admission's estimate.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Command, type Redis } from 'ioredis';
import { deserializeJobError, ServiceUnavailableError } from '../errors';
import { Deadline, DeadlineExceededError } from '../deadline';
import type { Logger } from '../logger';
import type { z } from 'zod';
import { JOB_OUTCOME_SCHEMAS, type JobEnvelope, type JobOutcome, type QueueName } from './contracts';
import { PAYLOAD_GRACE_MS, queueKeys, type QueueKeys } from './keys';
import { ResultBus } from './result-bus';
import { closeRedis, duplicateRedis, isCluster, waitUntilReady } from '../redis';
import { priorityOfRound } from './fair-queue';
import { AdmissionControl, type Admission, type AdmissionRequest } from './admission';

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
  /**
   * The queue's own connection (a duplicate of the producer's, not auto-pipelined): BullMQ defines its ~50 scripts as
   * commands on the connection it is given, and ioredis copies every defined command onto each pipeline it builds:
   * on the auto-pipelined producer that was one pipeline per event-loop tick with commands, ~30 % of the API
   * process's heap allocation and ~6 % of its CPU (bench/results/api.md, 2026-12-06).
   */
  private readonly queueRedis: Redis;
  private readonly keys: QueueKeys;
  private readonly bus: ResultBus;
  private readonly processId = randomUUID();
  private readonly admission: AdmissionControl;
  private readonly onCluster: boolean;

  constructor(private readonly opts: JobClientOptions) {
    this.keys = queueKeys(opts.prefix);
    this.queueRedis = duplicateRedis(opts.redis, { enableAutoPipelining: false, connectionName: `${opts.redis.options.connectionName ?? 'producer'}-queue` });
    this.onCluster = isCluster(opts.redis);
    this.queue = new Queue(opts.queueName, {
      connection: this.queueRedis,
      prefix: opts.prefix,
      defaultJobOptions: { attempts: 1, removeOnComplete: true, removeOnFail: { age: 3600, count: 1000 } },
    });
    this.admission = new AdmissionControl({
      redis: opts.redis,
      prefix: opts.prefix,
      queueName: opts.queueName,
      queue: this.queue,
      log: opts.log,
      maxBacklogPerWorker: opts.maxBacklogPerWorker,
      ...(opts.expectedWorkers === undefined ? {} : { expectedWorkers: opts.expectedWorkers }),
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
    await waitUntilReady(this.queueRedis);
    await this.bus.start();
  }

  /** An admitted job that will not be enqueued after all (the caller was refused for another reason). */
  withdraw(admission: Admission): void {
    void this.admission.leave(admission);
  }

  /** Estimated time per job (service-time.ts); null before the first outcome. */
  get serviceTimeMs(): number | null {
    return this.admission.serviceTimeMs;
  }

  /** Admission by time (admission.ts): the job's place in fair order, or CapacityError when it would not be served in time. */
  async assertCapacity(deadline: Deadline, who: AdmissionRequest): Promise<Admission> {
    return this.admission.admit(deadline, who);
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
      await this.admission.leave(o.admission);
      throw new DeadlineExceededError('enqueue');
    }
    const deadline = o.deadline.at;
    const payloadKey = this.keys.payload(jobId, o.admission?.tenant);
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
      await this.admission.leave(o.admission);
      this.bus.forget(jobId);
      await this.opts.redis.del(payloadKey).catch(() => undefined);
      throw new ServiceUnavailableError('Queue unavailable; try again shortly', 5);
    }
    o.onQueued?.();
    // Evicted while its body was read or its enqueue was on its way: the evicting process may not have found it.
    if (o.admission) await this.admission.hurryIfEvicted(jobId);
    const outcome = await waiting.wait(o.deadline.remainingMs());
    if (outcome) {
      this.admission.observe(outcome, waiting.cycle, o.admission?.tenant);
      return outcome;
    }
    // Too late: take the job back if no worker has started it, and free its bytes.
    const removed = await this.queue.remove(jobId).catch(() => 0);
    await Promise.all([this.opts.redis.del(payloadKey).catch(() => undefined), this.admission.leave(o.admission)]);
    // The worker may have finished in the last instant; the stored result settles it.
    const late = await this.bus.lastLook<R>(jobId, o.admission?.tenant);
    if (late) return late;
    throw new JobTimeoutError(jobId, removed !== 1);
  }

  /**
   * Stores the payload and adds the job in one round trip: both go out on the queue's connection in this order, so Redis
   * stores the bytes before the job exists and a worker never finds a job without its payload. Its own frame, so the
   * bytes are not held while the caller waits for the answer.
   * The payload's SET is written at once, on its own (the queue's connection is not auto-pipelined: in an
   * auto-pipeline, every payload of an event-loop tick was copied once more into one buffer for the tick's write;
   * docs/liveness-api.md, "The JSON form is read from its bytes").
   */
  private async enqueue<I>(payload: Buffer | JobPayload, envelope: JobEnvelope<I>, payloadTtlMs: number, admission?: Admission): Promise<void> {
    const bytes = payload instanceof JobPayload ? payload.take() : payload;
    const stored = this.queueRedis.sendCommand(new Command('set', [envelope.payloadKey, bytes, 'PX', payloadTtlMs]));
    // On a Redis Cluster the bytes and the queue sit on different primaries, two connections with no order between
    // them: the job is added once the bytes are stored (one round trip more).
    if (this.onCluster) await stored;
    await Promise.all([
      stored,
      // Its round in fair order is its priority (fair-queue.ts); a job run without admission goes in the first.
      this.queue.add(this.opts.queueName, envelope, { jobId: envelope.requestId, priority: priorityOfRound(admission?.round ?? 1) }),
    ]);
  }

  /** Reads a finished job's stored outcome, if any (used after a timeout to settle billing races). */
  lastLook<R>(jobId: string, tenant?: string): Promise<JobOutcome<R> | null> {
    return this.bus.lastLook<R>(jobId, tenant);
  }

  async close(): Promise<void> {
    await this.bus.close();
    await this.queue.close();
    await closeRedis(this.queueRedis);
  }
}
