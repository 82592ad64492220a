// Raw HTTP for the abuse suites: bodies as exact bytes, headers fetch() would refuse, and a hard time limit.
import http from 'node:http';

export interface RawResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
  ms: number;
}

export function rawRequest(
  port: number,
  opts: { method?: string; path: string; headers?: Record<string, string | string[]>; body?: Buffer | string; timeoutMs?: number },
): Promise<RawResult> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: opts.method ?? 'POST', path: opts.path, headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - t0 });
      });
      res.on('error', reject);
    });
    req.setTimeout(opts.timeoutMs ?? 30_000, () => req.destroy(new Error(`no answer within ${opts.timeoutMs ?? 30_000} ms`)));
    req.on('error', (err) => {
      // The server may answer (413, 401) and close before the whole body is sent: that answer counts.
      reject(err);
    });
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}
