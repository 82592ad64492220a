// Owns two-factor sign-in: RFC 6238 TOTP (6 digits, 30 s, SHA-1 as authenticator apps expect) via otplib,
// the otpauth:// QR code, secrets sealed at rest with AES-256-GCM, and refusal of a code used twice.
import type { Redis } from 'ioredis';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { deriveKey, open, seal } from '../secrets';
import { luaScript } from '../../../shared/redis-script';

const TOTP_ISSUER = 'Liveness API';
/** One step either way absorbs clock drift between phone and server (RFC 6238 §5.2 allows this). */
const TOLERANCE_SECONDS = 30;
/** The last-step marker outlives every step the tolerance still accepts. */
const LAST_STEP_TTL_SECONDS = 180;

const SPEND_STEP = luaScript('totp-spend-step-1');

export class TotpService {
  private readonly key: Buffer;
  /** Keys of earlier APP_SECRETs: they still open a sealed secret, which is then sealed again with `key`. */
  private readonly previousKeys: Buffer[];

  constructor(
    appSecret: string,
    private readonly redis: Redis,
    private readonly prefix: string,
    previousSecrets: string[] = [],
  ) {
    this.key = deriveKey(appSecret, 'totp-secret');
    this.previousKeys = previousSecrets.map((s) => deriveKey(s, 'totp-secret'));
  }

  newSecret(): string {
    return generateSecret({ length: 20 });
  }

  sealSecret(secret: string, customerId: string): string {
    return seal(this.key, secret, `totp:${customerId}`);
  }

  /** Opens with the current key, else with an earlier one (after an APP_SECRET rotation); throws when none fits. */
  openSecret(sealed: string, customerId: string): string {
    return this.openWithAnyKey(sealed, customerId).secret;
  }

  /** The secret sealed with the current key when `sealed` was made with an earlier one; null when it is current. */
  resealed(sealed: string, customerId: string): string | null {
    const { secret, current } = this.openWithAnyKey(sealed, customerId);
    return current ? null : this.sealSecret(secret, customerId);
  }

  private openWithAnyKey(sealed: string, customerId: string): { secret: string; current: boolean } {
    const aad = `totp:${customerId}`;
    try {
      return { secret: open(this.key, sealed, aad), current: true };
    } catch (err) {
      for (const key of this.previousKeys) {
        try {
          return { secret: open(key, sealed, aad), current: false };
        } catch {
          // not this one either
        }
      }
      throw err;
    }
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
    return (await SPEND_STEP.run(this.redis, [lastKey], [result.timeStep, LAST_STEP_TTL_SECONDS])) === 1;
  }
}
