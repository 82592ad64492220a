// Owns console password hashing: scrypt (node:crypto) with a per-user salt (the strength rule is in validation.ts).
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (pw: crypto.BinaryLike, salt: crypto.BinaryLike, len: number, o: crypto.ScryptOptions) => Promise<Buffer>;

/** N=2^15, r=8, p=3: one of OWASP's equivalent scrypt minimums, at 32 MiB per hash instead of 2^17's 128 MiB. */
const PARAMS = { N: 2 ** 15, r: 8, p: 3 };
const KEY_LEN = 32;
const MAXMEM = 128 * PARAMS.N * PARAMS.r * 2;

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
