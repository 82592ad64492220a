// Owns throttles: token buckets in Redis (one atomic Lua call each). Used for the fair-use limit per
// API key or token, and for failed authentications per client address (brute force).
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '../../shared/errors';

// KEYS[1] bucket; ARGV: capacity, refill per ms, now ms, cost (0 = only look). Returns {allowed, retryAfterMs}.
const TOKEN_BUCKET = `
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local b = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = tonumber(b[1]) or cap
local ts = tonumber(b[2]) or now
tokens = math.min(cap, tokens + (now - ts) * rate)
if tokens < 1 then
  return {0, math.ceil((1 - tokens) / rate)}
end
if cost > 0 then
  tokens = tokens - cost
  redis.call('HSET', KEYS[1], 't', tostring(tokens), 'ts', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil(cap / rate) + 1000)
end
return {1, 0}
`;

export interface ThrottleOptions {
  burst: number;
  ratePerSecond: number;
  code: string;
  message: string;
  /** Lower bound of Retry-After (the emotion spec asks clients to come back after 1–2 minutes). */
  minRetryAfterSeconds?: number;
}

export class Throttle {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly opts: ThrottleOptions,
  ) {}

  private async run(subject: string, cost: 0 | 1): Promise<void> {
    const [allowed, waitMs] = (await this.redis.eval(
      TOKEN_BUCKET,
      1,
      `${this.prefix}:throttle:${subject}`,
      this.opts.burst,
      this.opts.ratePerSecond / 1000,
      Date.now(),
      cost,
    )) as [number, number];
    if (allowed === 1) return;
    const retryAfter = Math.max(this.opts.minRetryAfterSeconds ?? 1, Math.ceil(waitMs / 1000));
    throw new TooManyRequestsError(this.opts.code, this.opts.message, retryAfter);
  }

  /** Takes one token for `subject` or throws 429 with Retry-After. */
  take(subject: string): Promise<void> {
    return this.run(subject, 1);
  }

  /** Throws 429 when `subject` has no token left, without spending one. */
  check(subject: string): Promise<void> {
    return this.run(subject, 0);
  }

  /** Spends one token if there is one; never throws (the caller answers as it would anyway). */
  async spend(subject: string): Promise<void> {
    await this.run(subject, 1).catch(() => undefined);
  }
}

/**
 * Failed authentications per client address: while an address has used up its allowance, every attempt
 * from it gets 429 before any key is checked, so a guesser cannot tell a right guess from a wrong one.
 */
export function authFailureThrottle(redis: Redis, prefix: string, burst: number, ratePerSecond: number): Throttle {
  return new Throttle(redis, prefix, {
    burst,
    ratePerSecond,
    code: 'rate_limited',
    message: 'Too many failed authentications from this address; try again later',
  });
}
