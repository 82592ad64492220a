// Owns Redis connections: one factory per role, so each gets the retry semantics it needs.
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger';

/**
 * producer: API-side commands fail fast while Redis is down (the request answers 503 instead of hanging); no
 * blocking commands (auto-pipelined).
 * worker: BullMQ workers and blocking commands wait for Redis to return (BullMQ requires maxRetriesPerRequest null).
 * subscriber: the result bus's pub/sub connection; reconnects and resubscribes by itself.
 */
export type RedisRole = 'producer' | 'worker' | 'subscriber';

const retryStrategy = (times: number) => Math.min(100 * 2 ** Math.min(times, 5), 2000);

export function createRedis(url: string, role: RedisRole, name?: string): Redis {
  const common: RedisOptions = { retryStrategy, connectionName: name, lazyConnect: false };
  const byRole: Record<RedisRole, RedisOptions> = {
    // Auto-pipelining: the commands of one event-loop tick go out in one write (a burst's requests each make several
    // small ones, and a socket write per command costs the API process CPU it needs for the burst).
    producer: { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, enableAutoPipelining: true },
    worker: { maxRetriesPerRequest: null, enableReadyCheck: true },
    subscriber: { maxRetriesPerRequest: null },
  };
  return new Redis(url, { ...common, ...byRole[role] });
}

export function waitUntilReady(redis: Redis, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
    };
    redis.on('ready', onReady);
  });
}

/** BullMQ loses jobs if Redis evicts keys; say so loudly at start-up when the policy is not noeviction. */
export async function checkEvictionPolicy(redis: Redis, log: Logger): Promise<boolean> {
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    const policy = reply[1];
    if (policy !== 'noeviction') {
      log.error(
        { policy },
        `Redis maxmemory-policy is "${policy}", not "noeviction": queued jobs and results can be evicted. Set maxmemory-policy noeviction.`,
      );
      return false;
    }
    return true;
  } catch (err) {
    log.warn({ err }, 'Could not read Redis maxmemory-policy (CONFIG disabled?); make sure it is noeviction');
    return false;
  }
}

export async function closeRedis(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

/** True for errors that mean "Redis is unreachable" (fail-fast producer connections raise these). */
export function isRedisUnavailable(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === 'MaxRetriesPerRequestError') return true;
  if (e?.code === 'ECONNREFUSED' || e?.code === 'ECONNRESET') return true;
  return /Stream isn't writeable|Connection is closed|enableOfflineQueue/.test(e?.message ?? '');
}
