// Owns the strict Base64 check and decoding of an image field: the standard alphabet, at most two '=' of padding,
// no length that leaves a single character over — the same rule as /^[A-Za-z0-9+/]+={0,2}$/ plus
// length % 4 !== 1, and the same bytes as Buffer.from(_, 'base64') gives for such a text.
// It reads the body's bytes directly, one pass that checks and decodes. The JSON form's image used to be made a
// 350 KB Latin-1 string first and decoded by Buffer.from: the string alone cost the liveness API ~3 ms of CPU per
// call (a fresh large-object page per string: page faults and zeroing), against ~0.5 ms for this loop. Any
// character outside the alphabet — '-', '_', whitespace, a stray '=', a byte over 0x7F — makes the text invalid.
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const EQUALS = 0x3d;

/** Each byte's six bits in the standard alphabet, or -1 for any other byte. */
const SEXTET = new Int8Array(256).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) SEXTET[ALPHABET.charCodeAt(i)] = i;

/** 1 for each byte of the standard alphabet's 64 characters ('=' padding is not), else 0: a table for hot loops. */
export function base64ByteTable(): Uint8Array {
  return Uint8Array.from(SEXTET, (v) => (v >= 0 ? 1 : 0));
}

/**
 * The decoded bytes of a strict standard-alphabet Base64 text, or null when the text is not one. The text as
 * bytes (a view of the request body) or, from the general JSON parser, as a string.
 */
export function decodeStrictBase64(text: string | Uint8Array): Buffer | null {
  if (typeof text !== 'string') return decodeBytes(text);
  // ASCII only: Latin-1 bytes of a wider character would pass for its low byte.
  if (Buffer.byteLength(text, 'utf8') !== text.length) return null;
  return decodeBytes(Buffer.from(text, 'latin1'));
}

function decodeBytes(src: Uint8Array): Buffer | null {
  const length = src.length;
  if (length === 0 || length % 4 === 1) return null;
  let end = length;
  while (end > length - 2 && src[end - 1] === EQUALS) end--;
  if (end === 0 || src[end - 1] === EQUALS) return null;
  // A single character after the last whole group carries no byte (Buffer.from drops it; the rule accepts it).
  const whole = end - (end % 4);
  const tail = end % 4;
  const out = Buffer.allocUnsafe((whole / 4) * 3 + (tail === 3 ? 2 : tail === 2 ? 1 : 0));
  // Any byte outside the alphabet maps to -1, which sets the sign bit of `invalid`.
  let invalid = 0;
  let o = 0;
  for (let i = 0; i < whole; i += 4) {
    const a = SEXTET[src[i]!]!;
    const b = SEXTET[src[i + 1]!]!;
    const c = SEXTET[src[i + 2]!]!;
    const d = SEXTET[src[i + 3]!]!;
    invalid |= a | b | c | d;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = (n >> 16) & 0xff;
    out[o++] = (n >> 8) & 0xff;
    out[o++] = n & 0xff;
  }
  if (tail === 1) invalid |= SEXTET[src[whole]!]!;
  if (tail >= 2) {
    const a = SEXTET[src[whole]!]!;
    const b = SEXTET[src[whole + 1]!]!;
    invalid |= a | b;
    out[o] = ((a << 2) | (b >> 4)) & 0xff;
    if (tail === 3) {
      const c = SEXTET[src[whole + 2]!]!;
      invalid |= c;
      out[o + 1] = ((b << 4) | (c >> 2)) & 0xff;
    }
  }
  return invalid < 0 ? null : out;
}
