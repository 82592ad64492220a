// Owns the request deadline: one instant per request after which nothing more is worth doing. Every
// awaited step of a request (authentication, idempotency, reservation, database, queue) takes the
// remaining time as its own bound, so an answer — 503 with Retry-After at worst — never comes later
// than the budget plus the time to write it.
import { ServiceUnavailableError } from './errors';

/** Seconds a caller is asked to wait after a request ran out of its budget. */
const DEADLINE_RETRY_AFTER_SECONDS = 2;

export class DeadlineExceededError extends ServiceUnavailableError {
  constructor(readonly step: string) {
    super(`No answer within the time budget (${step}); try again shortly`, DEADLINE_RETRY_AFTER_SECONDS);
  }
}

export class Deadline {
  /** Epoch milliseconds, always an integer. */
  private constructor(readonly at: number) {}

  static after(budgetMs: number, now = Date.now()): Deadline {
    return new Deadline(Math.ceil(now + budgetMs));
  }

  /** The same deadline moved later by `ms` (time the server spent waiting on the client, e.g. its upload). */
  extendedBy(ms: number): Deadline {
    return new Deadline(this.at + Math.max(0, Math.ceil(ms)));
  }

  /** Whole milliseconds left, never negative (Redis expiries and job envelopes take integers). */
  remainingMs(now = Date.now()): number {
    return Math.max(0, Math.floor(this.at - now));
  }

  /** Throws DeadlineExceededError when nothing is left. */
  check(step: string): void {
    if (this.remainingMs() <= 0) throw new DeadlineExceededError(step);
  }

  /** An AbortSignal that fires when the deadline passes (for fetch and other abortable calls). */
  signal(): AbortSignal {
    return AbortSignal.timeout(Math.max(1, this.remainingMs()));
  }

  /**
   * Settles with `work`, or rejects with DeadlineExceededError when the deadline comes first. The work
   * itself goes on (a database call cannot be recalled); its late result or error is ignored.
   */
  race<T>(step: string, work: Promise<T>): Promise<T> {
    const left = this.remainingMs();
    if (left <= 0) {
      work.catch(() => undefined);
      return Promise.reject(new DeadlineExceededError(step));
    }
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlineExceededError(step)), left);
    });
    work.catch(() => undefined);
    return Promise.race([work, expired]).finally(() => clearTimeout(timer));
  }
}
