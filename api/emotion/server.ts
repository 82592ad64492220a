// Owns the emotion front-end process: dependencies from config, listen, and a clean stop.
import type { Config } from '../../shared/config';
import { createLogger, type Logger } from '../../shared/logger';
import { EmotionTokenService, type AuthenticatedToken } from '../../shared/accounts/emotion-tokens';
import { AccountService } from '../../shared/accounts/account-service';
import { AuthCache } from '../../shared/accounts/auth-cache';
import { systemClock, type Clock } from '../../shared/billing/month';
import { QUEUE_NAMES } from '../../shared/queues/contracts';
import { startFrontEndBase } from '../http/front-end';
import { authFailureGuard, Throttle } from '../http/throttle';
import { uploadGate } from '../http/upload-gate';
import { createEmotionApp } from './app';

export interface RunningEmotionApi {
  port: number;
  /** The port of /metrics when METRICS_PORT moved it off the customer port. */
  metricsPort: number | null;
  stop(): Promise<void>;
}

export async function startEmotionApi(o: { config: Config; log?: Logger; dbName?: string; clock?: Clock }): Promise<RunningEmotionApi> {
  const { config } = o;
  const log = o.log ?? createLogger('emotion-api', config.LOG_LEVEL);
  const base = await startFrontEndBase({
    config,
    log,
    service: 'emotion-api',
    queueName: QUEUE_NAMES.emotion,
    dbName: o.dbName,
  });
  const clock = o.clock ?? systemClock;
  // The API keys' auth cache (the same Redis keys): a known token costs one round trip and no database read.
  const authCache = new AuthCache<AuthenticatedToken>(base.redis, config.QUEUE_PREFIX);
  const accounts = new AccountService(base.models, clock, authCache);
  const app = createEmotionApp({
    log,
    metrics: base.metrics,
    // Tokens follow their account's status (a scheduled cancellation applies on the 1st of the month).
    tokens: new EmotionTokenService(base.models, { accountOf: (id) => accounts.current(id), cache: authCache, clock }),
    jobs: base.jobs,
    // Tokens are seconds of audio (api/emotion/step.ts, fair use).
    throttle: new Throttle(base.redis, config.QUEUE_PREFIX, {
      burst: config.EMOTION_FAIR_USE_BURST_SECONDS,
      ratePerSecond: config.EMOTION_FAIR_USE_SECONDS_PER_SEC,
      code: 'rate_limited',
      message: 'Too much audio in a short time; retry after about 1 to 2 minutes',
      minRetryAfterSeconds: 60,
    }),
    upfrontSeconds: config.EMOTION_FAIR_USE_UPFRONT_SECONDS,
    secondsPerWorkerSecond: config.EMOTION_FAIR_USE_SECONDS_PER_WORKER_SECOND,
    authFailures: authFailureGuard(base.redis, config),
    trustProxy: config.TRUST_PROXY,
    budgetMs: config.EMOTION_BUDGET_MS,
    uploads: uploadGate(config),
    readiness: base.readiness,
  });
  return base.serve(app, config.EMOTION_PORT, config.EMOTION_BUDGET_MS + 1000);
}
