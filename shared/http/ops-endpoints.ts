// Owns the orchestrator endpoints every process serves (/livez, /readyz, /metrics): front-ends and workers.
import type { Express } from 'express';
import type { Metrics } from '../metrics';

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
