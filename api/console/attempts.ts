// Owns rate limits and lockouts for guessable secrets (passwords, TOTP codes, verification links):
// failures are counted in Redis per subject within a window; past the limit the subject is locked
// until the window ends, whether or not the next guess is right.
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '../../shared/errors';

export interface AttemptRule {
  /** Short name in keys and messages: 'sign-in', 'totp', … */
  name: string;
  maxFailures: number;
  windowMs: number;
  message: string;
}

export const RULES = {
  /** Per account (e-mail): five wrong passwords lock it for 15 minutes. */
  signInAccount: {
    name: 'sign-in-account',
    maxFailures: 5,
    windowMs: 15 * 60_000,
    message: 'Too many failed sign-in attempts for this account. Try again in a few minutes.',
  },
  /** Per client address: slows password spraying across many accounts. */
  signInAddress: {
    name: 'sign-in-ip',
    maxFailures: 30,
    windowMs: 15 * 60_000,
    message: 'Too many failed sign-in attempts from your network. Try again later.',
  },
  /** Per account: 10^6 codes and five guesses per quarter hour. */
  totp: { name: 'totp', maxFailures: 5, windowMs: 15 * 60_000, message: 'Too many wrong codes. Two-factor sign-in is locked for a few minutes.' },
  /** Per client address: invalid or expired verification links opened. */
  verifyLink: { name: 'verify-link', maxFailures: 20, windowMs: 15 * 60_000, message: 'Too many invalid verification links. Try again later.' },
  /** Per e-mail address: new verification links asked for (each one is sent, so count every request). */
  verifyResend: {
    name: 'verify-resend',
    maxFailures: 3,
    windowMs: 60 * 60_000,
    message: 'We already sent several links to this address. Check your inbox or try again in an hour.',
  },
  /** Per e-mail address: password reset links asked for (counted whether or not the address exists). */
  resetByAddress: {
    name: 'reset-address',
    maxFailures: 3,
    windowMs: 60 * 60_000,
    message: 'We already sent several reset links to this address. Check your inbox or try again in an hour.',
  },
  /** Per client address: password reset requests (slows probing many addresses). */
  resetByIp: { name: 'reset-ip', maxFailures: 20, windowMs: 60 * 60_000, message: 'Too many password reset requests from your network. Try again later.' },
  /** Per account: wrong current passwords on the change-password form. */
  passwordChange: { name: 'password-change', maxFailures: 5, windowMs: 15 * 60_000, message: 'Too many wrong passwords. Try again in a few minutes.' },
} satisfies Record<string, AttemptRule>;

export class AttemptLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(rule: AttemptRule, subject: string): string {
    return `${this.prefix}:console:attempts:${rule.name}:${subject.toLowerCase()}`;
  }

  /** Throws 429 (with Retry-After) while the subject is locked. */
  async assertOpen(rule: AttemptRule, subject: string): Promise<void> {
    const key = this.key(rule, subject);
    const count = Number((await this.redis.get(key)) ?? '0');
    if (count < rule.maxFailures) return;
    const ttl = await this.redis.pttl(key);
    throw new TooManyRequestsError('too_many_attempts', rule.message, Math.max(1, Math.ceil(ttl / 1000)));
  }

  /** Counts one failure; the window starts at the first failure (fixed window, not sliding). */
  async fail(rule: AttemptRule, subject: string): Promise<number> {
    const key = this.key(rule, subject);
    const results = await this.redis.multi().incr(key).pexpire(key, rule.windowMs, 'NX').exec();
    return Number(results?.[0]?.[1] ?? 0);
  }

  async reset(rule: AttemptRule, subject: string): Promise<void> {
    await this.redis.del(this.key(rule, subject));
  }
}
