// Owns the mapping of errors to HTTP: every front-end (the /v1 and /feelings APIs, the console) installs
// errorHandler with its own body shape and its own wording of framework errors (fromFrameworkError).
import type { ErrorRequestHandler, Request, Response } from 'express';
import {
  AppError,
  InternalError,
  InvalidRequestError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  TooManyRequestsError,
} from '../../shared/errors';
import { isDatabaseUnavailable } from '../../shared/db/mongo';
import { isRedisUnavailable } from '../../shared/redis';

/**
 * Renders an AppError as the front-end's documented error body (may look something up first), which the handler
 * sends as JSON; a renderer that answers by itself (the console's HTML page) sends the response and returns nothing.
 */
export type ErrorRenderer = (err: AppError, req: Request, res: Response) => unknown;

/** How a front-end words the framework errors it shows: the API speaks to programs, the console to people. */
export interface FrameworkErrorWording {
  /** The body is over the parser's limit. */
  bodyTooLarge: () => AppError;
  /** One message for every unreadable body (else each case says what is wrong). */
  unreadable?: string;
  /** One message for a database or queue outage (else "database unavailable" / "queue unavailable"). */
  unavailable?: string;
}

/**
 * Errors that Express, its body parsers and the database/queue drivers raise, as typed AppErrors; null
 * for anything else (a bug: the caller logs it and answers internal_error). Used by the API and the console.
 */
export function fromFrameworkError(err: unknown, wording: FrameworkErrorWording): AppError | null {
  const e = err as { type?: string; status?: number } | null | undefined;
  const unreadable = (specific: string) => new InvalidRequestError(wording.unreadable ?? specific);
  if (e?.type === 'entity.too.large') return wording.bodyTooLarge();
  if (e?.type === 'entity.parse.failed') return unreadable('Request body is not valid JSON');
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') return unreadable('Unsupported body encoding or charset');
  if (e?.type === 'request.aborted') return unreadable('Request aborted by the client');
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError(wording.unavailable ?? 'database unavailable', 5);
  if (isRedisUnavailable(err)) return new ServiceUnavailableError(wording.unavailable ?? 'queue unavailable', 5);
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) return unreadable('Malformed request');
  return null;
}

/** The headers an error's status promises: Retry-After on 429/503, Allow on 405. */
function setErrorHeaders(res: Response, err: AppError): void {
  if (err instanceof TooManyRequestsError || err instanceof ServiceUnavailableError) {
    res.setHeader('Retry-After', String(err.retryAfterSeconds));
  }
  if (err instanceof MethodNotAllowedError) res.setHeader('Allow', err.allowed.join(', '));
}

const DEFAULT_WORDING: FrameworkErrorWording = { bodyTooLarge: () => new PayloadTooLargeError('Request body too large') };

/** `wording`: one for every request, or chosen per request (the console's pages and its try-it JSON routes). */
export function errorHandler(
  render: ErrorRenderer,
  wording: FrameworkErrorWording | ((req: Request) => FrameworkErrorWording) = DEFAULT_WORDING,
): ErrorRequestHandler {
  return async (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const appError = err instanceof AppError ? err : fromFrameworkError(err, typeof wording === 'function' ? wording(req) : wording);
    const finalError = appError ?? new InternalError();
    if (!appError) req.log?.error({ err }, 'unhandled error');
    else if (finalError.httpStatus >= 500) req.log?.warn({ code: finalError.code }, finalError.message);
    // Answered before the body was read in full: the connection closes after the answer, so the rest of the
    // upload is never read (UploadGate refuses before reading; a body over the limit is refused unread).
    if (!req.complete) res.setHeader('Connection', 'close');
    setErrorHeaders(res, finalError);
    const body = await render(finalError, req, res);
    if (res.headersSent) return;
    res.status(finalError.httpStatus).json(body);
  };
}
