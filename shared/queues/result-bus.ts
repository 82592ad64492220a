// Owns result delivery to API processes: one pub/sub subscriber per process and a map of waiters
// (STYLE.md item 3: never job.waitUntilFinished, which adds a listener per waiter).
import type { Redis } from 'ioredis';
import type { Logger } from '../logger';
import type { JobOutcome } from './contracts';
import type { QueueKeys } from './keys';

type Resolve = (outcome: JobOutcome | null) => void;

export interface PendingResult<R> {
  /** Resolves with the outcome, or null when timeoutMs passes first. */
  wait(timeoutMs: number): Promise<JobOutcome<R> | null>;
}

export class ResultBus {
  private readonly waiters = new Map<string, Resolve>();

  constructor(
    private readonly subscriber: Redis,
    private readonly channel: string,
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.deliver(message);
    });
    await this.subscriber.subscribe(this.channel);
  }

  /** Registers interest before the job is enqueued, so a fast worker cannot beat the waiter. */
  expect<R>(jobId: string): PendingResult<R> {
    let resolveFn!: Resolve;
    const arrived = new Promise<JobOutcome | null>((resolve) => (resolveFn = resolve));
    this.waiters.set(jobId, resolveFn);
    return {
      wait: (timeoutMs) => {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
        return Promise.race([arrived, timedOut]).finally(() => {
          clearTimeout(timer);
          this.waiters.delete(jobId);
        }) as Promise<JobOutcome<R> | null>;
      },
    };
  }

  forget(jobId: string): void {
    this.waiters.get(jobId)?.(null);
    this.waiters.delete(jobId);
  }

  /** One GET of the stored outcome: covers a publish lost while the subscriber reconnected. */
  async lastLook<R>(jobId: string): Promise<JobOutcome<R> | null> {
    try {
      const raw = await this.redis.get(this.keys.result(jobId));
      return raw ? (JSON.parse(raw) as JobOutcome<R>) : null;
    } catch {
      return null;
    }
  }

  get pending(): number {
    return this.waiters.size;
  }

  private deliver(message: string): void {
    let parsed: { jobId: string; outcome: JobOutcome };
    try {
      parsed = JSON.parse(message);
    } catch (err) {
      this.log.warn({ err }, 'unreadable message on the result bus');
      return;
    }
    const resolve = this.waiters.get(parsed.jobId);
    if (!resolve) return; // the waiter already gave up; the stored result remains for its last look
    this.waiters.delete(parsed.jobId);
    resolve(parsed.outcome);
  }

  async close(): Promise<void> {
    for (const resolve of this.waiters.values()) resolve(null);
    this.waiters.clear();
    await this.subscriber.unsubscribe(this.channel).catch(() => undefined);
  }
}
