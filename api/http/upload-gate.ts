// Owns the memory model of request bodies on a front-end: the bytes of bodies in flight, per subject (an API key,
// an emotion account) and in total. A body is counted from its Content-Length before a byte of it is read (a body
// without one is counted as it streams) and stays counted until its bytes are handed to the queue (`handedOff`:
// from then on Redis holds them and the request only waits for the answer) or its response ends. A subject past
// its share is refused at once (429, nothing read, the connection closed by the error
// handler); a body that would pass the total waits for room, within the request's deadline (503 after). So the
// body bytes a process holds are bounded by the total, and one caller can hold at most its share of it.
// Room goes to the waiting bodies fairly: first to the subject that has been given the fewest bytes since bodies
// began to wait, then the one with the fewest bytes in flight, then the oldest; while any waits, a new body joins
// the line. A burst of many callers at once then reads one body of each waiting caller before a second of any, so
// the bodies read last (and queued last) are callers' later calls, not every call of the callers that happened to
// come last (bench:field: when the workers fell behind, whole customers got none of their calls).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppError } from '../../shared/errors';
import { ServiceUnavailableError } from '../../shared/errors';

export interface UploadLimits {
  /** Body bytes one subject may have in flight (at least one largest body, or that body could never be sent). */
  perSubjectBytes: number;
  /** Body bytes in flight in this process. */
  totalBytes: number;
  /** The parser's limit: a larger declared body is left to the parser, which refuses it (413) unread. */
  maxBodyBytes: number;
}

/** Checked before a body is read: a full share is refused with `tooMany` (a 429 in the front-end's words). */
export class UploadGate {
  private total = 0;
  private readonly bySubject = new Map<string, number>();
  /** Bodies waiting for room, oldest first; `grant` picks among them. */
  private readonly waiting: Waiter[] = [];
  /** Bytes given to each subject since bodies began to wait (forgotten when none waits). */
  private readonly givenInLine = new Map<string, number>();
  /** For each request whose body is counted: gives its bytes back (once). */
  private readonly giveBack = new WeakMap<Request, () => void>();

  constructor(
    private readonly limits: UploadLimits,
    private readonly tooMany: () => AppError,
  ) {}

  /** Body bytes now counted, in total and for one subject (metrics and tests). */
  inFlight(subject?: string): number {
    return subject === undefined ? this.total : (this.bySubject.get(subject) ?? 0);
  }

  private fits(subject: string, bytes: number): 'yes' | 'subject' | 'total' {
    if (this.inFlight(subject) + bytes > this.limits.perSubjectBytes) return 'subject';
    if (this.total > 0 && this.total + bytes > this.limits.totalBytes) return 'total';
    return 'yes';
  }

  private add(subject: string, bytes: number): void {
    this.total += bytes;
    const left = this.inFlight(subject) + bytes;
    if (left > 0) this.bySubject.set(subject, left);
    else this.bySubject.delete(subject);
    if (bytes < 0) this.grant();
  }

  /** Bodies waiting for room (metrics and tests). */
  waitingBodies(): number {
    return this.waiting.length;
  }

  /** Whether `a` goes before `b`, an older waiter (see the header). */
  private before(a: Waiter, b: Waiter): boolean {
    const given = (this.givenInLine.get(a.subject) ?? 0) - (this.givenInLine.get(b.subject) ?? 0);
    return given !== 0 ? given < 0 : this.inFlight(a.subject) < this.inFlight(b.subject);
  }

  /** Gives room to waiting bodies in turn while any fits (a body too big for the room left lets smaller ones by). */
  private grant(): void {
    for (;;) {
      let best: Waiter | undefined;
      for (const w of this.waiting) {
        if (this.fits(w.subject, w.bytes) === 'total') continue;
        if (!best || this.before(w, best)) best = w;
      }
      if (!best) break;
      this.waiting.splice(this.waiting.indexOf(best), 1);
      // Its subject's share filled while it waited: refused as it would have been on arrival.
      if (this.fits(best.subject, best.bytes) === 'subject') {
        best.settle(this.tooMany());
        continue;
      }
      this.add(best.subject, best.bytes);
      this.givenInLine.set(best.subject, (this.givenInLine.get(best.subject) ?? 0) + best.bytes);
      best.granted = true;
      best.settle();
    }
    if (this.waiting.length === 0) this.givenInLine.clear();
  }

  /** The request's body is in the queue (or no longer needed): its bytes no longer count. */
  handedOff(req: Request): void {
    this.giveBack.get(req)?.();
  }

  /** Waits for `bytes` of room in turn (see `grant`); the subject's share is checked first and refuses at once. */
  private async reserve(req: Request, subject: string, bytes: number): Promise<void> {
    const fit = this.fits(subject, bytes);
    if (fit === 'subject') throw this.tooMany();
    if (fit === 'yes' && this.waiting.length === 0) return this.add(subject, bytes);
    let settle!: (err?: AppError) => void;
    const turn = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
    const waiter: Waiter = { subject, bytes, granted: false, settle };
    this.waiting.push(waiter);
    this.grant();
    try {
      await req.deadline.race('upload room', turn);
    } catch (err) {
      // Out of time while waiting (or granted in the same instant): nothing of it stays counted or in line.
      const at = this.waiting.indexOf(waiter);
      if (at >= 0) this.waiting.splice(at, 1);
      if (waiter.granted) this.add(subject, -bytes);
      throw err;
    }
  }

  /**
   * Reads the body with `parser` once the request's declared bytes are reserved for `subjectOf(req)` (the share
   * refuses at once, the total waits); without a declared length the bytes are counted chunk by chunk as the
   * parser reads them, and the body is refused once the share or the total is full. The bytes are given back
   * when the response ends. A refused body ends the request with that refusal; the parser's own callback, which
   * may come later when the connection closes, is then ignored.
   */
  read(subjectOf: (req: Request) => string, parser: RequestHandler): RequestHandler {
    return async (req: Request, res: Response, next: NextFunction) => {
      const header = req.get('content-length');
      const declared = header === undefined ? null : Number(header);
      if (declared !== null && (!Number.isSafeInteger(declared) || declared > this.limits.maxBodyBytes)) return parser(req, res, next);
      const subject = subjectOf(req);
      let counted = 0;
      let closed = false;
      const giveBack = () => {
        this.add(subject, -counted);
        counted = 0;
      };
      this.giveBack.set(req, giveBack);
      res.once('close', () => {
        closed = true;
        giveBack();
      });
      if (declared !== null) {
        await this.reserve(req, subject, declared);
        counted = declared;
        // The client left while this body waited for room: nothing will be read.
        if (closed) return this.add(subject, -declared);
      }
      let done = false;
      const once = (err?: unknown) => {
        if (done) return;
        done = true;
        next(err);
      };
      if (declared === null) {
        // Attached in the same tick as the parser's own listener, so the two see the same chunks.
        req.on('data', (chunk: Buffer) => {
          if (done) return;
          const fit = this.fits(subject, chunk.length);
          if (fit === 'yes') {
            this.add(subject, chunk.length);
            counted += chunk.length;
            return;
          }
          // Stop reading; the refusal is answered with Connection: close, so the rest is never read.
          req.pause();
          once(fit === 'subject' ? this.tooMany() : new ServiceUnavailableError('The service is at capacity; try again shortly', 2));
        });
      }
      parser(req, res, once);
    };
  }
}

interface Waiter {
  subject: string;
  bytes: number;
  /** Its bytes were counted by `grant`. */
  granted: boolean;
  /** Resolves the wait, or refuses it with the share's error. */
  settle: (err?: AppError) => void;
}
