// Owns the front-ends' per-request telemetry: the HTTP duration histogram and the access log, both written
// once the response has finished. Log fields: docs/operations.md ("Logs").
import type { NextFunction, Request, Response } from 'express';
import type { Metrics } from '../../shared/metrics';

/** Whose call it was, without a credential: the account behind an API key, or the emotion token's id. */
function caller(req: Request): { customerId?: string; tokenId?: string } {
  if (req.auth) return { customerId: req.auth.account._id };
  if (req.emotionToken) return { customerId: req.emotionToken.customerId ?? undefined, tokenId: req.emotionToken._id };
  return {};
}

export function httpMetrics(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const end = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      // The route template, never the raw path: raw paths would create a series per URL.
      const template = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof template === 'string' ? `${req.baseUrl}${template}` : 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
      // Probes and scrapes would drown the log: they are counted by the histogram only.
      if (route === '/livez' || route === '/readyz' || route === '/metrics') return;
      req.log?.info(
        {
          method: req.method,
          route,
          status: res.statusCode,
          ms: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
          bytesIn: Number(req.get('content-length') ?? 0),
          bytesOut: Number(res.getHeader('content-length') ?? 0),
          ip: req.ip,
          ...(req.uploadCreditMs !== undefined && { uploadCreditMs: req.uploadCreditMs }),
          ...caller(req),
        },
        'request',
      );
    });
    next();
  };
}
