// Owns the typed errors every layer throws; api/http/error-handler.ts maps them to HTTP in one place.

/** An error whose code and HTTP status are part of a public contract. */
export class AppError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus: number,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidRequestError extends AppError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('invalid_request', message, 400, details);
  }
}

/** Input bytes that cannot be used: undecodable, mismatched format, no face, unsupported audio. */
export class InvalidInputError extends AppError {
  constructor(code: string, message: string, details?: Record<string, unknown>) {
    super(code, message, 400, details);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message: string, code = 'payload_too_large') {
    super(code, message, 413);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Resource not found') {
    super('not_found', message, 404);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(readonly allowed: string[]) {
    super('method_not_allowed', `Method not allowed; use ${allowed.join(', ')}`, 405);
  }
}

export class UnauthenticatedError extends AppError {
  constructor(code: string, message: string) {
    super(code, message, 401);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string, code = 'forbidden') {
    super(code, message, 403);
  }
}

export class TooManyRequestsError extends AppError {
  constructor(
    code: string,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(code, message, 429);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
    code = 'service_unavailable',
  ) {
    super(code, message, 503);
  }
}

export class InternalError extends AppError {
  constructor(message = 'Internal server error') {
    super('internal_error', message, 500);
  }
}

/** Shape an error takes when it crosses the queue from a worker back to the API. */
export interface SerializedJobError {
  code: string;
  message: string;
  httpStatus: number;
  details?: Record<string, unknown>;
}

export function serializeJobError(err: unknown): SerializedJobError {
  if (err instanceof AppError) {
    return { code: err.code, message: err.message, httpStatus: err.httpStatus, details: err.details };
  }
  return { code: 'internal_error', message: 'Internal server error', httpStatus: 500 };
}

export function deserializeJobError(e: SerializedJobError): AppError {
  if (e.httpStatus >= 500) {
    // Keep a 503's own code (processing_timeout, deadline_exceeded); a 500 never says more than internal_error.
    return e.httpStatus === 503 ? new ServiceUnavailableError(e.message, 2, e.code) : new InternalError();
  }
  return new AppError(e.code, e.message, e.httpStatus, e.details);
}
