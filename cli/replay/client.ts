// Sends one audio file to the emotion API, retrying 429/503 and network errors with backoff that honours
// Retry-After: never sooner than the service asked, and for every sender of the run at once (a Pause they share),
// since both answers are about the account or the service, not about the one file. Anything else (a 4xx) is final.
import fs from 'node:fs';
import { contentTypeFor } from './inputs';

export interface ReplayRecord {
  file: string;
  ok: boolean;
  status: number;
  attempts: number;
  ms: number;
  /** The service's own time on the file (the `worker` stage of its Server-Timing), when it said. */
  workerMs?: number;
  result?: {
    meta: Record<string, unknown>;
    results: Array<{ from: number; to: number; rough: number; soft: number; speech_ratio?: number }>;
    summary?: Record<string, number>;
  };
  error?: { code: string; message: string };
}

/** A run's senders wait here: a 429 or 503 for one of them holds them all until its Retry-After has passed. */
export class Pause {
  private until = 0;

  constructor(private readonly now: () => number = Date.now) {}

  holdFor(ms: number): void {
    this.until = Math.max(this.until, this.now() + ms);
  }

  async wait(sleep: (ms: number) => Promise<void>): Promise<void> {
    for (let left = this.until - this.now(); left > 0; left = this.until - this.now()) await sleep(left);
  }
}

export interface ClientOptions {
  url: string;
  token: string;
  maxAttempts: number;
  /** Cap of one wait, in seconds (Retry-After may ask for up to 120 s). */
  maxWaitSeconds: number;
  /** Shared by the run's senders; default: this file's own. */
  pause?: Pause;
  sleep?: (ms: number) => Promise<void>;
}

const RETRYABLE = new Set([429, 502, 503, 504]);

/** Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110); null when absent or unreadable. */
function retryAfterSeconds(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  if (/^\s*\d+\s*$/.test(header)) return Number(header);
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, (at - now) / 1000) : null;
}

/** The wait before the next attempt: what Retry-After asks (or exponential backoff), plus up to 20 % spread, never less. */
function backoffSeconds(attempt: number, retryAfter: string | null, cap: number): number {
  const base = retryAfterSeconds(retryAfter) ?? Math.min(30, 2 ** attempt);
  return Math.min(cap, base) * (1 + Math.random() * 0.2);
}

/** The `worker` stage of a Server-Timing header, in ms. */
function workerStageMs(header: string | null): number | undefined {
  const m = header ? /(?:^|,)\s*worker;dur=([\d.]+)/.exec(header) : null;
  return m ? Number(m[1]) : undefined;
}

export async function sendFile(file: string, o: ClientOptions): Promise<ReplayRecord> {
  const sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  const pause = o.pause ?? new Pause();
  const body = fs.readFileSync(file);
  const started = Date.now();
  let last: ReplayRecord = { file, ok: false, status: 0, attempts: 0, ms: 0 };
  for (let attempt = 1; attempt <= o.maxAttempts; attempt++) {
    await pause.wait(sleep);
    let retryAfter: string | null = null;
    try {
      const res = await fetch(o.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${o.token}`, 'content-type': contentTypeFor(file) },
        body,
      });
      const text = await res.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        json = null;
      }
      if (res.ok) {
        const workerMs = workerStageMs(res.headers.get('server-timing'));
        return {
          file,
          ok: true,
          status: res.status,
          attempts: attempt,
          ms: Date.now() - started,
          ...(workerMs === undefined ? {} : { workerMs }),
          result: json as ReplayRecord['result'],
        };
      }
      const error = (json as { error?: { code: string; message: string } } | null)?.error ?? { code: `http_${res.status}`, message: text.slice(0, 200) };
      last = { file, ok: false, status: res.status, attempts: attempt, ms: Date.now() - started, error };
      if (!RETRYABLE.has(res.status)) return last;
      retryAfter = res.headers.get('retry-after');
    } catch (err) {
      last = { file, ok: false, status: 0, attempts: attempt, ms: Date.now() - started, error: { code: 'network_error', message: (err as Error).message } };
    }
    if (attempt >= o.maxAttempts) break;
    const waitMs = backoffSeconds(attempt, retryAfter, o.maxWaitSeconds) * 1000;
    // A Retry-After speaks for the account (429) or the service (503): every sender holds, not only this one.
    if (retryAfter !== null) pause.holdFor(waitMs);
    await sleep(waitMs);
  }
  return last;
}
