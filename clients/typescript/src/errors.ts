// Owns the client's one error value: an answer that is not a success, or no answer at all, becomes an ApiError
// carrying the documented `code` (typed per operation from the OpenAPI document), the HTTP status, our
// X-Request-Id to quote to support, and the Retry-After the service asked for.

/** Codes the client itself gives when there is no documented error body to read. */
export type TransportErrorCode =
  /** No answer: the connection failed or was cut (status 0). */
  | 'network_error'
  /** An answer that is not the documented error body (a proxy's HTML page, say), or a success body that is not JSON. */
  | 'unexpected_response';

/** The documented error codes of an operation (`operations['checkLiveness']`, say), from every non-2xx response. */
export type ErrorCodeOf<Operation> = Operation extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 204 ? never : R[S] extends { content: { 'application/json': { error: { code: infer C } } } } ? C : never }[keyof R]
  : never;

export class ApiError<Code extends string = string> extends Error {
  override readonly name = 'ApiError';

  constructor(
    /** The documented code (`invalid_api_key`, `rate_limited`, …) or a TransportErrorCode. */
    readonly code: Code | TransportErrorCode,
    message: string,
    /** The HTTP status; 0 when no answer came. */
    readonly status: number,
    /** Our X-Request-Id of the (last) answer: quote it to support. */
    readonly requestId: string | null,
    /** Seconds the last answer's Retry-After asked for (429 and 503), else null. */
    readonly retryAfterSeconds: number | null,
    /** How many times the request was sent. */
    readonly attempts: number,
  ) {
    super(message);
  }
}
