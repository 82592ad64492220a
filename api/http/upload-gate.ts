// Owns the memory model of request bodies on a front-end: the bytes of bodies in flight, per account (every key or
// token of an account, and the console's try-it routes, count in one share) and in total, with the rules in
// docs/reliability.md ("Upload room and fair use"). A body is counted from its Content-Length before a byte of it is
// read (a body without one is counted as it streams) and stays counted until its bytes are handed to the queue
// (`handedOff`) or its response ends.
// - An account past its share (a quarter of the total at most, config.ts) is refused at once (429, nothing read,
//   the connection closed by the error handler); a body that would pass the total waits for room, within the
//   request's deadline (503 after).
// - Large bodies (over a quarter of the share) together hold at most the total less one share: that share is always
//   left for small bodies, so a photo never waits behind held 10 MB uploads.
// - A body must arrive at the floor rate once its grace is over (`arrived >= floor * (elapsed - grace)`, from the
//   moment its room was given): a body that trickles is cut with 400 `invalid_request` and its room given back, so a
//   hold lasts seconds, not the server's 60 s request timeout.
// Room goes to the waiting bodies fairly: first to the account given the fewest bytes since bodies began to wait,
// then the one with the fewest bytes in flight, then the oldest; while any waits, a new body joins the line.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Config } from '../../shared/config';
import { InvalidRequestError, ServiceUnavailableError, TooManyRequestsError, type AppError } from '../../shared/errors';
import { loopStall } from './loop-stall';

export interface UploadLimits {
  /** Body bytes one account may have in flight (at least one largest body, or that body could never be sent). */
  perSubjectBytes: number;
  /** Body bytes in flight in this process. */
  totalBytes: number;
  /** Bytes a second a body must arrive at once its grace is over. */
  floorBytesPerSecond: number;
  /** Milliseconds a body may take before the floor rate applies (connection set-up, a slow start). */
  graceMs: number;
}

/** The gate's clock in milliseconds (monotonic); tests move it by hand. */
export type GateClock = () => number;

/**
 * The process's clock less the time its event loop could not run (loop-stall.ts): a body's bytes that reached the
 * socket while this process was starved are the server's delay, not the client's, and never make it look slow.
 */
const clientTime: GateClock = () => performance.now() - loopStall().totalMs();

/** How often bodies being read are checked against the floor rate. */
const FLOOR_CHECK_EVERY_MS = 250;

/** A body whose room was given and whose bytes are still arriving (checked against the floor rate). */
interface Arriving {
  startedAt: number;
  arrived: number;
  cut: () => void;
}

/** Checked before a body is read: a full share is refused with `tooMany` (a 429 in the front-end's words). */
export class UploadGate {
  private total = 0;
  /** Bytes of large bodies in flight (their lane leaves one share to small bodies). */
  private large = 0;
  private readonly bySubject = new Map<string, number>();
  /** Bodies waiting for room, oldest first; `grant` picks among them. */
  private readonly waiting: Waiter[] = [];
  /** Bytes given to each subject since bodies began to wait (forgotten when none waits). */
  private readonly givenInLine = new Map<string, number>();
  /** For each request whose body is counted: gives its bytes back (once). */
  private readonly giveBack = new WeakMap<Request, () => void>();
  private readonly arriving = new Set<Arriving>();
  private floorTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly limits: UploadLimits,
    private readonly tooMany: () => AppError,
    private readonly now: GateClock = clientTime,
  ) {}

  /** A body over this many bytes is large: a quarter of one share (3 MiB of the shipped 12 MiB). */
  get largeBodyBytes(): number {
    return Math.floor(this.limits.perSubjectBytes / 4);
  }

  /** Body bytes now counted, in total and for one subject (metrics and tests). */
  inFlight(subject?: string): number {
    return subject === undefined ? this.total : (this.bySubject.get(subject) ?? 0);
  }

  private fits(subject: string, bytes: number): 'yes' | 'subject' | 'total' {
    if (this.inFlight(subject) + bytes > this.limits.perSubjectBytes) return 'subject';
    if (this.total > 0 && this.total + bytes > this.limits.totalBytes) return 'total';
    if (bytes > this.largeBodyBytes && this.large + bytes > this.limits.totalBytes - this.limits.perSubjectBytes) return 'total';
    return 'yes';
  }

  /** Counts `bytes` (negative: gives them back) for `subject`; `large`: a declared large body. */
  private add(subject: string, bytes: number, large = false): void {
    this.total += bytes;
    if (large) this.large += bytes;
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
      this.add(best.subject, best.bytes, best.bytes > this.largeBodyBytes);
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
    if (fit === 'yes' && this.waiting.length === 0) return this.add(subject, bytes, bytes > this.largeBodyBytes);
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
      if (waiter.granted) this.add(subject, -bytes, bytes > this.largeBodyBytes);
      throw err;
    }
  }

  /** Watches a body's arrival against the floor rate until `stop` is called. */
  private watch(cut: () => void): { arrived: (bytes: number) => void; stop: () => void } {
    const body: Arriving = { startedAt: this.now(), arrived: 0, cut };
    this.arriving.add(body);
    this.floorTimer ??= setInterval(() => this.checkFloor(), FLOOR_CHECK_EVERY_MS).unref();
    return {
      arrived: (bytes) => (body.arrived += bytes),
      stop: () => {
        this.arriving.delete(body);
        if (this.arriving.size === 0 && this.floorTimer) {
          clearInterval(this.floorTimer);
          this.floorTimer = null;
        }
      },
    };
  }

  private checkFloor(): void {
    const now = this.now();
    for (const body of [...this.arriving]) {
      const owed = (this.limits.floorBytesPerSecond * (now - body.startedAt - this.limits.graceMs)) / 1000;
      if (body.arrived < owed) body.cut();
    }
  }

  /**
   * Reads the body with `parser` once the request's declared bytes are reserved for `subjectOf(req)` (the share
   * refuses at once, the total waits); without a declared length the bytes are counted chunk by chunk as the
   * parser reads them, and the body is refused once the share or the total is full. A body slower than the floor
   * rate is cut. The bytes are given back when the response ends. A refused body ends the request with that
   * refusal; the parser's own callback, which may come later when the connection closes, is then ignored.
   * `maxBodyBytes`: the parser's limit, so a larger declared body is left to the parser, which refuses it (413) unread.
   */
  read(subjectOf: (req: Request) => string, parser: RequestHandler, maxBodyBytes: number): RequestHandler {
    return async (req: Request, res: Response, next: NextFunction) => {
      const header = req.get('content-length');
      const declared = header === undefined ? null : Number(header);
      if (declared !== null && (!Number.isSafeInteger(declared) || declared > maxBodyBytes)) return parser(req, res, next);
      const subject = subjectOf(req);
      const large = declared !== null && declared > this.largeBodyBytes;
      let counted = 0;
      let closed = false;
      const giveBack = () => {
        this.add(subject, -counted, large);
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
        if (closed) return giveBack();
      }
      let done = false;
      let stopWatching: () => void = () => undefined;
      const once = (err?: unknown) => {
        if (done) return;
        done = true;
        stopWatching();
        next(err);
      };
      // Stop reading; the refusal is answered with Connection: close, so the rest is never read.
      const refuse = (err: AppError) => {
        if (done) return;
        req.pause();
        once(err);
      };
      const floor = this.watch(() =>
        refuse(
          new InvalidRequestError(
            `The body arrived slower than ${Math.round(this.limits.floorBytesPerSecond / 1024)} KiB/s after its first ` +
              `${this.limits.graceMs / 1000} s and was cut; send it again on a faster connection`,
          ),
        ),
      );
      stopWatching = floor.stop;
      res.once('close', floor.stop);
      // Attached in the same tick as the parser's own listener, so the two see the same chunks.
      req.on('data', (chunk: Buffer) => {
        if (done) return;
        floor.arrived(chunk.length);
        if (declared !== null) return;
        const fit = this.fits(subject, chunk.length);
        if (fit === 'yes') {
          this.add(subject, chunk.length);
          counted += chunk.length;
          return;
        }
        refuse(fit === 'subject' ? this.tooMany() : new ServiceUnavailableError('The service is at capacity; try again shortly', 2));
      });
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

/** An account's share in a gate: every key and token of the account, and its console try-its, count in it. */
export const accountShare = (customerId: string): string => `account:${customerId}`;

/** A front-end process's one gate, from its configuration (the liveness process's serves /v1 and the console's try-it). */
export function uploadGate(config: Config, now?: GateClock): UploadGate {
  return new UploadGate(
    {
      perSubjectBytes: config.UPLOAD_BYTES_PER_CALLER,
      totalBytes: config.UPLOAD_BYTES_TOTAL,
      floorBytesPerSecond: config.UPLOAD_FLOOR_BYTES_PER_SEC,
      graceMs: config.UPLOAD_GRACE_MS,
    },
    () => new TooManyRequestsError('rate_limited', 'Too many uploads in flight for this account; wait for their answers', 1),
    now,
  );
}
