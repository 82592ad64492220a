// Owns the API-key cache: key digest -> the few account fields authentication needs, in Redis, so a known key costs
// one Redis round trip and no database read (credentials and contact data are never cached). Changes through
// AccountService or ApiKeyService invalidate at once, and a per-digest generation keeps a lookup that read before a
// change from re-caching what it read; a replaced key also gets a 'revoked' mark. An edit that bypasses the services
// is seen within ENTRY_TTL_SECONDS. The decision: docs/security.md, "API-key cache".
import type { Redis } from 'ioredis';
import { luaScript } from '../redis-script';
import { partitionPrefix } from '../redis-partitions';

/** Lifetime of a cached authentication: the staleness bound for database edits that bypass the account services. */
export const ENTRY_TTL_SECONDS = 300;
/** Generation and revocation marks outlive every entry written before them and every lookup in flight. */
const MARK_TTL_SECONDS = ENTRY_TTL_SECONDS * 2;

const PUT_IF_CURRENT = luaScript('auth-cache-put-if-current-3');

const FORGET = luaScript('auth-cache-forget-2');

/** What a cache read found: the entry (or null) and the generation a later put must still match. */
export type CacheLookup<T> = { kind: 'revoked' } | { kind: 'hit'; value: T } | { kind: 'miss'; generation: string | null };

/** T is what an authentication resolves to (api-keys.ts's AuthenticatedKey), stored as JSON. */
export class AuthCache<T> {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private entry(digest: string): string {
    return `${partitionPrefix(this.prefix, digest)}:auth:${digest}`;
  }

  private revokedMark(digest: string): string {
    return `${partitionPrefix(this.prefix, digest)}:auth-revoked:${digest}`;
  }

  private generation(digest: string): string {
    return `${partitionPrefix(this.prefix, digest)}:auth-gen:${digest}`;
  }

  /** A cached authentication, 'revoked' for a replaced key, or a miss with the generation to put under. */
  async get(digest: string): Promise<CacheLookup<T>> {
    let found: Array<string | null>;
    try {
      found = await this.redis.mget(this.entry(digest), this.revokedMark(digest), this.generation(digest));
    } catch {
      return { kind: 'miss', generation: null }; // Redis trouble: the database answers, nothing is cached
    }
    const [cached, revoked, generation] = found;
    if (revoked) return { kind: 'revoked' };
    if (cached) return { kind: 'hit', value: JSON.parse(cached) as T };
    return { kind: 'miss', generation: generation ?? '' };
  }

  /** Caches `auth` unless the key was revoked or its account changed since `generation` was read. */
  async put(digest: string, generation: string | null, auth: T): Promise<boolean> {
    if (generation === null) return false;
    const written = await PUT_IF_CURRENT.run(
      this.redis,
      [this.entry(digest), this.revokedMark(digest), this.generation(digest)],
      [generation, JSON.stringify(auth), ENTRY_TTL_SECONDS],
    ).catch(() => 0);
    return written === 1;
  }

  /** The key with this digest was replaced: refuse it everywhere from now on. */
  async revoke(digest: string): Promise<void> {
    await this.redis.set(this.revokedMark(digest), '1', 'EX', MARK_TTL_SECONDS);
    await FORGET.run(this.redis, [this.generation(digest), this.entry(digest)], [MARK_TTL_SECONDS]);
  }

  /** The account behind these digests changed: drop what was cached, and refuse re-caches of older reads. */
  async forget(digests: string[]): Promise<void> {
    await Promise.all(digests.map((d) => FORGET.run(this.redis, [this.generation(d), this.entry(d)], [MARK_TTL_SECONDS])));
  }
}
