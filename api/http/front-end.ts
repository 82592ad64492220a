// Owns what every front-end process needs before its routes: Redis (producer + result subscriber),
// MongoDB with indexes, metrics, the job client of its queue (and, opened on first use on the same two
// connections, a job client of another queue: the console's try-it pages on the liveness process run emotion
// jobs), readiness, and closing them in order.
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import type { Config } from '../../shared/config';
import { requireUrl } from '../../shared/config';
import type { Logger } from '../../shared/logger';
import { createMetrics, type Metrics } from '../../shared/metrics';
import { checkEvictionPolicy, closeRedis, createRedis, waitUntilReady } from '../../shared/redis';
import { connectMongo, pingMongo } from '../../shared/db/mongo';
import { createModels, type Models } from '../../shared/db/models';
import { prepareStore } from '../../shared/db/prepare-store';
import { JobClient } from '../../shared/queues/job-client';
import { QUEUE_NAMES, type QueueName } from '../../shared/queues/contracts';
import { createMetricsApp, type Readiness } from '../../shared/http/ops-endpoints';
import { listen } from '../../shared/http/server';
import type { Express } from 'express';

export interface FrontEndBase {
  redis: Redis;
  mongo: Connection;
  models: Models;
  metrics: Metrics;
  /** The job client of this process's queue. */
  jobs: JobClient;
  /** The job client of a queue: this process's own, or one opened on first use on the same connections. */
  jobsFor: (queueName: QueueName) => Promise<JobClient>;
  readiness: Readiness;
  /** Listens; the returned stop() fails readiness, drains within drainMs, then closes everything. */
  serve(app: Express, port: number, drainMs: number): Promise<{ port: number; metricsPort: number | null; stop(): Promise<void> }>;
}

export async function startFrontEndBase(o: { config: Config; log: Logger; service: string; queueName: QueueName; dbName?: string }): Promise<FrontEndBase> {
  const { config, log, service } = o;
  const redisUrl = requireUrl(config, 'REDIS_URL');
  const redis = createRedis(redisUrl, 'producer', service);
  const subscriber = createRedis(redisUrl, 'subscriber', `${service}-results`);
  const mongo = await connectMongo(requireUrl(config, 'MONGODB_URI'), o.dbName);
  const models = createModels(mongo);
  await prepareStore(models);
  await waitUntilReady(redis, 15_000);
  await checkEvictionPolicy(redis, log);

  const metrics = createMetrics(service);
  // Decided before any request: with METRICS_PORT the customer port never serves /metrics.
  const metricsApp = config.METRICS_PORT === undefined ? null : createMetricsApp(metrics);
  const jobClient = (queueName: QueueName) =>
    new JobClient({
      redis,
      subscriber,
      prefix: config.QUEUE_PREFIX,
      queueName,
      log,
      maxBacklogPerWorker: config.MAX_BACKLOG_PER_WORKER,
      expectedWorkers: queueName === QUEUE_NAMES.emotion ? config.EXPECTED_EMOTION_WORKERS : config.EXPECTED_LIVENESS_WORKERS,
    });
  const jobs = jobClient(o.queueName);
  await jobs.start();
  const others = new Map<QueueName, Promise<JobClient>>();
  const jobsFor = (queueName: QueueName): Promise<JobClient> => {
    if (queueName === o.queueName) return Promise.resolve(jobs);
    let other = others.get(queueName);
    if (!other) {
      const client = jobClient(queueName);
      other = client.start().then(
        () => client,
        async (err: unknown) => {
          await client.close().catch(() => undefined);
          throw err;
        },
      );
      others.set(queueName, other);
      other.catch(() => others.delete(queueName));
    }
    return other;
  };
  metrics.watchQueue(jobs.queue);
  metrics.watchDependency('redis', async () => redis.status === 'ready');
  metrics.watchRedisMemory(redis);
  metrics.watchDependency('mongodb', () => pingMongo(mongo));

  const readiness: Readiness = {
    accepting: true,
    async check() {
      const detail = { mongodb: await pingMongo(mongo), redis: redis.status === 'ready' };
      return { ok: detail.mongodb && detail.redis, detail };
    },
  };

  return {
    redis,
    mongo,
    models,
    metrics,
    jobs,
    jobsFor,
    readiness,
    async serve(app, port, drainMs) {
      const server = await listen(app, port, config.HOST);
      const metricsServer = metricsApp ? await listen(metricsApp, config.METRICS_PORT!, config.HOST) : null;
      log.info({ port: server.port, metricsPort: metricsServer?.port ?? server.port }, `${service} listening`);
      return {
        port: server.port,
        metricsPort: metricsServer?.port ?? null,
        async stop() {
          readiness.accepting = false;
          if (config.SHUTDOWN_DELAY_MS > 0) await new Promise((r) => setTimeout(r, config.SHUTDOWN_DELAY_MS));
          await server.close(drainMs);
          await metricsServer?.close(1000);
          await jobs.close();
          for (const other of others.values()) await (await other.catch(() => null))?.close();
          await closeRedis(subscriber);
          await closeRedis(redis);
          await mongo.close();
          log.info(`${service} stopped`);
        },
      };
    },
  };
}
