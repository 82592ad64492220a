// Owns the emotion front-end process: dependencies from config, listen, and a clean stop.
import type { Config } from '../../shared/config';
import { createLogger, type Logger } from '../../shared/logger';
import { EmotionTokenService } from '../../shared/accounts/emotion-tokens';
import { QUEUE_NAMES } from '../../shared/queues/contracts';
import { startFrontEndBase } from '../http/front-end';
import { authFailureThrottle, Throttle } from '../http/throttle';
import { createEmotionApp } from './app';

export interface RunningEmotionApi {
  port: number;
  stop(): Promise<void>;
}

export async function startEmotionApi(o: { config: Config; log?: Logger; dbName?: string }): Promise<RunningEmotionApi> {
  const { config } = o;
  const log = o.log ?? createLogger('emotion-api', config.LOG_LEVEL);
  const base = await startFrontEndBase({
    config,
    log,
    service: 'emotion-api',
    queueName: QUEUE_NAMES.emotion,
    expectedWorkers: config.EXPECTED_EMOTION_WORKERS,
    dbName: o.dbName,
  });
  const app = createEmotionApp({
    log,
    metrics: base.metrics,
    tokens: new EmotionTokenService(base.models),
    jobs: base.jobs,
    throttle: new Throttle(base.redis, config.QUEUE_PREFIX, {
      burst: config.THROTTLE_BURST,
      ratePerSecond: config.THROTTLE_RATE_PER_SEC,
      code: 'rate_limited',
      message: 'Too many requests; retry after about 1 to 2 minutes',
      minRetryAfterSeconds: 60,
    }),
    authFailures: authFailureThrottle(base.redis, config.QUEUE_PREFIX, config.AUTH_FAILURE_BURST, config.AUTH_FAILURE_RATE_PER_SEC),
    budgetMs: config.EMOTION_BUDGET_MS,
    readiness: base.readiness,
  });
  return base.serve(app, config.EMOTION_PORT, config.EMOTION_BUDGET_MS + 1000);
}
