// Owns the try-it pages' allowance: a short-burst throttle per account and service (a person clicking, not a script)
// and a counter per account, service and UTC month, capped at a tenth of the plan's monthly calls
// (docs/console.md, "Try it" pages). Try-it calls use no credit; this cap is what bounds them.
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '../../../shared/errors';
import type { AccountService } from '../../../shared/accounts/account-service';
import { monthOf, nextMonthStart, type Clock } from '../../../shared/billing/month';
import { Throttle } from '../../http/throttle';
import { SessionRequiredError } from '../http';

/**
 * Free try-it calls per account, per service and UTC month: a tenth of the plan's monthly calls, between 5
 * and 100 (docs/console.md, "Try it" pages). The free plan (50 calls a month) gets 5 tries a month per service, where a
 * daily cap of 50 once gave it ~1,500 (issue 29, finding 5b).
 */
export function tryItMonthlyCap(monthlyLimit: number): number {
  return Math.min(TRY_IT_MAX_PER_MONTH, Math.max(TRY_IT_MIN_PER_MONTH, Math.floor(monthlyLimit * TRY_IT_SHARE_OF_PLAN)));
}
const TRY_IT_SHARE_OF_PLAN = 0.1;
const TRY_IT_MIN_PER_MONTH = 5;
const TRY_IT_MAX_PER_MONTH = 100;
/** Short bursts for a person clicking, not a script: 6 at once, then one every 5 s. */
const TRY_IT_BURST = 6;
const TRY_IT_RATE_PER_SECOND = 0.2;
/** The month's counter outlives the longest month plus a day. */
const MONTH_COUNTER_TTL_SECONDS = 32 * 24 * 3600;

export type TryService = 'emotion' | 'liveness';

export class TryItAllowance {
  private readonly throttle: Throttle;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly accounts: Pick<AccountService, 'current' | 'planView'>,
    private readonly clock: Clock,
  ) {
    this.throttle = new Throttle(redis, prefix, {
      burst: TRY_IT_BURST,
      ratePerSecond: TRY_IT_RATE_PER_SECOND,
      code: 'rate_limited',
      message: 'Too many tries in a row; wait a few seconds',
    });
  }

  private monthKey(service: TryService, customerId: string, now: Date): string {
    return `${this.prefix}:try-it:${service}:${customerId}:${monthOf(now)}`;
  }

  /** The account's try-it cap this month, from its plan in effect. */
  private async capOf(customerId: string): Promise<number> {
    const a = await this.accounts.current(customerId);
    if (!a) throw new SessionRequiredError('This account no longer exists.');
    return tryItMonthlyCap(this.accounts.planView(a).monthlyLimit);
  }

  /** Counts the try against the account's monthly try-it allowance, or refuses it (429 until the next UTC month). */
  async spend(service: TryService, customerId: string): Promise<{ used: number; cap: number }> {
    await this.throttle.take(`try-${service}:${customerId}`);
    const now = this.clock();
    const cap = await this.capOf(customerId);
    const key = this.monthKey(service, customerId, now);
    const [[, used]] = (await this.redis.multi().incr(key).expire(key, MONTH_COUNTER_TTL_SECONDS).exec()) as [[null, number], unknown];
    if (used > cap) {
      const retryAfter = Math.max(1, Math.ceil((nextMonthStart(now).getTime() - now.getTime()) / 1000));
      throw new TooManyRequestsError(
        'try_it_monthly_limit',
        `The ${cap} free tries of this month are used; use the API with your key, or try again next month (the 1st, 00:00 UTC)`,
        retryAfter,
      );
    }
    return { used, cap };
  }

  /** A try whose body turned out empty or not an image is not counted (its throttle token stays spent). */
  async giveBack(service: TryService, customerId: string): Promise<void> {
    await this.redis.decr(this.monthKey(service, customerId, this.clock()));
  }
}
