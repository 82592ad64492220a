// Owns the orchestrator endpoints every process serves (/livez, /readyz, /metrics): front-ends and workers.
// With METRICS_PORT a front-end serves /metrics on its own port instead, and the customer port has none.
import express, { type Express } from 'express';
import type { Metrics } from '../metrics';

/** Metrics whose /metrics moved to their own port: the customer-facing app answers 404 for them. */
const onOwnPort = new WeakSet<Metrics>();

/** An app that serves only GET /metrics (for METRICS_PORT); from now on the customer app does not. */
export function createMetricsApp(metrics: Metrics): Express {
  onOwnPort.add(metrics);
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.end(await metrics.registry.metrics());
  });
  return app;
}

export interface Readiness {
  /**
   * False once shutdown begins. An orchestrator only stops sending traffic in time if it sees this before the
   * listener closes: SHUTDOWN_DELAY_MS (default 0: the listener closes at once) or a preStop hook gives it that time.
   */
  accepting: boolean;
  check(): Promise<{ ok: boolean; detail: Record<string, boolean> }>;
}

/** How long one readiness answer is reused: /readyz needs no credential, so a flood of it costs one check a second. */
export const READINESS_REUSE_MS = 1000;

/**
 * `check` shared by its callers: concurrent calls wait for one run, and its answer is reused for `reuseMs`
 * (a failed run is not reused beyond the callers that waited for it, so recovery is seen at once).
 */
export function sharedCheck<T extends { ok: boolean }>(check: () => Promise<T>, reuseMs = READINESS_REUSE_MS, now = () => Date.now()): () => Promise<T> {
  let last: { at: number; answer: T } | undefined;
  let running: Promise<T> | undefined;
  return () => {
    if (last && last.answer.ok && now() - last.at < reuseMs) return Promise.resolve(last.answer);
    running ??= check()
      .then((answer) => {
        last = { at: now(), answer };
        return answer;
      })
      .finally(() => (running = undefined));
    return running;
  };
}

export function mountOpsEndpoints(app: Express, metrics: Metrics, readiness: Readiness): void {
  const check = sharedCheck(() => readiness.check());
  app.get('/livez', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (!readiness.accepting) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    const { ok, detail } = await check();
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'error', ...detail });
  });
  app.get('/metrics', async (_req, res, next) => {
    if (onOwnPort.has(metrics)) return next();
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.end(await metrics.registry.metrics());
  });
}
