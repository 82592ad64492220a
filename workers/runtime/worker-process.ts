// Owns a worker process's shell: connections, the ops HTTP endpoint (/metrics, /livez, /readyz), the job
// runner, the usage-outbox drainer, and a clean stop (finish the current job, take no new one, close connections last).
import express from 'express';
import type { Connection } from 'mongoose';
import type { Config } from '../../shared/config';
import { requireUrl } from '../../shared/config';
import type { Logger } from '../../shared/logger';
import { createMetrics, jobOutcomeLabel, type Metrics } from '../../shared/metrics';
import { checkEvictionPolicy, closeRedis, createRedis, waitUntilReady } from '../../shared/redis';
import { connectMongo, pingMongo } from '../../shared/db/mongo';
import { createModels, ensureIndexes, type Models } from '../../shared/db/models';
import type { JobOutcome } from '../../shared/queues/contracts';
import { listen, type RunningServer } from '../../shared/http/server';
import { mountOpsEndpoints } from '../../shared/http/ops-endpoints';
import { JobRunner, type JobHandler, type Settle } from './job-runner';
import { UsageDrainer } from './usage-drainer';
import { faultHook } from './fault-hook';
import type { Redis } from 'ioredis';

export interface WorkerServices {
  config: Config;
  /** For the handler's own commands (credits); fails fast while Redis is down, unlike BullMQ's connection. */
  redis: Redis;
  log: Logger;
  metrics: Metrics;
  models: Models;
  mongo: Connection;
}

export interface WorkerDefinition<I, R> {
  queueName: string;
  parseInput: (raw: unknown) => I;
  /** Loads models etc. and returns the handler; called once, before any job is taken. */
  createHandler: (services: WorkerServices) => Promise<JobHandler<I, R>>;
  /** How an outcome is stored (with the credit commit and usage event); default: the outcome alone. */
  createSettle?: (services: WorkerServices) => Settle<I, R>;
  /** Per-job metrics beyond the common ones. */
  observe?: (metrics: Metrics, outcome: JobOutcome<R>) => void;
}

export interface RunningWorker {
  metricsPort: number | null;
  stop(): Promise<void>;
}

export async function startWorker<I, R>(def: WorkerDefinition<I, R>, o: { config: Config; log: Logger; dbName?: string }): Promise<RunningWorker> {
  const { config, log } = o;
  const connection = createRedis(requireUrl(config, 'REDIS_URL'), 'worker', `${def.queueName}-worker`);
  const commands = createRedis(requireUrl(config, 'REDIS_URL'), 'producer', `${def.queueName}-worker-commands`);
  await waitUntilReady(connection, 15_000);
  await waitUntilReady(commands, 15_000);
  await checkEvictionPolicy(connection, log);
  const mongo = await connectMongo(requireUrl(config, 'MONGODB_URI'), o.dbName);
  const models = createModels(mongo);
  await ensureIndexes(models);
  const metrics = createMetrics(`${def.queueName}-worker`);
  metrics.watchDependency('redis', async () => connection.status === 'ready');
  metrics.watchDependency('mongodb', () => pingMongo(mongo));

  let modelsLoaded = false;
  let accepting = true;
  let ops: RunningServer | null = null;
  if (config.WORKER_METRICS_PORT >= 0) {
    const app = express();
    mountOpsEndpoints(app, metrics, {
      get accepting() {
        return accepting;
      },
      async check() {
        const detail = { models: modelsLoaded, mongodb: await pingMongo(mongo), redis: connection.status === 'ready' };
        return { ok: detail.models && detail.mongodb && detail.redis, detail };
      },
    });
    ops = await listen(app, config.WORKER_METRICS_PORT, config.HOST);
  }

  const services: WorkerServices = { config, log, metrics, models, mongo, redis: commands };
  const handler = await def.createHandler(services);
  modelsLoaded = true;
  const fault = faultHook(config.FAULT_KILL_AT, log);
  const drainerRedis = createRedis(requireUrl(config, 'REDIS_URL'), 'worker', `${def.queueName}-worker-outbox`);
  await waitUntilReady(drainerRedis, 15_000);
  const drainer = new UsageDrainer({ redis: drainerRedis, prefix: config.QUEUE_PREFIX, models, log, claimIdleMs: config.OUTBOX_CLAIM_IDLE_MS, fault });
  await drainer.start();
  const runner = new JobRunner<I, R>({
    queueName: def.queueName,
    prefix: config.QUEUE_PREFIX,
    connection,
    parseInput: def.parseInput,
    handler,
    settle: def.createSettle?.(services),
    fault,
    log,
    onFinished: (outcome, envelope, handlerCpuMs, evicted) => {
      metrics.handlerCpu.inc({ queue: def.queueName }, handlerCpuMs / 1000);
      const outcomeLabel = jobOutcomeLabel(outcome, evicted);
      metrics.jobs.inc({ queue: def.queueName, outcome: outcomeLabel });
      metrics.jobProcessing.observe({ queue: def.queueName, outcome: outcomeLabel }, outcome.workerMs / 1000);
      metrics.jobWait.observe({ queue: def.queueName }, Math.max(0, Date.now() - outcome.workerMs - envelope.enqueuedAt) / 1000);
      def.observe?.(metrics, outcome);
    },
  });
  runner.start();
  log.info({ queue: def.queueName, metricsPort: ops?.port ?? null }, 'worker ready');

  return {
    metricsPort: ops?.port ?? null,
    async stop() {
      accepting = false;
      await runner.close();
      await drainer.stop();
      await ops?.close(1000);
      await closeRedis(drainerRedis);
      await closeRedis(commands);
      await closeRedis(connection);
      await mongo.close();
      log.info('worker stopped');
    },
  };
}
