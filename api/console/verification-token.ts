// Owns e-mail verification links: signed (who, when), valid 24 hours, usable once. The single-use
// marker lives in Redis with a TTL a little longer than the link's life (FerretDB has no TTL indexes).
import type { Redis } from 'ioredis';
import { deriveKey, randomId, signPayload, verifyPayload } from './secrets';

export const VERIFICATION_TTL_MS = 24 * 3600 * 1000;

export type VerificationCheck =
  | { ok: true; customerId: string; email: string; nonce: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'expired' | 'used'; customerId: string; email: string };

interface Payload {
  v: 1;
  cid: string;
  em: string;
  exp: number;
  n: string;
}

export class VerificationTokens {
  private readonly key: Buffer;

  constructor(
    appSecret: string,
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    this.key = deriveKey(appSecret, 'email-verification');
  }

  issue(customerId: string, email: string): string {
    const payload: Payload = { v: 1, cid: customerId, em: email, exp: this.now() + VERIFICATION_TTL_MS, n: randomId(12) };
    return signPayload(this.key, payload);
  }

  private markerKey(nonce: string): string {
    return `${this.prefix}:console:verify-used:${nonce}`;
  }

  /** Reads a token without using it up. Expired and used links still say whose they were (to offer a new one). */
  async check(token: string): Promise<VerificationCheck> {
    const p = verifyPayload<Payload>(this.key, token);
    if (!p || p.v !== 1 || typeof p.cid !== 'string' || typeof p.em !== 'string' || typeof p.n !== 'string' || typeof p.exp !== 'number') {
      return { ok: false, reason: 'invalid' };
    }
    if (p.exp < this.now()) return { ok: false, reason: 'expired', customerId: p.cid, email: p.em };
    if ((await this.redis.exists(this.markerKey(p.n))) === 1) return { ok: false, reason: 'used', customerId: p.cid, email: p.em };
    return { ok: true, customerId: p.cid, email: p.em, nonce: p.n };
  }

  /** Marks the link used; false when another request used it first (SET NX is the atomic step). */
  async consume(nonce: string): Promise<boolean> {
    const ttlMs = VERIFICATION_TTL_MS + 3600 * 1000;
    return (await this.redis.set(this.markerKey(nonce), '1', 'PX', ttlMs, 'NX')) === 'OK';
  }
}
