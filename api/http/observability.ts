// Owns HTTP metrics and the orchestrator endpoints (/livez, /readyz, /metrics) shared by the front-ends.
import type { Express, NextFunction, Request, Response } from 'express';
import type { Metrics } from '../../shared/metrics';

export function httpMetrics(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const end = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      // The route template, never the raw path: raw paths would create a series per URL.
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}

export interface Readiness {
  /** False once shutdown begins, so the orchestrator stops sending traffic before we stop accepting. */
  accepting: boolean;
  check(): Promise<{ ok: boolean; detail: Record<string, boolean> }>;
}

export function mountOpsEndpoints(app: Express, metrics: Metrics, readiness: Readiness): void {
  app.get('/livez', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (!readiness.accepting) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    const { ok, detail } = await readiness.check();
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'error', ...detail });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.end(await metrics.registry.metrics());
  });
}
