// Owns what every front-end's Express app does before its own routes: no X-Powered-By or ETag, the
// trusted proxies, the request context (id, logger), the request's deadline from arrival, HTTP metrics,
// helmet's headers, the ops endpoints (/livez, /readyz, /metrics) and the API reference.
import express, { type Express } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import type { Logger } from '../../shared/logger';
import type { Metrics } from '../../shared/metrics';
import { mountOpsEndpoints, type Readiness } from '../../shared/http/ops-endpoints';
import { mountApiReference, type ApiReference } from '../openapi/serve';
import { requestDeadline } from './deadline';
import { httpMetrics } from './http-metrics';
import { requestContext } from './request-context';

export interface PreambleDeps {
  log: Logger;
  metrics: Metrics;
  /** Express `trust proxy` (TRUST_PROXY): whose X-Forwarded-For names the client. */
  trustProxy: number | string[];
  /** Every route spends at most this from the moment the request arrived. */
  budgetMs: number;
  readiness: Readiness;
}

export function createFrontEndApp(d: PreambleDeps, own: { apiReference: ApiReference; helmet?: HelmetOptions }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', d.trustProxy);
  app.use(requestContext(d.log));
  app.use(requestDeadline(d.budgetMs));
  app.use(httpMetrics(d.metrics));
  app.use(helmet(own.helmet));
  mountOpsEndpoints(app, d.metrics, d.readiness);
  mountApiReference(app, own.apiReference);
  return app;
}
