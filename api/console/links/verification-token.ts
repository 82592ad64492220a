// Owns e-mail verification links: signed (who, when), valid 24 hours, usable once. The single-use
// marker lives in Redis with a TTL a little longer than the link's life (FerretDB has no TTL indexes).
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { randomId } from '../secrets';
import { SignedToken, SingleUse } from './signed-token';

export const VERIFICATION_TTL_MS = 24 * 3600 * 1000;

export type VerificationCheck =
  | { ok: true; customerId: string; email: string; nonce: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'expired' | 'used'; customerId: string; email: string };

const claims = z.object({ cid: z.string(), em: z.string(), n: z.string() });

export class VerificationTokens {
  private readonly tokens: SignedToken<typeof claims>;
  private readonly usedOnce: SingleUse;

  constructor(appSecret: string, redis: Redis, prefix: string, now: () => number = Date.now) {
    this.tokens = new SignedToken(appSecret, 'email-verification', claims, VERIFICATION_TTL_MS, now);
    this.usedOnce = new SingleUse(redis, `${prefix}:console:verify-used`, VERIFICATION_TTL_MS + 3600 * 1000);
  }

  issue(customerId: string, email: string): string {
    return this.tokens.sign({ cid: customerId, em: email, n: randomId(12) });
  }

  /** Reads a token without using it up. Expired and used links still say whose they were (to offer a new one). */
  async check(token: string): Promise<VerificationCheck> {
    const read = this.tokens.read(token);
    if (!read.ok && read.reason === 'invalid') return read;
    const { cid, em, n } = read.claims;
    if (!read.ok) return { ok: false, reason: 'expired', customerId: cid, email: em };
    if (await this.usedOnce.used(n)) return { ok: false, reason: 'used', customerId: cid, email: em };
    return { ok: true, customerId: cid, email: em, nonce: n };
  }

  /** Marks the link used; false when another request used it first. */
  async consume(nonce: string): Promise<boolean> {
    return this.usedOnce.consume(nonce);
  }
}
