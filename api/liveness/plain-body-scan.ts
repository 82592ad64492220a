// Owns the streaming pass over a liveness JSON body as its chunks arrive: for a body of the plain shape — an object
// whose members are plain strings (no escapes), `image_format` ("jpeg" or "png") before `image` — it checks the
// image's characters against the strict Base64 rule (strict-base64.ts) as they come, so a body that rule refuses is
// refused in the chunk that shows it: the rest is never read and the body is never parsed whole (a 10 MB body with a
// bad last character cost ~70 ms of the API's one thread through JSON.parse). A body of any other shape (an escape,
// another value type, `image` first) is left alone, for the full parse to answer as it always has.
import type { RequestHandler } from 'express';
import { InvalidRequestError } from '../../shared/errors';
import { base64ByteTable } from './strict-base64';
import { NOT_BASE64, processCpuMs } from './route';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;
/** A local table, not a call per byte: the pass runs over every byte of every JSON body. */
const IN_ALPHABET = base64ByteTable();

/** Where the scan is in the body. */
type State = 'start' | 'before-name' | 'name' | 'after-name' | 'before-value' | 'value' | 'after-value' | 'image' | 'done';

/** Longest member name (or `image_format` value) the pass reads; a longer one is not the plain shape. */
const MAX_NAME = 64;

/** One body's scan: `push` each chunk in order; it answers the refusal once the image breaks the rule. */
export class PlainBodyScan {
  private state: State = 'start';
  private text: number[] = [];
  private name = '';
  private formatSeen = false;
  private padding = 0;

  push(chunk: Buffer): InvalidRequestError | null {
    let i = 0;
    const n = chunk.length;
    while (i < n && this.state !== 'done') {
      const b = chunk[i]!;
      switch (this.state) {
        case 'start':
          this.expect(b, 0x7b /* { */, 'before-name', isSpaceOrBom);
          i++;
          break;
        case 'before-name':
          this.expect(b, QUOTE, 'name');
          this.text = [];
          i++;
          break;
        case 'after-name':
          this.expect(b, 0x3a /* : */, 'before-value');
          i++;
          break;
        case 'before-value':
          this.expect(b, QUOTE, 'value');
          this.text = [];
          // The image is checked only once a valid format came before it (else the full parse answers first).
          if ((this.state as State) === 'value' && this.name === 'image') this.state = this.formatSeen ? 'image' : 'done';
          i++;
          break;
        case 'after-value':
          this.expect(b, 0x2c /* , */, 'before-name');
          i++;
          break;
        case 'name':
        case 'value':
          i = this.readString(chunk, i);
          break;
        case 'image': {
          const end = chunk.indexOf(QUOTE, i);
          const stop = end === -1 ? n : end;
          const verdict = this.checkImage(chunk, i, stop);
          if (verdict === 'refused') return new InvalidRequestError(NOT_BASE64, { field: 'image' });
          // An escape is not the plain shape: the full parse reads it.
          if (verdict === 'escape') {
            this.state = 'done';
            return null;
          }
          i = stop;
          // The image's end: its length and the rest of the body are the full parse's to judge.
          if (end !== -1) this.state = 'done';
          break;
        }
      }
    }
    return null;
  }

  /** Checks the image's bytes in [from, to): padding only at the end, at most two; nothing outside the alphabet. */
  private checkImage(chunk: Buffer, from: number, to: number): 'ok' | 'refused' | 'escape' {
    let i = from;
    if (this.padding === 0) {
      while (i < to && IN_ALPHABET[chunk[i]!] === 1) i++;
      if (i === to) return 'ok';
    }
    for (; i < to; i++) {
      const c = chunk[i]!;
      if (c === BACKSLASH) return 'escape';
      if (c !== EQUALS || ++this.padding > 2) return 'refused';
    }
    return 'ok';
  }

  /** `want` moves to `next`; white space (or `skip`) stays; anything else is not the plain shape. */
  private expect(b: number, want: number, next: State, skip: (b: number) => boolean = isSpace): void {
    if (b === want) this.state = next;
    else if (!skip(b)) this.state = 'done';
  }

  /** Reads a plain string up to its closing quote: a member's name, or its value (kept only for `image_format`). */
  private readString(chunk: Buffer, i: number): number {
    const keep = this.state === 'name' || this.name === 'image_format';
    const end = chunk.indexOf(QUOTE, i);
    const stop = end === -1 ? chunk.length : end;
    for (let j = i; j < stop; j++) {
      const c = chunk[j]!;
      if (c === BACKSLASH || (keep && this.text.length >= MAX_NAME)) {
        this.state = 'done';
        return chunk.length;
      }
      if (keep) this.text.push(c);
    }
    if (end === -1) return chunk.length;
    const text = Buffer.from(this.text).toString('latin1');
    if (this.state === 'name') {
      this.name = text;
      this.state = 'after-name';
    } else {
      if (this.name === 'image_format') this.formatSeen = text === 'jpeg' || text === 'png';
      this.state = 'after-value';
    }
    return end + 1;
  }
}

/**
 * Runs `parser` with the streaming pass on UTF-8 JSON bodies (`scanned(req)` says which): a refusal found while the
 * body arrives ends the read at once (the connection then closes unread). `spentMs` gets the pass's own CPU time,
 * which the caller charges to the account's fair use with the rest of its parse.
 */
export function withPlainBodyScan(
  parser: RequestHandler,
  scanned: (req: Parameters<RequestHandler>[0]) => boolean,
  spentMs: (req: Parameters<RequestHandler>[0], ms: number) => void,
): RequestHandler {
  return (req, res, next) => {
    if (!scanned(req)) return parser(req, res, next);
    const scan = new PlainBodyScan();
    let done = false;
    let active = true;
    const once = (err?: unknown) => {
      if (done) return;
      done = true;
      next(err);
    };
    // Attached in the same tick as the parser's own listener, so the two see the same chunks.
    req.on('data', (chunk: Buffer) => {
      if (done || !active) return;
      const started = processCpuMs();
      const refusal = scan.push(chunk);
      spentMs(req, processCpuMs() - started);
      if (refusal) {
        active = false;
        req.pause();
        once(refusal);
      }
    });
    void parser(req, res, once);
  };
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** JSON white space, or a byte of the UTF-8 byte-order mark before the object. */
function isSpaceOrBom(b: number): boolean {
  return isSpace(b) || b === 0xef || b === 0xbb || b === 0xbf;
}
