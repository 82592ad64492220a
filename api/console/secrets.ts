// Owns the console's keyed cryptography: purpose-bound keys derived from APP_SECRET (HKDF), signed
// tokens (HMAC-SHA256) and authenticated encryption at rest (AES-256-GCM).
import crypto from 'node:crypto';

/** Each purpose gets its own key, so a token minted for one use can never be replayed as another. */
export type KeyPurpose = 'marketplace-registration' | 'email-verification' | 'password-reset' | 'totp-secret' | 'session-id';

export function deriveKey(appSecret: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', Buffer.from(appSecret, 'utf8'), Buffer.from('lc-console'), Buffer.from(purpose), 32));
}

/** `<base64url(JSON payload)>.<base64url(HMAC)>`: readable payload, tamper-evident. */
export function signPayload(key: Buffer, payload: object): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  const mac = crypto.createHmac('sha256', key).update(body).digest('base64url');
  return `${body}.${mac}`;
}

/** The payload when the signature is valid, else null. Constant-time comparison. */
export function verifyPayload<T>(key: Buffer, token: string): T | null {
  if (typeof token !== 'string' || token.length > 4096) return null;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return null;
  const body = token.slice(0, dot);
  const presented = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = crypto.createHmac('sha256', key).update(body).digest();
  if (presented.length !== expected.length || !crypto.timingSafeEqual(presented, expected)) return null;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
  } catch {
    return null;
  }
}

/** AES-256-GCM; `aad` binds the ciphertext to its owner (a secret copied to another account fails to open). */
export function seal(key: Buffer, plaintext: string, aad: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':');
}

export function open(key: Buffer, sealed: string, aad: string): string {
  const [version, iv, tag, ct] = sealed.split(':');
  if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unknown sealed format');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

export function randomId(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function sameString(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return ba.length === bb.length && crypto.timingSafeEqual(ba, bb);
}
