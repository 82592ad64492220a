// Owns POST /v1/check/liveness as HTTP: what runs before the body is read (authentication is the route's
// middleware; then an Idempotency-Key's entry, the quota and the fair-use tokens of the declared bytes, and the
// account's share of body bytes in flight), reading and validating the body (its parse time charged to the account's
// fair use), and mapping the liveness check (step.ts) and the idempotency store to answers. A refusal
// before the body is answered at once and the connection closed (error-handler.ts), so a refused upload is never read.
import type { Request, RequestHandler, Response } from 'express';
import { InvalidRequestError, PayloadTooLargeError } from '../../shared/errors';
import type { Clock } from '../../shared/billing/month';
import type { IdempotencyStore } from './idempotency';
import { metadata, setQuotaHeaders } from './envelope';
import { fairUseSubject, type Caller, type Checked, type LivenessCheck, type Reservation } from './step';
import type { Throttle } from '../http/throttle';
import { decodeStrictBase64, decodeStrictBase64InPlace } from './strict-base64';
import { hasControlCharacter, plainStringMembers } from './plain-json';
import { JobPayload } from '../../shared/queues/job-client';
import { livenessRequestSchema, MAX_IMAGE_BASE64_CHARS, RAW_IMAGE_TYPES } from '../../shared/contracts/http/liveness';

/** The answer to an image that breaks the strict Base64 rule (also given by the streaming pass, plain-body-scan.ts). */
export const NOT_BASE64 = 'image is not valid Base64 (standard alphabet, no data: URL prefix)';

/**
 * Parses the body into the image bytes, with the spec's invalid_request cases. `canonical` (the text an
 * Idempotency-Key's body hash covers) is built only when read: most calls carry no key.
 */
export function parseLivenessRequest(body: unknown): { image: Buffer; imageFormat: 'jpeg' | 'png'; readonly canonical: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError('The body must be a JSON object with "image" and "image_format" (Content-Type: application/json)');
  }
  // reportInput: tells a missing member ("is required") from one of the wrong type.
  const parsed = livenessRequestSchema.safeParse(body, { reportInput: true });
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const field = first?.path.join('.') || 'body';
    const message = first?.code === 'invalid_type' && first.input === undefined ? `${field} is required` : (first?.message ?? 'invalid body');
    throw new InvalidRequestError(message, { field });
  }
  const raw = parsed.data.image;
  const text = raw.includes('\n') || raw.includes('\r') ? raw.replace(/[\r\n]/g, '') : raw;
  if (text.length > MAX_IMAGE_BASE64_CHARS) {
    throw new PayloadTooLargeError(`image exceeds ${MAX_IMAGE_BASE64_CHARS} Base64 characters (10 MB)`);
  }
  const image = decodeStrictBase64(text);
  if (!image) {
    throw new InvalidRequestError(NOT_BASE64, { field: 'image' });
  }
  if (image.length === 0) throw new InvalidRequestError('image decodes to no bytes', { field: 'image' });
  const imageFormat = parsed.data.image_format;
  return {
    image,
    imageFormat,
    get canonical() {
      return `${imageFormat}:${text}`;
    },
  };
}

type LivenessRequest = ReturnType<typeof parseLivenessRequest>;

/**
 * The JSON form read from its bytes (the parser hands a UTF-8 `application/json` body over unparsed): the common
 * body — plain strings, a valid Base64 image, a known format — without JSON.parse or a copy of the image's text
 * (plain-json.ts); any other body through JSON.parse and parseLivenessRequest, as express.json would, so its answer
 * is the general parser's to the letter. `consume`: the body is the caller's to give up and no canonical text is
 * wanted (no Idempotency-Key): the image is decoded over its own text in the body (strict-base64.ts).
 */
export function parseLivenessJson(body: Buffer, consume = false): LivenessRequest {
  const members = plainStringMembers(body);
  const text = members?.get('image');
  const format = members?.get('image_format')?.toString('latin1');
  const othersPlain = members !== null && [...members].every(([name, value]) => name === 'image' || !hasControlCharacter(value));
  if (text && text.length <= MAX_IMAGE_BASE64_CHARS && (format === 'jpeg' || format === 'png') && othersPlain) {
    const image = consume ? decodeStrictBase64InPlace(text) : decodeStrictBase64(text);
    if (image && image.length > 0) {
      return {
        image,
        imageFormat: format,
        get canonical() {
          if (consume) throw new Error('the image text was decoded in place: no canonical text');
          return `${format}:${text.toString('latin1')}`;
        },
      };
    }
  }
  return parseLivenessJsonText(body.toString('utf8').replace(/^\uFEFF/, ''));
}

/** The general reading of a JSON body, as express.json (strict: false) and then parseLivenessRequest answer it. */
export function parseLivenessJsonText(json: string): LivenessRequest {
  if (json.length === 0) return parseLivenessRequest({});
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new InvalidRequestError('Request body is not valid JSON');
  }
  return parseLivenessRequest(parsed);
}

/**
 * The body as an image: raw bytes (`Content-Type: image/jpeg` or `image/png`: the type names the format, no Base64
 * or JSON work) or the JSON form (its bytes, or parsed by express.json for a charset other than UTF-8). Its
 * canonical text is the same for one image in either form, so an Idempotency-Key sees one request.
 */
function parseLivenessBody(body: unknown, contentType: string | undefined, withKey: boolean): LivenessRequest {
  if (!Buffer.isBuffer(body)) return parseLivenessRequest(body);
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!(type in RAW_IMAGE_TYPES)) return parseLivenessJson(body, !withKey);
  const imageFormat = RAW_IMAGE_TYPES[type as keyof typeof RAW_IMAGE_TYPES];
  if (body.length === 0) throw new InvalidRequestError('The body is empty: send the image bytes', { field: 'body' });
  return {
    image: body,
    imageFormat,
    get canonical() {
      return `${imageFormat}:${body.toString('base64')}`;
    },
  };
}

/**
 * The request's image and format, taken from its body: the body goes with it (a JobPayload is let go of once the
 * image is in Redis, so a call waiting for its answer holds neither the body nor the image). The idempotency
 * fingerprint only for a call with a key.
 */
function takeLivenessRequest(req: Request, withKey: boolean): { image: JobPayload; imageFormat: 'jpeg' | 'png'; canonical: string } {
  const request = parseLivenessBody(req.body, req.get('content-type'), withKey);
  req.body = undefined;
  return { image: new JobPayload(request.image), imageFormat: request.imageFormat, canonical: withKey ? request.canonical : '' };
}

/**
 * This process's CPU time in ms: what the front-end's own work on a body is measured in (its wall time would also
 * count the time other processes had the cores, and charge the caller for the machine's load).
 */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The front-end's own CPU time spent on each request's body before its parse (the streaming pass), in ms. */
export class FrontEndWork {
  private readonly spent = new WeakMap<Request, number>();

  add(req: Request, ms: number): void {
    this.spent.set(req, (this.spent.get(req) ?? 0) + ms);
  }

  /** The time recorded for `req`, forgotten once taken. */
  take(req: Request): number {
    const ms = this.spent.get(req) ?? 0;
    this.spent.delete(req);
    return ms;
  }
}

export interface CheckRouteDeps {
  check: LivenessCheck;
  idempotency: IdempotencyStore;
  /** Reads the body (JSON, or raw image bytes) once the account's share of body bytes in flight holds it (UploadGate.read). */
  readBody: RequestHandler;
  /** The request's body is in the queue: its bytes no longer count in flight (UploadGate.handedOff). */
  bodyHandedOff: (req: Request) => void;
  /** The account's fair use: a replay's tokens, and the debt of the parse. */
  throttle: Throttle;
  fairUse: { bytesPerToken: number; parseMsPerToken: number };
  frontEndWork: FrontEndWork;
  clock: Clock;
}

/** Fair-use tokens a body's declared length takes before it is read: one per started `bytesPerToken`, at least one. */
function declaredTokens(req: Request, bytesPerToken: number): number {
  const declared = Number(req.get('content-length') ?? 0);
  return Number.isSafeInteger(declared) && declared > 0 ? Math.max(1, Math.ceil(declared / bytesPerToken)) : 1;
}

/** Runs a middleware as a step of this handler. */
function step(handler: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    // Express passes an error of any type to next(); it is rethrown as it came, for the error handler to map.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    Promise.resolve(handler(req, res, (err?: unknown) => (err ? reject(err) : resolve()))).catch(reject);
  });
}

export function checkLivenessHandler(d: CheckRouteDeps) {
  const answer = (res: Response, checked: Checked) => {
    const body = { metadata: metadata(d.clock, 'success', checked.quota), data: checked.data };
    setQuotaHeaders(res, checked.quota, d.clock);
    res.status(200).json(body);
    return { status: 200, body };
  };
  /**
   * Reads and parses the body, then charges the account's fair use for the front-end's work on it, answered or
   * refused: its streaming pass and parse CPU time (one token per `parseMsPerToken`), and the bytes of a body that
   * declared no length beyond the one token it took.
   */
  const readRequest = async (req: Request, res: Response, withKey: boolean, took: number) => {
    let parseMs = 0;
    let bytes = 0;
    try {
      await step(d.readBody, req, res);
      bytes = Buffer.isBuffer(req.body) ? req.body.length : 0;
      const started = processCpuMs();
      try {
        return takeLivenessRequest(req, withKey);
      } finally {
        parseMs = processCpuMs() - started;
      }
    } finally {
      const ms = parseMs + d.frontEndWork.take(req);
      const debt = Math.floor(ms / d.fairUse.parseMsPerToken) + Math.max(0, Math.ceil(bytes / d.fairUse.bytesPerToken) - took);
      if (debt > 0) {
        d.throttle
          .charge(fairUseSubject(req.auth!.account._id), debt)
          .catch((err: unknown) => req.log.warn({ err, debt, parseMs: Math.round(ms) }, 'parse time not charged'));
      }
    }
  };
  return async (req: Request, res: Response) => {
    const auth = req.auth!;
    const caller = (): Caller => ({ auth, requestId: req.requestId, deadline: req.deadline, log: req.log, imageQueued: () => d.bodyHandedOff(req) });
    const idempotencyKey = req.get('idempotency-key');
    const tokens = declaredTokens(req, d.fairUse.bytesPerToken);
    // A key with an entry is answered from it (a replay, or 409 while its call runs), uncharged; its body is still
    // read and compared, so it takes its fair-use tokens like any call.
    const known = idempotencyKey !== undefined && (await req.deadline.race('idempotency', d.idempotency.has(auth.account._id, idempotencyKey)));
    if (known) await req.deadline.race('throttle', d.throttle.take(fairUseSubject(auth.account._id), tokens));
    let reservation: Reservation | null = known ? null : await d.check.reserve(caller(), tokens);
    let running = false;
    try {
      const { image, imageFormat, canonical } = await readRequest(req, res, idempotencyKey !== undefined, tokens);
      const claim = await req.deadline.race('idempotency', d.idempotency.claim(auth.account._id, idempotencyKey, canonical, req.requestId));
      if (claim.kind === 'replay') {
        res.setHeader('Idempotent-Replayed', 'true');
        res.status(claim.response.status).json(claim.response.body);
        return;
      }
      if (claim.kind === 'committed') {
        // The worker billed this key's call but its answer never reached the caller (a 503 or a crash): serve it now.
        res.setHeader('Idempotent-Replayed', 'true');
        answer(res, d.check.replay(caller(), claim.outcomeJson));
        return;
      }
      const entry = claim.kind === 'new' ? claim : null;
      try {
        // The entry was gone by the time the body came (it expired): this is a new call after all (its tokens are taken).
        reservation ??= await d.check.reserve(caller(), 0);
        running = true;
        const stored = answer(res, await d.check.run(caller(), reservation, image, imageFormat, entry?.entryKey));
        await entry?.finish(stored);
      } catch (err) {
        // Unbilled: no entry is kept (a committed outcome stays), so the key can be retried and costs Redis nothing.
        await entry?.finish(null).catch(() => undefined);
        throw err;
      }
    } finally {
      if (reservation && !running) await d.check.release(caller(), reservation);
    }
  };
}
