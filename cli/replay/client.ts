// Sends one audio file to the emotion API through the typed client (clients/typescript), which retries 429, 503 and
// failed connections, never sooner than a Retry-After asks; the run's senders share one client, so a Retry-After
// holds them all (it speaks for the account or the service, not for the one file). Anything else (a 4xx) is final.
import fs from 'node:fs';
import { createEmotionClient, type EmotionAnalysis, type EmotionClient } from '../../clients/typescript/src';
import { contentTypeFor } from './inputs';

export interface ReplayRecord {
  file: string;
  ok: boolean;
  status: number;
  attempts: number;
  ms: number;
  /** The service's own time on the file (the `worker` stage of its Server-Timing), when it said. */
  workerMs?: number;
  result?: EmotionAnalysis;
  error?: { code: string; message: string };
}

const ANALYSIS_PATH = '/feelings/v3/analysis';

export interface ReplayClientOptions {
  /** The analysis endpoint (…/feelings/v3/analysis) or the service's base URL. */
  url: string;
  token: string;
  maxAttempts: number;
  /** The longest single wait, in seconds (the emotion API's Retry-After is 60–120 s). */
  maxWaitSeconds: number;
}

/** The one client a run's senders share. */
export function replayClient(o: ReplayClientOptions): EmotionClient {
  const base = o.url.replace(/\/+$/, '');
  return createEmotionClient({
    baseUrl: base.endsWith(ANALYSIS_PATH) ? base.slice(0, -ANALYSIS_PATH.length) : base,
    token: o.token,
    retry: { maxAttempts: o.maxAttempts, maxWaitSeconds: o.maxWaitSeconds, maxTotalWaitSeconds: o.maxAttempts * o.maxWaitSeconds },
  });
}

/** The `worker` stage of a Server-Timing header, in ms. */
function workerStageMs(header: string | null): number | undefined {
  const m = header ? /(?:^|,)\s*worker;dur=([\d.]+)/.exec(header) : null;
  return m ? Number(m[1]) : undefined;
}

export async function sendFile(file: string, client: EmotionClient): Promise<ReplayRecord> {
  const started = Date.now();
  const r = await client.analyzeEmotion(fs.readFileSync(file), contentTypeFor(file));
  const ms = Date.now() - started;
  if (r.error) return { file, ok: false, status: r.error.status, attempts: r.attempts, ms, error: { code: r.error.code, message: r.error.message } };
  const workerMs = workerStageMs(r.response.headers.get('server-timing'));
  return { file, ok: true, status: r.response.status, attempts: r.attempts, ms, ...(workerMs === undefined ? {} : { workerMs }), result: r.data };
}
