// Owns whether a marketplace subscription's registration link is used up: an account registered with it, or a claim
// left by a registration whose address already had an account (kept as long as a pending account would hold it).
import type { Redis } from 'ioredis';
import type { AccountService } from '../../../shared/accounts/account-service';

export class SubscriptionClaims {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly accounts: Pick<AccountService, 'getBySubscription'>,
    /** How long a claim lasts: PENDING_ACCOUNT_DAYS. */
    private readonly claimDays: number,
  ) {}

  private key(subscriptionId: string): string {
    return `${this.prefix}:console:subscription-claimed:${subscriptionId}`;
  }

  /** Registered already, or claimed: either way the link is used up, so reopening it cannot tell which. */
  async taken(subscriptionId: string): Promise<boolean> {
    if ((await this.redis.exists(this.key(subscriptionId))) === 1) return true;
    return (await this.accounts.getBySubscription(subscriptionId)) !== null;
  }

  /** Marks the link used by a registration that created no account (the address had one). */
  async claim(subscriptionId: string): Promise<void> {
    await this.redis.set(this.key(subscriptionId), '1', 'EX', this.claimDays * 86_400);
  }
}
