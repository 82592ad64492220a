// Owns TOTP recovery codes: ten random codes shown once, stored as SHA-256 hashes (50 random bits
// each, so a fast hash is enough; guesses are limited by the TOTP lockout), each usable once (a Redis
// marker is the atomic step; see spendRecoveryCode).
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AccountService } from '../../../shared/accounts/account-service';
import type { ConsoleCredentials } from '../../../shared/accounts/console-credentials';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'; // no 0/o, 1/l/i: read from paper

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from(crypto.randomBytes(10), (b) => ALPHABET[b % ALPHABET.length]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** Case, spaces and dashes do not matter when a code is typed back. */
function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]+/g, '');
}

export function hashRecoveryCode(code: string): string {
  return crypto
    .createHash('sha256')
    .update(`recovery:${normalizeRecoveryCode(code)}`)
    .digest('hex');
}

/** Looks like a recovery code rather than a 6-digit TOTP code. */
export function isRecoveryCodeShape(code: string): boolean {
  return /^[a-z0-9]{10}$/.test(normalizeRecoveryCode(code)) && !/^\d+$/.test(normalizeRecoveryCode(code));
}

/** What spending a code needs: Redis for the marker, the account for the list of issued codes, the credentials to pull spent ones. */
export interface RecoveryCodeStore {
  redis: Redis;
  prefix: string;
  accounts: Pick<AccountService, 'get'>;
  credentials: Pick<ConsoleCredentials, 'pullSpentRecoveryCodes'>;
}

/** One hash per account: a field per code hash spent (cleared when the set of codes is replaced). */
const spentRecoveryCodesKey = (prefix: string, customerId: string) => `${prefix}:console:recovery-spent:${customerId}`;

/**
 * Spends one recovery code: true once per issued code, false for an unknown or spent one. The atomic step is
 * a Redis HSETNX marker (account + code hash): a conditional update of the account document is not atomic on
 * FerretDB 1.24, which loses concurrent updates to one document (measured: several concurrent sign-ins got
 * in with one code, and a lost update put spent codes back in the list; see shared/billing/credit-ledger.ts).
 * The marker lives as long as the code could be valid: until the account's codes are replaced.
 */
export async function spendRecoveryCode(store: RecoveryCodeStore, customerId: string, codeHash: string): Promise<boolean> {
  const account = await store.accounts.get(customerId);
  if (!account?.recoveryCodeHashes?.includes(codeHash)) return false;
  const key = spentRecoveryCodesKey(store.prefix, customerId);
  if ((await store.redis.hsetnx(key, codeHash, '1')) !== 1) return false;
  // Housekeeping: the list shows how many are left. Every spent code is pulled again (see above).
  await store.credentials.pullSpentRecoveryCodes(customerId, await store.redis.hkeys(key));
  return true;
}

/** The account's codes not yet spent (the stored list may still name a spent one after a lost update). */
export async function unspentRecoveryCodes(redis: Redis, prefix: string, account: { _id: string; recoveryCodeHashes?: string[] | null }): Promise<number> {
  const listed = account.recoveryCodeHashes ?? [];
  if (listed.length === 0) return 0;
  const spent = new Set(await redis.hkeys(spentRecoveryCodesKey(prefix, account._id)));
  return listed.filter((c) => !spent.has(c)).length;
}

/** After a new set of codes is stored: the old markers name codes that can no longer be valid. */
async function forgetSpentRecoveryCodes(redis: Redis, prefix: string, customerId: string): Promise<void> {
  await redis.del(spentRecoveryCodesKey(prefix, customerId));
}

/** The account's recovery codes as the console's routes use them (the Redis markers stay behind this service). */
export class RecoveryCodes {
  constructor(private readonly store: RecoveryCodeStore) {}

  /** Spends one code: true once per issued code (spendRecoveryCode). */
  spend(customerId: string, codeHash: string): Promise<boolean> {
    return spendRecoveryCode(this.store, customerId, codeHash);
  }

  /** The account's codes not yet spent. */
  unspent(account: { _id: string; recoveryCodeHashes?: string[] | null }): Promise<number> {
    return unspentRecoveryCodes(this.store.redis, this.store.prefix, account);
  }

  /** After a new set of codes is stored: forget the markers of the old set. */
  forgetSpent(customerId: string): Promise<void> {
    return forgetSpentRecoveryCodes(this.store.redis, this.store.prefix, customerId);
  }
}
