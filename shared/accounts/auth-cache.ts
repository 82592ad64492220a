// Owns the API-key cache: key digest -> account, in Redis, so authentication costs one Redis round trip
// instead of two database reads. Correct across processes without a stale window for replaced keys:
// regenerating a key writes a tombstone for the old digest that every reader checks in the same MGET,
// so a reader that raced the regeneration cannot resurrect the old key. Account changes (plan, hard cap,
// status) delete the customer's entries; entries also expire after a few seconds as a safety net.
import type { Redis } from 'ioredis';

const TTL_SECONDS = 10;

/** T is what an authentication resolves to (AccountService's AuthenticatedKey), stored as JSON. */
export class AuthCache<T> {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private entry(digest: string): string {
    return `${this.prefix}:auth:${digest}`;
  }

  private tombstone(digest: string): string {
    return `${this.prefix}:auth-revoked:${digest}`;
  }

  /** A cached authentication, 'revoked' for a replaced key, or null (ask the database). */
  async get(digest: string): Promise<T | 'revoked' | null> {
    try {
      const [cached, revoked] = await this.redis.mget(this.entry(digest), this.tombstone(digest));
      if (revoked) return 'revoked';
      return cached ? (JSON.parse(cached) as T) : null;
    } catch {
      return null; // Redis trouble: the database answers instead
    }
  }

  async put(digest: string, auth: T): Promise<void> {
    await this.redis.set(this.entry(digest), JSON.stringify(auth), 'EX', TTL_SECONDS).catch(() => undefined);
  }

  /** The key with this digest was replaced: refuse it everywhere from now on. */
  async revoke(digest: string): Promise<void> {
    await this.redis.set(this.tombstone(digest), '1', 'EX', TTL_SECONDS * 6);
    await this.redis.del(this.entry(digest));
  }

  /** The account behind these digests changed: drop what was cached for it. */
  async forget(digests: string[]): Promise<void> {
    if (digests.length) await this.redis.del(...digests.map((d) => this.entry(d)));
  }
}
