// Owns "forgot password" links: signed (who, until when, which password), valid 1 hour, usable once.
// A link names a fingerprint of the password it replaces, so a reset (or change) voids every older
// link; the single-use marker is a Redis SET NX, like verification links.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { deriveKey, randomId, signPayload, verifyPayload } from './secrets';

export const PASSWORD_RESET_TTL_MS = 3600 * 1000;

interface Payload {
  v: 1;
  cid: string;
  exp: number;
  n: string;
  /** Fingerprint of the password hash the link replaces. */
  pw: string;
}

export type ResetCheck = { ok: true; customerId: string; nonce: string } | { ok: false; reason: 'invalid' | 'expired' | 'used' };

export function passwordFingerprint(passwordHash: string | null | undefined): string {
  return crypto
    .createHash('sha256')
    .update(passwordHash ?? '')
    .digest('base64url')
    .slice(0, 16);
}

export class PasswordResetTokens {
  private readonly key: Buffer;

  constructor(
    appSecret: string,
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    this.key = deriveKey(appSecret, 'password-reset');
  }

  issue(customerId: string, passwordHash: string | null | undefined): string {
    const payload: Payload = { v: 1, cid: customerId, exp: this.now() + PASSWORD_RESET_TTL_MS, n: randomId(12), pw: passwordFingerprint(passwordHash) };
    return signPayload(this.key, payload);
  }

  private markerKey(nonce: string): string {
    return `${this.prefix}:console:reset-used:${nonce}`;
  }

  /** Checks a link against the account's current password hash without using it up. */
  async check(token: string, currentHash: (customerId: string) => Promise<string | null | undefined | false>): Promise<ResetCheck> {
    const p = verifyPayload<Payload>(this.key, token);
    if (!p || p.v !== 1 || typeof p.cid !== 'string' || typeof p.n !== 'string' || typeof p.exp !== 'number' || typeof p.pw !== 'string') {
      return { ok: false, reason: 'invalid' };
    }
    if (p.exp < this.now()) return { ok: false, reason: 'expired' };
    const hash = await currentHash(p.cid);
    if (hash === false) return { ok: false, reason: 'invalid' };
    if ((await this.redis.exists(this.markerKey(p.n))) === 1 || passwordFingerprint(hash) !== p.pw) return { ok: false, reason: 'used' };
    return { ok: true, customerId: p.cid, nonce: p.n };
  }

  /** Uses the link up; false when another request did first. */
  async consume(nonce: string): Promise<boolean> {
    return (await this.redis.set(this.markerKey(nonce), '1', 'PX', PASSWORD_RESET_TTL_MS + 60_000, 'NX')) === 'OK';
  }
}
