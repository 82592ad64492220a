// Owns result delivery to API processes: one pub/sub subscriber per process and a map of waiters
// (STYLE.md item 3: never job.waitUntilFinished, which adds a listener per waiter). Outcomes crossing Redis
// are parsed with the queue's zod schema; a malformed one becomes an internal_error outcome, never a cast.
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import type { Logger } from '../logger';
import { waitUntilReady } from '../redis';
import type { JobOutcome } from './contracts';
import type { QueueKeys } from './keys';

/** A worker's time per job as it published an outcome (job-runner.ts): on its clock and in its CPU time. */
export interface WorkerCycle {
  ms: number;
  /** null from a worker that does not report it. */
  cpuMs: number | null;
}

type Resolve = (outcome: JobOutcome | null, cycle?: WorkerCycle | null) => void;

export interface PendingResult<R> {
  /** Resolves with the outcome, or null when timeoutMs passes first. */
  wait(timeoutMs: number): Promise<JobOutcome<R> | null>;
  /** The worker's time per job as it published this outcome; null when not given. */
  readonly cycle: WorkerCycle | null;
}

/** What a waiter gets for a stored or published outcome that does not match its queue's schema. */
const MALFORMED: JobOutcome = {
  ok: false,
  error: { code: 'internal_error', message: 'Internal server error', httpStatus: 500 },
  workerMs: 0,
};

export class ResultBus {
  private readonly waiters = new Map<string, Resolve>();

  constructor(
    private readonly subscriber: Redis,
    private readonly channel: string,
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly log: Logger,
    private readonly outcomeSchema: z.ZodType<JobOutcome> | undefined,
  ) {
    if (!outcomeSchema) throw new Error(`no outcome schema for the results on ${channel}`);
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.deliver(message);
    });
    // Subscribed only once the connection is ready: a SUBSCRIBE sent during ioredis' handshake can reach Redis before
    // its ready check's INFO, which Redis then refuses in subscriber mode, and the subscription is lost (ioredis
    // issue #2037; seen in a full test run as a bus that never heard its results). Reconnects resubscribe by themselves.
    await waitUntilReady(this.subscriber);
    await this.subscriber.subscribe(this.channel);
  }

  /**
   * Registers interest before the job is enqueued, so a fast worker's publish cannot arrive before its waiter.
   * Job ids are server-generated UUIDs (api/http/request-context.ts), so an id has one waiter; a second
   * expect() for a waited-on id is a bug and throws instead of silently replacing the first waiter.
   */
  expect<R>(jobId: string): PendingResult<R> {
    if (this.waiters.has(jobId)) throw new Error(`a result for job ${jobId} is already awaited`);
    let resolveFn!: Resolve;
    let cycle: WorkerCycle | null = null;
    const arrived = new Promise<JobOutcome | null>((resolve) => {
      resolveFn = (outcome, c) => {
        cycle = c ?? null;
        resolve(outcome);
      };
    });
    this.waiters.set(jobId, resolveFn);
    return {
      get cycle() {
        return cycle;
      },
      wait: (timeoutMs) => {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
        return Promise.race([arrived, timedOut]).finally(() => {
          clearTimeout(timer);
          if (this.waiters.get(jobId) === resolveFn) this.waiters.delete(jobId);
        }) as Promise<JobOutcome<R> | null>;
      },
    };
  }

  forget(jobId: string): void {
    this.waiters.get(jobId)?.(null);
    this.waiters.delete(jobId);
  }

  /** One GET of the stored outcome (`owner`: the job's tenant, whose partition holds it): covers a publish lost while the subscriber reconnected. */
  async lastLook<R>(jobId: string, owner?: string): Promise<JobOutcome<R> | null> {
    let raw: string | null;
    try {
      raw = await this.redis.get(this.keys.result(jobId, owner));
    } catch {
      return null;
    }
    return raw === null ? null : (this.parse(jobId, raw) as JobOutcome<R>);
  }

  get pending(): number {
    return this.waiters.size;
  }

  /** Parses a stored outcome (JSON text) with the queue's schema. */
  private parse(jobId: string, raw: unknown): JobOutcome {
    let value: unknown = raw;
    try {
      if (typeof raw === 'string') value = JSON.parse(raw);
    } catch (err) {
      this.log.error({ err, jobId }, 'malformed job result: not JSON');
      return MALFORMED;
    }
    const parsed = this.outcomeSchema!.safeParse(value);
    if (parsed.success) return parsed.data;
    this.log.error({ jobId, issues: parsed.error.issues.slice(0, 5) }, 'malformed job result: does not match the queue contract');
    return MALFORMED;
  }

  private deliver(message: string): void {
    let parsed: { jobId?: unknown; outcome?: unknown; cycleMs?: unknown; cycleCpuMs?: unknown };
    try {
      parsed = JSON.parse(message) as { jobId?: unknown; outcome?: unknown };
    } catch (err) {
      this.log.warn({ err }, 'unreadable message on the result bus');
      return;
    }
    if (typeof parsed.jobId !== 'string') {
      this.log.warn('result-bus message without a job id');
      return;
    }
    const resolve = this.waiters.get(parsed.jobId);
    if (!resolve) return; // the waiter already gave up; the stored result remains for its last look
    this.waiters.delete(parsed.jobId);
    const duration = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : null);
    const ms = duration(parsed.cycleMs);
    resolve(this.parse(parsed.jobId, parsed.outcome), ms === null ? null : { ms, cpuMs: duration(parsed.cycleCpuMs) });
  }

  async close(): Promise<void> {
    for (const resolve of this.waiters.values()) resolve(null);
    this.waiters.clear();
    await this.subscriber.unsubscribe(this.channel).catch(() => undefined);
  }
}
