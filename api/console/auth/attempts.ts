// Owns rate limits and lockouts for guessable secrets (passwords, TOTP codes, verification links) and for
// mail the console sends: attempts are counted in Redis per subject within a window; past the limit the
// subject is locked until the window ends, whether or not the next guess is right.
//
// An attempt is TAKEN (counted) before the secret is checked, in one atomic step with the limit check, and
// given back when it turns out right: N concurrent guesses can never all pass a check made before any of
// them was counted. Subjects are hashed into fixed-size keys, so a long or made-up subject (an e-mail
// address typed by an anonymous visitor) costs Redis the same few bytes as any other. Rules per client
// address count IPv6 by its /64 (../http/client-address.ts), so one subscriber's block is one subject.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '../../../shared/errors';
import { luaScript } from '../../../shared/redis-script';
import { addressBlock } from '../../http/client-address';

export interface AttemptRule {
  /** Short name in keys and messages: 'sign-in', 'totp', … */
  name: string;
  maxFailures: number;
  windowMs: number;
  message: string;
  /** The subject is a client address: counted by addressBlock (IPv6 by its /64, IPv4-mapped as IPv4). */
  byAddress?: true;
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
    byAddress: true,
    maxFailures: 30,
    windowMs: 15 * 60_000,
    message: 'Too many failed sign-in attempts from your network. Try again later.',
  },
  /** Per account: 10^6 codes and five guesses per quarter hour. */
  totp: { name: 'totp', maxFailures: 5, windowMs: 15 * 60_000, message: 'Too many wrong codes. Two-factor sign-in is locked for a few minutes.' },
  /** Per client address: invalid or expired verification links opened. */
  verifyLink: {
    name: 'verify-link',
    byAddress: true,
    maxFailures: 20,
    windowMs: 15 * 60_000,
    message: 'Too many invalid verification links. Try again later.',
  },
  /** Per client address: verification links asked for (bounds what one address can make the console mail and count). */
  verifyResendByIp: {
    name: 'verify-resend-ip',
    byAddress: true,
    maxFailures: 20,
    windowMs: 60 * 60_000,
    message: 'Too many verification e-mails asked for from your network. Try again later.',
  },
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
  resetByIp: {
    name: 'reset-ip',
    byAddress: true,
    maxFailures: 20,
    windowMs: 60 * 60_000,
    message: 'Too many password reset requests from your network. Try again later.',
  },
  /**
   * Per account: settings changes (usage alerts, the hard cap), every POST counted: each one writes the account
   * and, when it changes something, an audit entry; far more than a person toggles, far less than a script.
   */
  settingsChange: {
    name: 'settings-change',
    maxFailures: 20,
    windowMs: 15 * 60_000,
    message: 'Too many settings changes in a short time. Try again in a few minutes.',
  },
  /** Per account: wrong current passwords on the change-password form. */
  passwordChange: { name: 'password-change', maxFailures: 5, windowMs: 15 * 60_000, message: 'Too many wrong passwords. Try again in a few minutes.' },
} satisfies Record<string, AttemptRule>;

const TAKE = luaScript('attempts-take-1');

const GIVE_BACK = luaScript('attempts-give-back-1');

export class AttemptLimiter {
  /** `scope`: the part of the Redis keys naming who counts (the console; the marketplace route). */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly scope: 'console' | 'marketplace' = 'console',
  ) {}

  private key(rule: AttemptRule, subject: string): string {
    const counted = rule.byAddress ? addressBlock(subject) : subject;
    const digest = createHash('sha256').update(counted.toLowerCase()).digest('base64url').slice(0, 22);
    return `${this.prefix}:${this.scope}:attempts:${rule.name}:${digest}`;
  }

  /**
   * Counts one attempt before it is made; throws 429 (with Retry-After) when it is past the rule's allowance.
   * Returns the attempts used in this window, this one included. Give it back with `succeeded` when the
   * secret was right (for rules that count failures); a wrong one stays counted.
   */
  async take(rule: AttemptRule, subject: string): Promise<number> {
    const [count, ttl] = (await TAKE.run(this.redis, [this.key(rule, subject)], [rule.windowMs])) as [number, number];
    if (count <= rule.maxFailures) return count;
    throw new TooManyRequestsError('too_many_attempts', rule.message, Math.max(1, Math.ceil(ttl / 1000)));
  }

  /**
   * Takes one attempt from each (rule, subject) in order, e.g. per client address, then per account. When one
   * refuses, those already taken are given back (the request does no work) and its 429 is thrown.
   */
  async takeAll(limits: ReadonlyArray<readonly [AttemptRule, string]>): Promise<void> {
    const taken: Array<readonly [AttemptRule, string]> = [];
    try {
      for (const [rule, subject] of limits) {
        await this.take(rule, subject);
        taken.push([rule, subject]);
      }
    } catch (err) {
      await Promise.all(taken.map(([rule, subject]) => this.succeeded(rule, subject)));
      throw err;
    }
  }

  /** Gives back the attempt `take` counted: the guess was right (failures before it stay counted). */
  async succeeded(rule: AttemptRule, subject: string): Promise<void> {
    await GIVE_BACK.run(this.redis, [this.key(rule, subject)]);
  }

  /** Forgets every counted attempt (a right password clears the account's earlier failures). */
  async reset(rule: AttemptRule, subject: string): Promise<void> {
    await this.redis.del(this.key(rule, subject));
  }
}
