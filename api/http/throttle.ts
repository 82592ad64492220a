// Owns throttles: token buckets in Redis (one atomic Lua call each), whose calls may cost more than one token and
// may leave a debt (work found dear after the fact). Used for the fair-use limit per API key (liveness, in calls
// plus worker time) or per emotion account (in seconds of audio), and for failed authentications (brute force) on both front-ends, by one shared
// guard: a bucket per client address and one per presented credential prefix.
import type { Request } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../shared/config';
import { TooManyRequestsError } from '../../shared/errors';
import { sha256Hex } from '../../shared/accounts/secrets';
import { LuaScript } from '../../shared/redis-script';
import type { Logger } from '../../shared/logger';

// KEYS[1] bucket; ARGV: capacity, refill per ms, now ms, cost, mode: 'take' (refused while fewer than `cost` tokens,
// at least one, are left), 'look' (the same test, nothing spent), 'give' (cost back, never above capacity), 'charge'
// (cost spent whatever is left: the bucket may go below zero, a debt the refill pays before the next take). The
// key lives until the bucket is full again, so a debt is never forgiven by expiry. Returns {allowed, retryAfterMs}.
const TOKEN_BUCKET = new LuaScript(`
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local mode = ARGV[5]
local b = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = tonumber(b[1]) or cap
local ts = tonumber(b[2]) or now
tokens = math.min(cap, tokens + (now - ts) * rate)
if mode == 'give' then
  tokens = math.min(cap, tokens + cost)
elseif mode == 'charge' then
  tokens = tokens - cost
else
  local need = math.max(1, cost)
  if tokens < need then
    return {0, math.ceil((need - tokens) / rate)}
  end
  if mode == 'look' then return {1, 0} end
  tokens = tokens - cost
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) / rate) + 1000)
return {1, 0}
`);

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

export class Throttle {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly opts: ThrottleOptions,
  ) {}

  private async run(subject: string, cost: number, mode: BucketMode): Promise<void> {
    const [allowed, waitMs] = (await TOKEN_BUCKET.run(
      this.redis,
      [`${this.prefix}:throttle:${subject}`],
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

/**
 * Failed authentications, the same on both front-ends. Two buckets:
 * - per client address (`req.ip`, right behind a proxy only with TRUST_PROXY set): checked before any
 *   credential is, so an address that used up its allowance gets 429 for every attempt and a guesser
 *   cannot tell a right guess from a wrong one. Only that address (and whoever shares it) is slowed.
 * - per presented credential prefix, all addresses together: a guess spread over many addresses. It is
 *   spent and consulted only when a credential fails, so it turns further wrong guesses under that prefix
 *   into 429 but never stops a valid credential: one client cannot lock another customer out through it.
 */
export class AuthFailureGuard {
  constructor(
    private readonly byAddress: Throttle,
    private readonly byPrefix: Throttle,
  ) {}

  private static addressKey(req: Request): string {
    return `auth-fail:ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
  }

  /** Hashed into PREFIX_BUCKETS, so the bucket names carry no part of a secret and their number is bounded. */
  private static prefixKey(credential: string): string {
    const visible = credential.startsWith('lc_') ? credential.slice(3, 3 + PREFIX_CHARS) : credential.slice(0, PREFIX_CHARS);
    return `auth-fail:prefix:${parseInt(sha256Hex(visible).slice(0, 8), 16) % PREFIX_BUCKETS}`;
  }

  /**
   * 429 when this client address has no failures left, before the credential is looked at. Takes one
   * failure in advance, so concurrent guesses cannot all pass a look-only check; succeeded() gives it back.
   */
  async before(req: Request): Promise<void> {
    await this.byAddress.take(AuthFailureGuard.addressKey(req));
  }

  /**
   * The credential was right: the failure taken in advance by before() is given back, without holding up the
   * request (the command leaves now, ahead of this request's next ones and of any later check on the same
   * connection); a refusal from Redis is logged.
   */
  succeeded(req: Request): void {
    this.byAddress.refund(AuthFailureGuard.addressKey(req)).catch((err: unknown) => req.log.warn({ err }, 'failed-authentication allowance not given back'));
  }

  /** The credential was wrong (already counted against the address); counts it against the prefix, 429 once that is used up. */
  async failed(_req: Request, credential: string | undefined): Promise<void> {
    if (credential) await this.byPrefix.take(AuthFailureGuard.prefixKey(credential));
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
