// Owns reading a JSON request body of the common shape — one flat object whose members are all plain strings
// (no escapes) — as byte ranges of the body, without JSON.parse building its strings. A liveness body is ~350 KB of
// Base64 in one string: JSON.parse spent ~4.5 ms per call on it in the field burst (a third of the API's CPU, with
// the collections of those strings). Anything else — an escape, a control character, a number, a nested value, a
// repeated name, text after the object — is not read here (null) and is left to JSON.parse, so every answer stays
// exactly what the general parser gives.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isJsonSpace(b: number | undefined): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** True when the bytes hold a character JSON forbids unescaped in a string (U+0000–U+001F). */
export function hasControlCharacter(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! < 0x20) return true;
  return false;
}

/**
 * The members of `body` (UTF-8, an optional byte-order mark) when it is one JSON object whose values are all strings
 * without escapes: each value as the bytes between its quotes (a view of `body`, not a copy). Names are checked
 * for control characters here; values are the caller's to check (a value it uses whole, like Base64, is checked by
 * its own stricter rule). null for any other text, valid JSON or not.
 */
export function plainStringMembers(body: Buffer): Map<string, Buffer> | null {
  const n = body.length;
  let i = n >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  const skipSpace = () => {
    while (i < n && isJsonSpace(body[i])) i++;
  };
  const plainString = (): Buffer | null => {
    if (body[i] !== QUOTE) return null;
    const end = body.indexOf(QUOTE, i + 1);
    if (end === -1) return null;
    const text = body.subarray(i + 1, end);
    if (text.includes(BACKSLASH)) return null;
    i = end + 1;
    return text;
  };
  const members = new Map<string, Buffer>();
  skipSpace();
  if (body[i] !== 0x7b /* { */) return null;
  i++;
  skipSpace();
  if (body[i] === 0x7d /* } */) {
    i++;
  } else {
    for (;;) {
      const name = plainString();
      if (!name || hasControlCharacter(name)) return null;
      skipSpace();
      if (body[i] !== 0x3a /* : */) return null;
      i++;
      skipSpace();
      const value = plainString();
      if (!value) return null;
      const key = name.toString('utf8');
      // JSON.parse keeps the last of repeated names; rare enough to leave to it.
      if (members.has(key)) return null;
      members.set(key, value);
      skipSpace();
      if (body[i] === 0x2c /* , */) {
        i++;
        skipSpace();
        continue;
      }
      if (body[i] !== 0x7d) return null;
      i++;
      break;
    }
  }
  skipSpace();
  return i === n ? members : null;
}
