// Owns "forgot password" links: signed (who, until when, which password), valid 1 hour, usable once.
// A link names a fingerprint of the password it replaces, so a reset (or change) voids every older
// link; the single-use marker is a Redis SET NX, like verification links.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { randomId } from '../secrets';
import { SignedToken, SingleUse } from './signed-token';

export const PASSWORD_RESET_TTL_MS = 3600 * 1000;

/** `pw`: fingerprint of the password hash the link replaces. */
const claims = z.object({ cid: z.string(), n: z.string(), pw: z.string() });

export type ResetCheck = { ok: true; customerId: string; nonce: string } | { ok: false; reason: 'invalid' | 'expired' | 'used' };

function passwordFingerprint(passwordHash: string | null | undefined): string {
  return crypto
    .createHash('sha256')
    .update(passwordHash ?? '')
    .digest('base64url')
    .slice(0, 16);
}

export class PasswordResetTokens {
  private readonly tokens: SignedToken<typeof claims>;
  private readonly usedOnce: SingleUse;

  constructor(appSecret: string, redis: Redis, prefix: string, now: () => number = Date.now) {
    this.tokens = new SignedToken(appSecret, 'password-reset', claims, PASSWORD_RESET_TTL_MS, now);
    this.usedOnce = new SingleUse(redis, `${prefix}:console:reset-used`, PASSWORD_RESET_TTL_MS + 60_000);
  }

  issue(customerId: string, passwordHash: string | null | undefined): string {
    return this.tokens.sign({ cid: customerId, n: randomId(12), pw: passwordFingerprint(passwordHash) });
  }

  /** Checks a link against the account's current password hash without using it up. */
  async check(token: string, currentHash: (customerId: string) => Promise<string | null | undefined | false>): Promise<ResetCheck> {
    const read = this.tokens.read(token);
    if (!read.ok) return { ok: false, reason: read.reason };
    const hash = await currentHash(read.claims.cid);
    if (hash === false) return { ok: false, reason: 'invalid' };
    if ((await this.usedOnce.used(read.claims.n)) || passwordFingerprint(hash) !== read.claims.pw) return { ok: false, reason: 'used' };
    return { ok: true, customerId: read.claims.cid, nonce: read.claims.n };
  }

  /** Uses the link up; false when another request did first. */
  async consume(nonce: string): Promise<boolean> {
    return this.usedOnce.consume(nonce);
  }
}
