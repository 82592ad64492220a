// Owns console passwords: the spec's strength rule and scrypt hashing (node:crypto) with a per-user salt.
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (pw: crypto.BinaryLike, salt: crypto.BinaryLike, len: number, o: crypto.ScryptOptions) => Promise<Buffer>;

/** N=2^15, r=8, p=3: one of OWASP's equivalent scrypt minimums, at 32 MiB per hash instead of 2^17's 128 MiB. */
const PARAMS = { N: 2 ** 15, r: 8, p: 3 };
const KEY_LEN = 32;
const MAXMEM = 128 * PARAMS.N * PARAMS.r * 2;

export const PASSWORD_MIN = 8;
/** An upper bound keeps hashing cost bounded for absurd inputs. */
export const PASSWORD_MAX = 128;

export interface PasswordRule {
  id: 'length' | 'upper' | 'lower' | 'digit' | 'symbol';
  label: string;
  test: (pw: string) => boolean;
}

/** The spec: at least 8 characters with an upper-case letter, a lower-case letter, a digit and a symbol. */
export const PASSWORD_RULES: PasswordRule[] = [
  { id: 'length', label: `At least ${PASSWORD_MIN} characters`, test: (pw) => pw.length >= PASSWORD_MIN },
  { id: 'upper', label: 'An upper-case letter', test: (pw) => /\p{Lu}/u.test(pw) },
  { id: 'lower', label: 'A lower-case letter', test: (pw) => /\p{Ll}/u.test(pw) },
  { id: 'digit', label: 'A digit', test: (pw) => /\p{Nd}/u.test(pw) },
  { id: 'symbol', label: 'A symbol, such as ! ? # %', test: (pw) => /[^\p{L}\p{N}\s]/u.test(pw) },
];

/** The rules a password fails; empty when it is acceptable. */
export function passwordProblems(pw: string): string[] {
  if (pw.length > PASSWORD_MAX) return [`At most ${PASSWORD_MAX} characters`];
  return PASSWORD_RULES.filter((r) => !r.test(pw)).map((r) => r.label);
}

export async function hashPassword(pw: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(pw.normalize('NFKC'), salt, KEY_LEN, { ...PARAMS, maxmem: MAXMEM });
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(pw: string, stored: string | null | undefined): Promise<boolean> {
  // Unknown accounts still pay for one hash, so timing does not tell which e-mails are registered.
  const parts = (stored ?? DUMMY_HASH).split('$');
  const [scheme, n, r, p, salt, hash] = parts;
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const opts = { N: Number(n), r: Number(r), p: Number(p) };
  const actual = await scrypt(pw.normalize('NFKC'), Buffer.from(salt, 'base64url'), expected.length, { ...opts, maxmem: 128 * opts.N * opts.r * 2 });
  return stored != null && crypto.timingSafeEqual(actual, expected);
}

const DUMMY_HASH = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(KEY_LEN).toString('base64url')}`;
