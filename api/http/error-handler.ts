// Owns the mapping of errors to HTTP: every front-end installs this with its own body shape.
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

/** Renders an AppError as the front-end's documented error body. */
export type ErrorRenderer = (err: AppError, req: Request, res: Response) => unknown;

/** Errors raised by Express's own body parsers, as typed AppErrors. */
function fromFrameworkError(err: unknown, bodyLimitError: () => AppError): AppError | null {
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.too.large') return bodyLimitError();
  if (e?.type === 'entity.parse.failed') return new InvalidRequestError('Request body is not valid JSON');
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return new InvalidRequestError('Unsupported body encoding or charset');
  }
  if (e?.type === 'request.aborted') return new InvalidRequestError('Request aborted by the client');
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError('database unavailable', 5);
  if (isRedisUnavailable(err)) return new ServiceUnavailableError('queue unavailable', 5);
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new InvalidRequestError('Malformed request');
  }
  return null;
}

export function errorHandler(
  render: ErrorRenderer,
  bodyLimitError: () => AppError = () => new PayloadTooLargeError('Request body too large'),
): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const appError = err instanceof AppError ? err : fromFrameworkError(err, bodyLimitError);
    const finalError = appError ?? new InternalError();
    if (!appError) req.log?.error({ err }, 'unhandled error');
    else if (finalError.httpStatus >= 500) req.log?.warn({ code: finalError.code }, finalError.message);
    if (finalError instanceof TooManyRequestsError || finalError instanceof ServiceUnavailableError) {
      res.setHeader('Retry-After', String(finalError.retryAfterSeconds));
    }
    if (finalError instanceof MethodNotAllowedError) res.setHeader('Allow', finalError.allowed.join(', '));
    res.status(finalError.httpStatus).json(render(finalError, req, res));
  };
}
