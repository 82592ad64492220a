// Owns turning one openapi-fetch call into the client's result: `{ data }` on a success, `{ error: ApiError }`
// otherwise, each with our X-Request-Id; a failure to connect or an unreadable answer become ApiErrors too, so a
// call never throws for anything the service or the network did.
import { ApiError } from './errors';
import { attemptsOf, RetriesExhausted, retryAfterSeconds } from './retry';

export type ApiResult<T, Code extends string> =
  | { data: T; error?: undefined; requestId: string | null; attempts: number; response: Response }
  | { data?: undefined; error: ApiError<Code>; requestId: string | null; attempts: number; response?: Response };

/** What an openapi-fetch call resolves to, whatever its operation. */
interface FetchOutcome {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The documented error body of both APIs: `{ error: { code, message } }` (liveness adds `metadata`). */
function envelopeError(body: unknown): { code: string; message: string } | null {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof error !== 'object' || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? { code, message: typeof message === 'string' ? message : code } : null;
}

/**
 * Settles a call: the success value is the documented body as it is (`read` can take it from the answer's
 * headers instead), and `Code` is the operation's documented error codes, from the generated types.
 */
export async function settle<T, Code extends string>(
  call: () => Promise<FetchOutcome>,
  read: (data: unknown, response: Response) => T = (data) => data as T,
  readError: (body: unknown) => { code: string; message: string } | null = envelopeError,
): Promise<ApiResult<T, Code>> {
  let outcome: FetchOutcome;
  try {
    outcome = await call();
  } catch (err) {
    if (err instanceof RetriesExhausted) {
      return { error: new ApiError<Code>('network_error', err.message, 0, null, null, err.attempts), requestId: null, attempts: err.attempts };
    }
    if (err instanceof SyntaxError) {
      // openapi-fetch parses a 2xx body as JSON: a success that is not JSON did not come from the service.
      return { error: new ApiError<Code>('unexpected_response', err.message, 0, null, null, 1), requestId: null, attempts: 1 };
    }
    return { error: new ApiError<Code>('network_error', (err as Error).message, 0, null, null, 1), requestId: null, attempts: 1 };
  }
  const { response } = outcome;
  const requestId = response.headers.get('x-request-id');
  const attempts = attemptsOf(response);
  if (response.ok) return { data: read(outcome.data, response), requestId, attempts, response };
  const body = readError(outcome.error);
  const code = body?.code ?? 'unexpected_response';
  const message = body?.message ?? `HTTP ${response.status}${typeof outcome.error === 'string' ? `: ${outcome.error.slice(0, 200)}` : ''}`;
  return {
    error: new ApiError<Code>(code as Code, message, response.status, requestId, retryAfterSeconds(response.headers), attempts),
    requestId,
    attempts,
    response,
  };
}
