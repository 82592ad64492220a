// Owns the liveness front-end process: builds its dependencies from config, listens, and stops cleanly.
import type { Express } from 'express';
import type { Config } from '../../shared/config';
import { requireUrl } from '../../shared/config';
import { createLogger, type Logger } from '../../shared/logger';
import { createMetrics } from '../../shared/metrics';
import { checkEvictionPolicy, closeRedis, createRedis, waitUntilReady } from '../../shared/redis';
import { connectMongo, pingMongo } from '../../shared/db/mongo';
import { createModels, ensureIndexes, type Models } from '../../shared/db/models';
import { AccountService } from '../../shared/accounts/account-service';
import { CreditLedger } from '../../shared/billing/credit-ledger';
import { systemClock, type Clock } from '../../shared/billing/month';
import { JobClient } from '../../shared/queues/job-client';
import { QUEUE_NAMES } from '../../shared/queues/contracts';
import { listen } from '../http/server';
import { Throttle } from '../http/throttle';
import type { Readiness } from '../http/observability';
import { createLivenessApp } from './app';
import { IdempotencyStore } from './idempotency';

export interface LivenessServerOptions {
  config: Config;
  log?: Logger;
  clock?: Clock;
  /** Database name (tests isolate per file); default: the URI's. */
  dbName?: string;
  /** Mounts more routes on the same app (the console). Receives the shared dependencies. */
  extend?: (app: Express, deps: LivenessServerDeps) => void;
}

export interface LivenessServerDeps {
  config: Config;
  log: Logger;
  models: Models;
  accounts: AccountService;
  ledger: CreditLedger;
  redis: ReturnType<typeof createRedis>;
  clock: Clock;
}

export interface RunningLivenessApi {
  port: number;
  deps: LivenessServerDeps;
  stop(): Promise<void>;
}

export async function startLivenessApi(o: LivenessServerOptions): Promise<RunningLivenessApi> {
  const { config } = o;
  const log = o.log ?? createLogger('liveness-api', config.LOG_LEVEL);
  const clock = o.clock ?? systemClock;
  const redisUrl = requireUrl(config, 'REDIS_URL');
  const redis = createRedis(redisUrl, 'producer', 'liveness-api');
  const subscriber = createRedis(redisUrl, 'subscriber', 'liveness-api-results');
  const mongo = await connectMongo(requireUrl(config, 'MONGODB_URI'), o.dbName);
  const models = createModels(mongo);
  await ensureIndexes(models);
  await waitUntilReady(redis, 15_000);
  await checkEvictionPolicy(redis, log);

  const metrics = createMetrics('liveness-api');
  const jobs = new JobClient({
    redis,
    subscriber,
    prefix: config.QUEUE_PREFIX,
    queueName: QUEUE_NAMES.liveness,
    log,
    maxBacklogPerWorker: config.MAX_BACKLOG_PER_WORKER,
    expectedWorkers: config.EXPECTED_LIVENESS_WORKERS,
  });
  await jobs.start();
  metrics.watchQueue(jobs.queue);
  metrics.watchDependency('redis', async () => redis.status === 'ready');
  metrics.watchDependency('mongodb', () => pingMongo(mongo));

  const accounts = new AccountService(models, clock);
  const ledger = new CreditLedger(redis, config.QUEUE_PREFIX, models, clock);
  const deps: LivenessServerDeps = { config, log, models, accounts, ledger, redis, clock };
  const readiness: Readiness = {
    accepting: true,
    async check() {
      const detail = { mongodb: await pingMongo(mongo), redis: redis.status === 'ready' };
      return { ok: detail.mongodb && detail.redis, detail };
    },
  };
  const app = createLivenessApp({
    log,
    metrics,
    redis,
    mongo,
    accounts,
    ledger,
    jobs,
    throttle: new Throttle(redis, config.QUEUE_PREFIX, {
      burst: config.THROTTLE_BURST,
      ratePerSecond: config.THROTTLE_RATE_PER_SEC,
      code: 'rate_limited',
      message: 'Too many requests for this API key; slow down',
    }),
    idempotency: new IdempotencyStore(redis, config.QUEUE_PREFIX),
    clock,
    budgetMs: config.LIVENESS_BUDGET_MS,
    readiness,
    mount: o.extend ? (a) => o.extend!(a, deps) : undefined,
  });
  const server = await listen(app, config.LIVENESS_PORT, config.HOST);
  log.info({ port: server.port }, 'liveness API listening');

  return {
    port: server.port,
    deps,
    async stop() {
      readiness.accepting = false;
      await server.close(config.LIVENESS_BUDGET_MS + 1000);
      await jobs.close();
      await closeRedis(subscriber);
      await closeRedis(redis);
      await mongo.close();
      log.info('liveness API stopped');
    },
  };
}
