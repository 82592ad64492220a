// Owns the console's signed links: one class for every HMAC token (registration, e-mail verification,
// password reset). A token is `<base64url(JSON)>.<base64url(HMAC-SHA256)>` under a key derived for its
// purpose (secrets.ts), carrying `v: 1`, the purpose's claims (checked by a zod schema) and `exp`.
// The wire format is the one these links always had, so links issued before this class still verify.
// Single-use links add a Redis SET NX marker (FerretDB has no TTL indexes) that outlives the link.
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { deriveKey, type KeyPurpose, signPayload, verifyPayload } from '../secrets';

/** What a link says once its signature and shape are good; `expired` still carries the claims (whose it was). */
export type SignedTokenRead<C> = { ok: true; claims: C } | { ok: false; reason: 'invalid' } | { ok: false; reason: 'expired'; claims: C };

export class SignedToken<S extends z.ZodObject> {
  private readonly key: Buffer;
  private readonly payload: z.ZodObject;

  constructor(
    appSecret: string,
    purpose: KeyPurpose,
    /** The purpose's own claims; `v` and `exp` are added here. */
    private readonly claims: S,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.key = deriveKey(appSecret, purpose);
    this.payload = claims.extend({ v: z.literal(1), exp: z.number() });
  }

  sign(claims: z.infer<S>, ttlMs = this.ttlMs): string {
    return signPayload(this.key, { v: 1, ...claims, exp: this.now() + ttlMs });
  }

  read(token: string): SignedTokenRead<z.infer<S>> {
    const parsed = this.payload.safeParse(verifyPayload<unknown>(this.key, token));
    if (!parsed.success) return { ok: false, reason: 'invalid' };
    const claims = this.claims.parse(parsed.data);
    return (parsed.data.exp as number) < this.now() ? { ok: false, reason: 'expired', claims } : { ok: true, claims };
  }
}

/** The "used" marker of a single-use link, keyed by the link's nonce. */
export class SingleUse {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    /** How long the marker outlives issue: at least the link's life. */
    private readonly markerTtlMs: number,
  ) {}

  async used(nonce: string): Promise<boolean> {
    return (await this.redis.exists(`${this.keyPrefix}:${nonce}`)) === 1;
  }

  /** Marks the link used; false when another request used it first (SET NX is the atomic step). */
  async consume(nonce: string): Promise<boolean> {
    return (await this.redis.set(`${this.keyPrefix}:${nonce}`, '1', 'PX', this.markerTtlMs, 'NX')) === 'OK';
  }
}
