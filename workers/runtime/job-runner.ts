// Owns the worker side of the queue round trip: take the bytes, run the handler before the deadline, settle
// the outcome: store it where the API's late look finds it and publish it to the waiting API process, in one Lua
// script (for a billed job the credit commit and the usage event go in the same script). One job at a time per
// process (CPU-bound inference). A job it takes leaves its tenant's waiting jobs (shared/queues/fair-queue.ts), and
// every job its handler ran, answered or refused (no face, undecodable, too long), reports its cycle to the API's
// admission estimate: refused work took the worker as long and must count the same.
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { AppError, serializeJobError, ServiceUnavailableError } from '../../shared/errors';
import type { Logger } from '../../shared/logger';
import { closeRedis, duplicateRedis } from '../../shared/redis';
import { jobEnvelopeSchema, type JobEnvelope, type JobOutcome } from '../../shared/queues/contracts';
import { RESULT_TTL_MS, resultKeyBeside } from '../../shared/queues/keys';
import { AT_CAPACITY, TenantWaiting } from '../../shared/queues/fair-queue';
import { storeOutcome, type OutcomeReply } from '../../shared/queues/outcome-store';
import type { FaultHook } from './fault-hook';

export interface JobContext<I> {
  envelope: JobEnvelope<I>;
  payload: Buffer;
  log: Logger;
}

/** A queue's processor: returns a small JSON result or throws an AppError for bad input. */
export type JobHandler<I, R> = (ctx: JobContext<I>) => Promise<R>;

export interface SettleContext<I> {
  requestId: string;
  resultKey: string;
  /** Absent when the job's input did not parse. */
  envelope?: JobEnvelope<I>;
  /** Where the stored outcome is published, in the same step (the result bus's message around it). */
  reply: OutcomeReply;
}

/**
 * Stores a job's outcome under its result key in one atomic step (with whatever must happen with it: the credit
 * commit, the usage event), publishes it to `reply` in that step, and returns the stored outcome as JSON. The
 * first stored outcome of a job wins.
 */
export type Settle<I, R> = (outcome: JobOutcome<R>, ctx: SettleContext<I>) => Promise<string>;

export interface JobRunnerOptions<I, R> {
  queueName: string;
  prefix: string;
  /** Worker connection (maxRetriesPerRequest: null). BullMQ duplicates it for blocking reads. */
  connection: Redis;
  parseInput: (raw: unknown) => I;
  handler: JobHandler<I, R>;
  log: Logger;
  /** Default: store the outcome alone (no usage event). */
  settle?: Settle<I, R>;
  /** The test-only fault hook (workers/runtime/fault-hook.ts). */
  fault?: FaultHook;
  /**
   * Called after the outcome is published, for metrics; handlerCpuMs: the process's CPU while the handler ran;
   * evicted: answered unrun because another tenant's job took its place (a capacity shed, not an error).
   */
  onFinished?: (outcome: JobOutcome<R>, envelope: JobEnvelope<I>, handlerCpuMs: number, evicted: boolean) => void;
}

/**
 * A process's first job pays one-off costs (first ONNX runs, JIT; the liveness engine without its warm-up:
 * ~320 ms against ~25 ms after). It sends no cycle time: the API takes its workerMs only until a real sample.
 */
export const WARM_UP_JOBS = 1;

export class JobRunner<I, R> {
  readonly worker: Worker;
  private readonly tenants: TenantWaiting;
  /**
   * When the previous job reached its settle step and how long its settle + publish took, on the clock and in
   * this process's CPU time (cycle time below).
   */
  private previous = { settleAt: 0, publishedAt: 0, settleMs: 0, settleCpuAt: 0, settleCpuMs: 0 };
  private handlersRun = 0;

  /**
   * BullMQ's own connection, a duplicate of `connection`: BullMQ defines its ~50 scripts as commands on the connection
   * it is given, and ioredis copies every one onto each MULTI it builds (the tenant's take below, once per job).
   */
  private readonly bullConnection: Redis;

  constructor(private readonly opts: JobRunnerOptions<I, R>) {
    this.tenants = new TenantWaiting(opts.connection, opts.prefix, opts.queueName);
    this.bullConnection = duplicateRedis(opts.connection, { connectionName: `${opts.connection.options.connectionName ?? 'worker'}-bullmq` });
    this.worker = new Worker(opts.queueName, (job) => this.process(job), {
      connection: this.bullConnection,
      prefix: opts.prefix,
      concurrency: 1,
      autorun: false,
      // A killed worker's job is found by another worker's stalled check (within about lockDuration plus two
      // check intervals); by then its deadline has passed and it is skipped. 15 s keeps that short while a job's
      // longest CPU-bound stretch (a few seconds) still lets the lock renew (every lockDuration / 2).
      lockDuration: 15_000,
      stalledInterval: 15_000,
      maxStalledCount: 1,
    });
    this.worker.on('error', (err) => opts.log.error({ err }, 'worker connection error'));
    // An outage shows on both connections; BullMQ's reports it (above), as it did when it shared this one.
    opts.connection.on('error', () => undefined);
  }

  start(): void {
    void this.worker.run();
  }

  private async process(job: Job): Promise<void> {
    const started = Date.now();
    const startedCpu = processCpuMs();
    const parsed = jobEnvelopeSchema.safeParse(job.data);
    if (!parsed.success) {
      this.opts.log.error({ jobId: job.id, issues: parsed.error.issues }, 'job with a malformed envelope dropped');
      return;
    }
    const raw = parsed.data;
    const log = this.opts.log.child({ requestId: raw.requestId, jobId: job.id });
    const redis = this.opts.connection;
    // Taken: no longer waiting, whatever happens next; unless another tenant's job took its place (fair-queue.ts).
    const taking = raw.tenant
      ? this.tenants.take(raw.tenant, raw.requestId).catch((err: unknown) => {
          log.warn({ err }, 'taken job not uncounted; it leaves at its deadline');
          return { evicted: false };
        })
      : { evicted: false };
    // The bytes are taken in the same round trip (a job that is not run drops them all the same).
    const fetching = redis.getdelBuffer(raw.payloadKey);
    fetching.catch(() => undefined);
    const taken = await taking;
    let outcome: JobOutcome<R>;
    let envelope: JobEnvelope<I> | undefined;
    // The fault hook's steps belong to jobs whose engine ran (a skipped or failed job commits nothing).
    let engineRan = false;
    // Whether the handler ran (answered or refused): the worker's time was spent either way.
    let handlerRan = false;
    let handlerCpuMs = 0;
    try {
      envelope = { ...raw, input: this.opts.parseInput(raw.input) };
      if (taken.evicted) {
        // Its place in the queue went to a tenant with less waiting: answered now, unrun and unbilled, like a refusal at admission.
        await fetching;
        log.info('job skipped: evicted by a tenant with less waiting');
        throw new ServiceUnavailableError(AT_CAPACITY, 2);
      }
      if (Date.now() > raw.deadline) {
        // Nobody waits any more; running it would only waste a slot (and could bill a 503'd request).
        await fetching;
        log.warn({ lateByMs: Date.now() - raw.deadline }, 'job skipped: deadline passed');
        throw new ServiceUnavailableError('deadline passed before a worker was free', 2, 'deadline_exceeded');
      }
      const payload = await fetching;
      if (!payload) throw new ServiceUnavailableError('job input expired before processing', 2, 'input_expired');
      const cpuBefore = processCpuMs();
      handlerRan = true;
      const value = await this.opts.handler({ envelope, payload, log }).finally(() => (handlerCpuMs = processCpuMs() - cpuBefore));
      outcome = { ok: true, value, workerMs: Date.now() - started };
      engineRan = true;
      this.opts.fault?.('after_engine');
    } catch (err) {
      if (!(err instanceof AppError)) log.error({ err }, 'job failed');
      outcome = { ok: false, error: serializeJobError(err), workerMs: Date.now() - started };
    }
    const settleAt = Date.now();
    const settleCpuAt = processCpuMs();
    // No cycle time for a job skipped before its handler (expired, no input: no work done) nor for the first ones
    // (one-off warm-up of the models). A job the handler refused is a full cycle: the work was done.
    const cycle =
      handlerRan && ++this.handlersRun > WARM_UP_JOBS
        ? this.cycle(raw.enqueuedAt, { at: started, cpuAt: startedCpu }, { at: settleAt, cpuAt: settleCpuAt })
        : null;
    // The settle script publishes the stored outcome, not this run's: a re-run after a stall must not contradict
    // what a waiter may have read. The result bus's message is this head, the stored outcome and a closing brace.
    const cycleFields = cycle === null ? '' : `,"cycleMs":${cycle.ms},"cycleCpuMs":${cycle.cpuMs}`;
    const reply: OutcomeReply = { channel: raw.replyTo, head: `{"jobId":${JSON.stringify(raw.requestId)}${cycleFields},"outcome":` };
    const ctx: SettleContext<I> = { requestId: raw.requestId, resultKey: resultKeyBeside(raw.payloadKey, raw.requestId), envelope, reply };
    const settle = this.opts.settle ?? ((o, c) => storeOutcome(redis, c.resultKey, JSON.stringify(o), RESULT_TTL_MS, undefined, c.reply));
    const stored = await settle(outcome, ctx);
    // Commit and publish are one step (the same script), so a crash can no longer fall between them; both fault
    // steps stay, at the same point, so the suite keeps proving each named step.
    if (engineRan) this.opts.fault?.('after_commit');
    const publishedAt = Date.now();
    const publishedCpu = processCpuMs();
    this.previous = { settleAt, publishedAt, settleMs: publishedAt - settleAt, settleCpuAt, settleCpuMs: publishedCpu - settleCpuAt };
    if (engineRan) this.opts.fault?.('after_publish');
    if (envelope) this.opts.onFinished?.(JSON.parse(stored) as JobOutcome<R>, envelope, handlerCpuMs, taken.evicted);
  }

  /**
   * This worker's time per job, for the API's admission estimate: the whole cycle (fetch, payload, engine,
   * settle, publish), measured on this process's clock and in this process's CPU time. When the job was
   * already queued as the previous one was published, the worker went straight on: the cycle is
   * settle-to-settle. Otherwise the worker was idle: the cycle is this job's own time plus the previous settle
   * + publish. Unlike the time between answers seen by the API, it does not grow with the API's own queueing
   * during a burst; the CPU time does not grow either when other processes share the cores.
   */
  private cycle(enqueuedAt: number, start: { at: number; cpuAt: number }, settle: { at: number; cpuAt: number }): { ms: number; cpuMs: number } {
    const p = this.previous;
    const round = (ms: number) => Math.round(ms * 10) / 10;
    if (p.publishedAt > 0 && enqueuedAt <= p.publishedAt) return { ms: settle.at - p.settleAt, cpuMs: round(settle.cpuAt - p.settleCpuAt) };
    return { ms: settle.at - start.at + p.settleMs, cpuMs: round(settle.cpuAt - start.cpuAt + p.settleCpuMs) };
  }

  /** Finishes the current job, takes no new one. */
  async close(): Promise<void> {
    await this.worker.close();
    await closeRedis(this.bullConnection);
  }
}

/** CPU time this process has used (every thread: the engine's, the garbage collector's), in milliseconds. */
function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
