// Owns the console's short locks in Redis: one holder per name for a few seconds (two quick submits of one form, two
// token creations of one account), released when the work ends, or by their TTL if the process dies holding one.
import type { Redis } from 'ioredis';

export class ShortLocks {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Runs `work` holding the lock `name`; answers `{ held: false }` without running it while another holder has it. */
  async holding<T>(name: string, ttlSeconds: number, work: () => Promise<T>): Promise<{ held: true; value: T } | { held: false }> {
    const key = `${this.prefix}:console:${name}`;
    if ((await this.redis.set(key, '1', 'EX', ttlSeconds, 'NX')) !== 'OK') return { held: false };
    try {
      return { held: true, value: await work() };
    } finally {
      await this.redis.del(key);
    }
  }
}
