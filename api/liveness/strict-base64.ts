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

/**
 * decodeStrictBase64 for a text in bytes its caller gives up (the request body's view): the image is decoded over
 * the text's own memory, so it needs no allocation of its own. Every ~110 KB image allocated made up a quarter of
 * the external memory a call churned through the liveness API, whose growth schedules its full garbage
 * collections (bench/results/api.md, 2026-12-06). A decoded group is shorter than its text and is written behind
 * it, never over a character still to be read. The whole text is checked first: one that is not strict Base64
 * comes back untouched (null), for the general parser's answer.
 */
export function decodeStrictBase64InPlace(text: Uint8Array): Buffer | null {
  const shape = shapeOf(text);
  if (!shape) return null;
  let invalid = 0;
  for (let i = 0; i < shape.end; i++) invalid |= SEXTET[text[i]!]!;
  if (invalid < 0) return null;
  decodeInto(text, shape, text);
  return Buffer.from(text.buffer, text.byteOffset, shape.size);
}

interface Shape {
  /** The text's end without its padding. */
  end: number;
  /** The characters in whole groups of four. */
  whole: number;
  /** The decoded length. */
  size: number;
}

/** Where the groups of a text end and how many bytes they decode to; null for a length or padding the rule refuses. */
function shapeOf(src: Uint8Array): Shape | null {
  const length = src.length;
  if (length === 0 || length % 4 === 1) return null;
  let end = length;
  while (end > length - 2 && src[end - 1] === EQUALS) end--;
  if (end === 0 || src[end - 1] === EQUALS) return null;
  // A single character after the last whole group carries no byte (Buffer.from drops it; the rule accepts it).
  const whole = end - (end % 4);
  const tail = end % 4;
  return { end, whole, size: (whole / 4) * 3 + (tail === 3 ? 2 : tail === 2 ? 1 : 0) };
}

function decodeBytes(src: Uint8Array): Buffer | null {
  const shape = shapeOf(src);
  if (!shape) return null;
  const out = Buffer.allocUnsafe(shape.size);
  return decodeInto(src, shape, out) < 0 ? null : out;
}

/**
 * Decodes the text into `out` (which may be the text's own memory: each group is read before its bytes are written,
 * behind it). Returns a negative number when a character is outside the alphabet: -1 maps set its sign bit.
 */
function decodeInto(src: Uint8Array, { end, whole }: Shape, out: Uint8Array): number {
  const tail = end % 4;
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
    const c = tail === 3 ? SEXTET[src[whole + 2]!]! : 0;
    invalid |= a | b | c;
    out[o] = ((a << 2) | (b >> 4)) & 0xff;
    if (tail === 3) out[o + 1] = ((b << 4) | (c >> 2)) & 0xff;
  }
  return invalid;
}
