// Owns the emotion front-end process: dependencies from config, listen, and a clean stop.
import type { Config } from '../../shared/config';
import { requireUrl } from '../../shared/config';
import { createLogger, type Logger } from '../../shared/logger';
import { createMetrics } from '../../shared/metrics';
import { checkEvictionPolicy, closeRedis, createRedis, waitUntilReady } from '../../shared/redis';
import { connectMongo, pingMongo } from '../../shared/db/mongo';
import { createModels, ensureIndexes } from '../../shared/db/models';
import { EmotionTokenService } from '../../shared/accounts/emotion-tokens';
import { JobClient } from '../../shared/queues/job-client';
import { QUEUE_NAMES } from '../../shared/queues/contracts';
import { listen } from '../http/server';
import { Throttle } from '../http/throttle';
import type { Readiness } from '../http/observability';
import { createEmotionApp } from './app';

export interface RunningEmotionApi {
  port: number;
  stop(): Promise<void>;
}

export async function startEmotionApi(o: { config: Config; log?: Logger; dbName?: string }): Promise<RunningEmotionApi> {
  const { config } = o;
  const log = o.log ?? createLogger('emotion-api', config.LOG_LEVEL);
  const redisUrl = requireUrl(config, 'REDIS_URL');
  const redis = createRedis(redisUrl, 'producer', 'emotion-api');
  const subscriber = createRedis(redisUrl, 'subscriber', 'emotion-api-results');
  const mongo = await connectMongo(requireUrl(config, 'MONGODB_URI'), o.dbName);
  const models = createModels(mongo);
  await ensureIndexes(models);
  await waitUntilReady(redis, 15_000);
  await checkEvictionPolicy(redis, log);

  const metrics = createMetrics('emotion-api');
  const jobs = new JobClient({
    redis,
    subscriber,
    prefix: config.QUEUE_PREFIX,
    queueName: QUEUE_NAMES.emotion,
    log,
    maxBacklogPerWorker: config.MAX_BACKLOG_PER_WORKER,
    expectedWorkers: config.EXPECTED_EMOTION_WORKERS,
  });
  await jobs.start();
  metrics.watchQueue(jobs.queue);
  metrics.watchDependency('redis', async () => redis.status === 'ready');
  metrics.watchDependency('mongodb', () => pingMongo(mongo));

  const readiness: Readiness = {
    accepting: true,
    async check() {
      const detail = { mongodb: await pingMongo(mongo), redis: redis.status === 'ready' };
      return { ok: detail.mongodb && detail.redis, detail };
    },
  };
  const app = createEmotionApp({
    log,
    metrics,
    tokens: new EmotionTokenService(models),
    jobs,
    throttle: new Throttle(redis, config.QUEUE_PREFIX, {
      burst: config.THROTTLE_BURST,
      ratePerSecond: config.THROTTLE_RATE_PER_SEC,
      code: 'rate_limited',
      message: 'Too many requests; retry after about 1 to 2 minutes',
      minRetryAfterSeconds: 60,
    }),
    budgetMs: config.EMOTION_BUDGET_MS,
    readiness,
  });
  const server = await listen(app, config.EMOTION_PORT, config.HOST);
  log.info({ port: server.port }, 'emotion API listening');
  return {
    port: server.port,
    async stop() {
      readiness.accepting = false;
      await server.close(config.EMOTION_BUDGET_MS + 1000);
      await jobs.close();
      await closeRedis(subscriber);
      await closeRedis(redis);
      await mongo.close();
      log.info('emotion API stopped');
    },
  };
}
