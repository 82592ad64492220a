// Owns the client's retries, the one place that reads Retry-After: a fetch that sends a request again after
// 429 and 503 (waiting at least what Retry-After asks), after 502 and 504 from a proxy, and after a failed
// connection (waiting 1, 2, 4 … s), up to a number of attempts and a total wait. A Retry-After speaks for the
// account (429) or the service (503), so it holds every request of the client until it has passed, not only the
// refused one. An answer asking for a longer wait than the policy allows (a 429 `quota_exceeded` counts to the
// next month) is handed back at once.

export interface RetryPolicy {
  /** Times a request is sent at most, the first included; 1 turns retrying off. Default 3. */
  maxAttempts?: number;
  /** The longest single wait, in seconds; an answer asking for more is returned without waiting. Default 60. */
  maxWaitSeconds?: number;
  /** The most waited in all for one call, in seconds; a wait past it is not started. Default 120. */
  maxTotalWaitSeconds?: number;
  /** How to wait (tests pass one that records the waits). */
  sleep?: (ms: number) => Promise<void>;
}

/** Statuses a request is sent again after: the service's own 429 and 503, and a gateway's 502 and 504. */
const RETRYABLE = new Set([429, 502, 503, 504]);

/** A failed connection after the last attempt, with how many attempts were made. */
export class RetriesExhausted extends Error {
  constructor(
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

const attemptsByResponse = new WeakMap<Response, number>();

/** How many times the request behind `response` was sent. */
export function attemptsOf(response: Response): number {
  return attemptsByResponse.get(response) ?? 1;
}

/** Retry-After in seconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The backoff when the service named no wait: 1, 2, 4 … s, at most 30 s. */
const backoffSeconds = (attempt: number) => Math.min(30, 2 ** (attempt - 1));

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `fetchImpl` with the policy's retries; the Request is cloned before each send, so its body can go again.
 * One per client: the hold a Retry-After puts on its requests lives here.
 */
export function retryingFetch(policy: RetryPolicy = {}, fetchImpl: typeof fetch = globalThis.fetch): (request: Request) => Promise<Response> {
  const maxAttempts = Math.max(1, policy.maxAttempts ?? 3);
  const maxWait = policy.maxWaitSeconds ?? 60;
  const maxTotal = policy.maxTotalWaitSeconds ?? 120;
  const sleep = policy.sleep ?? defaultSleep;
  let heldUntil = 0;
  return async (request) => {
    let waited = 0;
    /** The end of this request's own wait, once it has set the hold: no second wait for the same hold. */
    let ownHold = 0;
    for (let attempt = 1; ; attempt++) {
      const held = heldUntil - Date.now();
      if (held > 0 && heldUntil !== ownHold) await sleep(held);
      const last = attempt === maxAttempts;
      let wait: number;
      let asked = false;
      try {
        const response = await fetchImpl(last ? request : request.clone());
        attemptsByResponse.set(response, attempt);
        if (last || !RETRYABLE.has(response.status)) return response;
        const retryAfter = retryAfterSeconds(response.headers);
        asked = retryAfter !== null;
        wait = retryAfter ?? backoffSeconds(attempt);
        if (wait > maxWait || waited + wait > maxTotal) return response;
        await response.body?.cancel();
      } catch (err) {
        if (request.signal.aborted) throw err;
        wait = backoffSeconds(attempt);
        if (last || waited + wait > maxTotal) throw new RetriesExhausted(attempt, err);
      }
      // Never sooner than asked: up to a fifth more, so clients told the same wait do not all come back together.
      let ms = wait * 1000 * (1 + Math.random() * 0.2);
      if (asked) {
        heldUntil = ownHold = Math.max(heldUntil, Date.now() + ms);
        ms = heldUntil - Date.now();
      }
      waited += wait;
      await sleep(ms);
    }
  };
}
