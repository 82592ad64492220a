// Owns the fair-use throttle: a token bucket per caller in Redis (one atomic Lua call per request).
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '../../shared/errors';

// KEYS[1] bucket; ARGV: capacity, refill per ms, now ms. Returns {allowed, retryAfterMs}.
const TOKEN_BUCKET = `
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = tonumber(b[1]) or cap
local ts = tonumber(b[2]) or now
tokens = math.min(cap, tokens + (now - ts) * rate)
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(cap / rate) + 1000)
return {allowed, wait}
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

  /** Takes one token for `subject` or throws 429 with Retry-After. */
  async take(subject: string): Promise<void> {
    const [allowed, waitMs] = (await this.redis.eval(
      TOKEN_BUCKET,
      1,
      `${this.prefix}:throttle:${subject}`,
      this.opts.burst,
      this.opts.ratePerSecond / 1000,
      Date.now(),
    )) as [number, number];
    if (allowed === 1) return;
    const retryAfter = Math.max(this.opts.minRetryAfterSeconds ?? 1, Math.ceil(waitMs / 1000));
    throw new TooManyRequestsError(this.opts.code, this.opts.message, retryAfter);
  }
}
