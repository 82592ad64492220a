// Sends one audio file to the emotion API, retrying 429/503 and network errors with backoff that
// honours Retry-After. Anything else (a 4xx) is final.
import fs from 'node:fs';
import { contentTypeFor } from './inputs';

export interface ReplayRecord {
  file: string;
  ok: boolean;
  status: number;
  attempts: number;
  ms: number;
  result?: {
    meta: Record<string, unknown>;
    results: Array<{ from: number; to: number; rough: number; soft: number; speech_ratio?: number }>;
    summary?: Record<string, number>;
  };
  error?: { code: string; message: string };
}

export interface ClientOptions {
  url: string;
  token: string;
  maxAttempts: number;
  /** Cap of one wait, in seconds (Retry-After may ask for up to 120 s). */
  maxWaitSeconds: number;
  sleep?: (ms: number) => Promise<void>;
}

const RETRYABLE = new Set([429, 502, 503, 504]);

function backoffSeconds(attempt: number, retryAfter: string | null, cap: number): number {
  const asked = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : NaN;
  const base = Number.isFinite(asked) ? asked : Math.min(30, 2 ** attempt);
  return Math.min(cap, base) * (0.9 + Math.random() * 0.2);
}

export async function sendFile(file: string, o: ClientOptions): Promise<ReplayRecord> {
  const sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  const body = fs.readFileSync(file);
  const started = Date.now();
  let last: ReplayRecord = { file, ok: false, status: 0, attempts: 0, ms: 0 };
  for (let attempt = 1; attempt <= o.maxAttempts; attempt++) {
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
        return { file, ok: true, status: res.status, attempts: attempt, ms: Date.now() - started, result: json as ReplayRecord['result'] };
      }
      const error = (json as { error?: { code: string; message: string } } | null)?.error ?? { code: `http_${res.status}`, message: text.slice(0, 200) };
      last = { file, ok: false, status: res.status, attempts: attempt, ms: Date.now() - started, error };
      if (!RETRYABLE.has(res.status)) return last;
      retryAfter = res.headers.get('retry-after');
    } catch (err) {
      last = { file, ok: false, status: 0, attempts: attempt, ms: Date.now() - started, error: { code: 'network_error', message: (err as Error).message } };
    }
    if (attempt < o.maxAttempts) await sleep(backoffSeconds(attempt, retryAfter, o.maxWaitSeconds) * 1000);
  }
  return last;
}
