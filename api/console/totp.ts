// Owns two-factor sign-in: RFC 6238 TOTP (6 digits, 30 s, SHA-1 as authenticator apps expect) via otplib,
// the otpauth:// QR code, secrets sealed at rest with AES-256-GCM, and refusal of a code used twice.
import type { Redis } from 'ioredis';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { deriveKey, open, seal } from './secrets';

export const TOTP_ISSUER = 'Liveness API';
/** One step either way absorbs clock drift between phone and server (RFC 6238 §5.2 allows this). */
const TOLERANCE_SECONDS = 30;

export class TotpService {
  private readonly key: Buffer;

  constructor(
    appSecret: string,
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.key = deriveKey(appSecret, 'totp-secret');
  }

  newSecret(): string {
    return generateSecret({ length: 20 });
  }

  sealSecret(secret: string, customerId: string): string {
    return seal(this.key, secret, `totp:${customerId}`);
  }

  openSecret(sealed: string, customerId: string): string {
    return open(this.key, sealed, `totp:${customerId}`);
  }

  otpauthUri(secret: string, email: string): string {
    return generateURI({ issuer: TOTP_ISSUER, label: email, secret, digits: 6, period: 30 });
  }

  /** An inline SVG (no data: URL or script needed under the console's CSP). */
  async qrSvg(uri: string): Promise<string> {
    return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, width: 208 });
  }

  /**
   * True when `code` is valid now and its time step was not used before by this account: a code
   * seen over someone's shoulder cannot be replayed within its 30-second window.
   */
  async check(customerId: string, secret: string, code: string): Promise<boolean> {
    const digits = code.replace(/\s+/g, '');
    if (!/^\d{6}$/.test(digits)) return false;
    const lastKey = `${this.prefix}:console:totp-last-step:${customerId}`;
    const last = Number((await this.redis.get(lastKey)) ?? '0');
    const result = await verify({ secret, token: digits, epochTolerance: TOLERANCE_SECONDS, afterTimeStep: last || undefined });
    if (!result.valid || !('timeStep' in result)) return false;
    // Record the step atomically-enough: a concurrent request with the same code races on GETSET.
    const previous = await this.redis.set(lastKey, String(result.timeStep), 'EX', 180, 'GET');
    return previous === null || Number(previous) < result.timeStep;
  }
}
