// Owns the field benchmark's client side: HTTP calls bound to a chosen loopback source address (node:http,
// so each call's socket takes `localAddress`), each with a hard time-out, and the tallies it prints
// (status + error code counts, p50/p99/max).
import http from 'node:http';

export interface Shot {
  status: number;
  /** The error envelope's code, or the socket error; '' for a success. */
  code: string;
  ms: number;
  requestId: string | null;
  body: string;
  headers: http.IncomingHttpHeaders;
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Source address of the client socket (127.0.0.10-39 in the field scenario). */
  localAddress?: string;
  /** The client gives up after this long (status 0, code 'client_timeout'). */
  timeoutMs?: number;
  /** A bench's own private /24 (its first three octets, bench:hosts' namespaces), reachable besides loopback. */
  network?: string;
}

/** One HTTP call to loopback; never throws (a socket failure is status 0 with its code). */
export function call(url: string, o: CallOptions = {}): Promise<Shot> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const done = (s: Omit<Shot, 'ms'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...s, ms: performance.now() - t0 });
    };
    const u = new URL(url);
    if (u.hostname !== '127.0.0.1' && !(o.network && u.hostname.startsWith(`${o.network}.`)))
      throw new Error(`benchmarks send traffic to loopback or their own network only, not ${u.hostname}`);
    const body = typeof o.body === 'string' ? Buffer.from(o.body) : o.body;
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: o.method ?? 'GET',
        localAddress: o.localAddress,
        agent: false,
        headers: { ...o.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err: NodeJS.ErrnoException) => done({ status: 0, code: err.code ?? err.message, requestId: null, body: '', headers: res.headers }));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let code = '';
          if (res.statusCode !== 200 && res.statusCode !== 303 && res.statusCode !== 302) {
            try {
              const error = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
              code = error?.code ?? '';
              if (res.statusCode === 503) code += /capacity/.test(error?.message ?? '') ? ' (admission)' : ` (${(error?.message ?? '').slice(0, 60)})`;
            } catch {
              code = 'not JSON';
            }
          }
          done({ status: res.statusCode ?? 0, code, requestId: (res.headers['x-request-id'] as string) ?? null, body: text, headers: res.headers });
        });
      },
    );
    req.setTimeout(o.timeoutMs ?? 30_000, () => {
      done({ status: 0, code: 'client_timeout', requestId: null, body: '', headers: {} });
      req.destroy();
    });
    req.on('error', (err: NodeJS.ErrnoException) => done({ status: 0, code: err.code ?? err.message, requestId: null, body: '', headers: {} }));
    req.end(body);
  });
}

export const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
export const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '-');

export interface Tally {
  n: number;
  codes: string;
  p50: number;
  p99: number;
  max: number;
  ok: number;
}

/** Status/code counts ("297 × 200, 3 × 503 ...") and client latency percentiles of a set of calls. */
export function tally(shots: Shot[]): Tally {
  const counts = new Map<string, number>();
  for (const s of shots) {
    const k = `${s.status}${s.code ? ` ${s.code}` : ''}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const ms = shots.map((s) => s.ms).sort((a, b) => a - b);
  return {
    n: shots.length,
    codes: [...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${n} × ${k}`)
      .join(', '),
    p50: pct(ms, 50),
    p99: pct(ms, 99),
    max: ms[ms.length - 1] ?? NaN,
    ok: shots.filter((s) => s.status === 200).length,
  };
}

/** `n` calls of `op` at once, timed one by one: how many answered, how many threw (and the first error's name), p50/p99/max. */
export interface BurstRow {
  ok: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
  firstError: string;
}

export async function timedBurst(n: number, op: (i: number) => Promise<unknown>): Promise<BurstRow> {
  const ms: number[] = [];
  let errors = 0;
  let firstError = '';
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const t0 = performance.now();
      try {
        await op(i);
        ms.push(performance.now() - t0);
      } catch (err) {
        errors++;
        firstError ||= (err as Error).name;
      }
    }),
  );
  ms.sort((a, b) => a - b);
  return { ok: ms.length, errors, p50: pct(ms, 50), p99: pct(ms, 99), max: ms[ms.length - 1] ?? NaN, firstError };
}
