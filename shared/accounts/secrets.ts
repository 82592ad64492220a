// Owns bearer secrets (API keys and emotion tokens): generation, hashing, display prefixes.
import crypto from 'node:crypto';

/** `lc_` + 43 URL-safe characters (32 random bytes). */
export function generateApiKey(): string {
  return `lc_${crypto.randomBytes(32).toString('base64url')}`;
}

export function generateToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function sha256Hex(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** What the dashboard may show of a key: `lc_` plus a few characters. */
export function displayPrefix(secret: string, visible = 6): string {
  return secret.startsWith('lc_') ? secret.slice(0, 3 + visible) : secret.slice(0, visible);
}

/** Constant-time equality of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && crypto.timingSafeEqual(ba, bb);
}

export const API_KEY_SHAPE = /^lc_[A-Za-z0-9_-]{32,128}$/;
