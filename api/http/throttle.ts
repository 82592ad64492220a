// Owns throttles: token buckets in Redis (one atomic Lua call each), whose calls may cost more than one token and
// may leave a debt (work found dear after the fact). Used for the fair-use limit per account (liveness, in calls,
// declared body bytes, the API's parse time and worker time; emotion, in seconds of audio), and for failed
// authentications (brute force) on both front-ends, by one shared guard: a bucket per client address and one per
// presented credential prefix.
import type { Request } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../shared/config';
import { TooManyRequestsError } from '../../shared/errors';
import { sha256Hex } from '../../shared/accounts/secrets';
import { luaScript } from '../../shared/redis-script';
import { partitionPrefix } from '../../shared/redis-partitions';
import type { Logger } from '../../shared/logger';
import { limiterAddress } from './client-address';

const TOKEN_BUCKET = luaScript('throttle-token-bucket-1');

type BucketMode = 'take' | 'look' | 'give' | 'charge';

export interface ThrottleOptions {
  /** Capacity of the bucket, in tokens (a call, or whatever unit the caller's costs are in). */
  burst: number;
  /** Tokens refilled per second. */
  ratePerSecond: number;
  code: string;
  message: string;
  /** Lower bound of Retry-After (the emotion spec asks clients to come back after 1–2 minutes). */
  minRetryAfterSeconds?: number;
  /** Worker time one token pays for (chargeWork); absent: work is not charged. */
  workMsPerToken?: number;
}

/** A subject's token bucket, in the partition of its own name (shared/redis-partitions.ts). */
export function throttleKey(prefix: string, subject: string): string {
  return `${partitionPrefix(prefix, subject)}:throttle:${subject}`;
}

export class Throttle {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly opts: ThrottleOptions,
  ) {}

  private async run(subject: string, cost: number, mode: BucketMode): Promise<void> {
    const [allowed, waitMs] = (await TOKEN_BUCKET.run(
      this.redis,
      [throttleKey(this.prefix, subject)],
      [this.opts.burst, this.opts.ratePerSecond / 1000, Date.now(), cost, mode],
    )) as [number, number];
    if (allowed === 1) return;
    const retryAfter = Math.max(this.opts.minRetryAfterSeconds ?? 1, Math.ceil(waitMs / 1000));
    throw new TooManyRequestsError(this.opts.code, this.opts.message, retryAfter);
  }

  /** Takes `cost` tokens (default one) for `subject`, or throws 429 with Retry-After while fewer are left. */
  take(subject: string, cost = 1): Promise<void> {
    return this.run(subject, cost, 'take');
  }

  /** Throws 429 when `subject` has no token left, without spending one. */
  check(subject: string): Promise<void> {
    return this.run(subject, 1, 'look');
  }

  /** Gives back a token taken for an attempt that turned out fine (never above the burst). */
  async refund(subject: string): Promise<void> {
    await this.run(subject, 1, 'give');
  }

  /** Spends one token if there is one; never throws (the caller answers as it would anyway). */
  async spend(subject: string): Promise<void> {
    await this.run(subject, 1, 'take').catch(() => undefined);
  }

  /**
   * Spends `cost` tokens after the fact, for work that turned out dearer than what was taken up front: the bucket
   * may go below zero (a debt), and the subject's next take waits until the refill has paid it.
   */
  async charge(subject: string, cost: number): Promise<void> {
    if (cost > 0) await this.run(subject, cost, 'charge');
  }

  /**
   * A finished job's worker time beyond what the call's own token paid for (`workMsPerToken`): one more token per
   * started unit above the first, as a debt. Answered or refused, the work was done. It does not hold up the
   * answer: the command leaves now, ahead of the subject's next call on this connection.
   */
  chargeWork(subject: string, workerMs: number, log: Logger): void {
    const extra = workTokens(workerMs, this.opts.workMsPerToken) - 1;
    if (extra > 0) this.charge(subject, extra).catch((err: unknown) => log.warn({ err, extra }, 'work debt not charged'));
  }
}

/** Tokens a job of this worker time costs in all (at least the call's one); one when work is not charged. */
export function workTokens(workerMs: number, workMsPerToken: number | undefined): number {
  if (!workMsPerToken || !Number.isFinite(workerMs)) return 1;
  return Math.max(1, Math.ceil(workerMs / workMsPerToken));
}

/** Visible characters of a credential that key its prefix bucket (what the dashboard shows, `lc_` excluded). */
const PREFIX_CHARS = 6;

/**
 * Prefixes share this many buckets (by hash), so random guesses cannot create a Redis key each: the state
 * stays bounded however many prefixes are tried. Sharing is harmless because the bucket never stops a
 * valid credential.
 */
export const PREFIX_BUCKETS = 256;

/** One credential being verified for one address: the failure taken in advance for it, shared by its callers. */
interface Verification {
  taken: Promise<void>;
  callers: number;
  givenBack: boolean;
}

/** How an authentication attempt ended: the credential was right, wrong, or never decided (store down, deadline). */
export type AuthOutcome = 'right' | 'wrong' | 'undecided';

/**
 * Failed authentications, the same on both front-ends. Two buckets:
 * - per client address (`req.ip`, right behind a proxy only with TRUST_PROXY set; IPv6 by its /64, see
 *   client-address.ts). Whether the address is blocked is a read, made before any credential is looked at,
 *   so an address that used up its allowance gets 429 for every attempt and a guesser cannot tell a right
 *   guess from a wrong one. Only failures spend it: a valid credential never does (see Attempt).
 * - per presented credential prefix, all addresses together: a guess spread over many addresses. It is
 *   spent and consulted only when a credential fails, so it turns further wrong guesses under that prefix
 *   into 429 but never stops a valid credential: one client cannot lock another customer out through it.
 *
 * Concurrent guesses stay bounded without counting valid calls: a credential that has to be verified against
 * the database (not decided from the authentication cache) takes one failure in advance, before the read, and
 * gets it back if it was right. Callers from one address presenting the same credential at once share that one
 * advance (one guess, one read), so a burst of a valid key from one backend spends nothing that lasts, while
 * distinct guesses in flight from one address never exceed the failures it has left. A credential decided
 * without the database (malformed, or cached as revoked) cannot be right, so it spends after the fact.
 */
export class AuthFailureGuard {
  private readonly verifying = new Map<string, Verification>();

  constructor(
    private readonly byAddress: Throttle,
    private readonly byPrefix: Throttle,
  ) {}

  /** Hashed into PREFIX_BUCKETS, so the bucket names carry no part of a secret and their number is bounded. */
  private static prefixKey(credential: string): string {
    const visible = credential.startsWith('lc_') ? credential.slice(3, 3 + PREFIX_CHARS) : credential.slice(0, PREFIX_CHARS);
    return `auth-fail:prefix:${parseInt(sha256Hex(visible).slice(0, 8), 16) % PREFIX_BUCKETS}`;
  }

  /** One request's authentication; end it with finish() whatever happens. */
  attempt(req: Request, credential: string | undefined): AuthAttempt {
    return new AuthAttempt(this, req, `auth-fail:ip:${limiterAddress(req)}`, credential);
  }

  /** @internal (AuthAttempt) */
  check(addressKey: string): Promise<void> {
    return this.byAddress.check(addressKey);
  }

  /** @internal (AuthAttempt): joins the verification of this credential from this address, or starts it. */
  join(addressKey: string, credential: string): { id: string; verification: Verification } {
    const id = `${addressKey}:${sha256Hex(credential)}`;
    let verification = this.verifying.get(id);
    if (!verification) {
      verification = { taken: this.byAddress.take(addressKey), callers: 0, givenBack: false };
      this.verifying.set(id, verification);
    }
    verification.callers++;
    return { id, verification };
  }

  /** @internal (AuthAttempt) */
  leave(id: string, verification: Verification, outcome: AuthOutcome, addressKey: string): Promise<void> | undefined {
    if (--verification.callers === 0 && this.verifying.get(id) === verification) this.verifying.delete(id);
    if (outcome !== 'right' || verification.givenBack) return undefined;
    verification.givenBack = true;
    return verification.taken.then(() => this.byAddress.refund(addressKey)).catch(() => undefined);
  }

  /** @internal (AuthAttempt): a wrong credential, counted against the address (unless its advance already was) and its prefix. */
  async failed(addressKey: string, credential: string | undefined, advanced: boolean): Promise<void> {
    if (!advanced) await this.byAddress.spend(addressKey);
    if (credential) await this.byPrefix.take(AuthFailureGuard.prefixKey(credential));
  }
}

/** One request's way through the failed-authentication guard. */
class AuthAttempt {
  private joined: { id: string; verification: Verification } | null = null;

  constructor(
    private readonly guard: AuthFailureGuard,
    private readonly req: Request,
    private readonly addressKey: string,
    private readonly credential: string | undefined,
  ) {}

  /** 429 when this address has no failures left; a read, nothing is spent. */
  blocked(): Promise<void> {
    return this.guard.check(this.addressKey);
  }

  /**
   * Call right before the credential is verified against the database: takes one failure in advance (429 when
   * none is left), shared with the other callers presenting the same credential from this address now.
   */
  beforeDatabase(): Promise<void> {
    if (!this.credential) return Promise.resolve();
    this.joined ??= this.guard.join(this.addressKey, this.credential);
    return this.joined.verification.taken;
  }

  /**
   * Ends the attempt. Right: a failure taken in advance is given back, without holding up the request (a refusal
   * from Redis is logged). Wrong: counted (429 once the prefix's allowance is used up). Undecided: an advance stays
   * spent, as the guess may have been checked.
   */
  async finish(outcome: AuthOutcome): Promise<void> {
    const joined = this.joined;
    this.joined = null;
    const givingBack = joined && this.guard.leave(joined.id, joined.verification, outcome, this.addressKey);
    givingBack?.catch((err: unknown) => this.req.log.warn({ err }, 'failed-authentication allowance not given back'));
    if (outcome === 'wrong') await this.guard.failed(this.addressKey, this.credential, joined !== null);
  }
}

export function authFailureGuard(redis: Redis, config: Config): AuthFailureGuard {
  const message = 'Too many failed authentications; try again later';
  return new AuthFailureGuard(
    new Throttle(redis, config.QUEUE_PREFIX, {
      burst: config.AUTH_FAILURE_BURST,
      ratePerSecond: config.AUTH_FAILURE_RATE_PER_SEC,
      code: 'rate_limited',
      message,
    }),
    new Throttle(redis, config.QUEUE_PREFIX, {
      burst: config.AUTH_PREFIX_FAILURE_BURST,
      ratePerSecond: config.AUTH_PREFIX_FAILURE_RATE_PER_SEC,
      code: 'rate_limited',
      message,
    }),
  );
}
