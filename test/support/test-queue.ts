// A private queue on the test Redis with its API side (JobClients, one per simulated API process) and its workers
// (JobRunners in this process), for the tests of the queue plumbing itself: no model, no HTTP.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import type { JobOutcome } from '../../shared/queues/contracts';
import { JobClient } from '../../shared/queues/job-client';
import { waitUntilReady } from '../../shared/redis';
import { JobRunner, type JobHandler, type JobRunnerOptions } from '../../workers/runtime/job-runner';
import { quietLog } from './config';
import { isolation, testRedisConnections } from './engines';

export interface TestQueue<I, R> {
  prefix: string;
  queueName: string;
  /** The producer connection every client shares. */
  producer: Redis;
  /** Opens another connection to the test Redis, closed with the rest. */
  conn: (role: 'producer' | 'worker' | 'subscriber') => Redis;
  clients: JobClient[];
  runners: Array<JobRunner<I, R>>;
  /** Closes the workers, then the clients, then every connection. */
  close(): Promise<void>;
}

export interface TestQueueOptions<I, R> {
  outcomeSchema: z.ZodType<JobOutcome>;
  handler: JobHandler<I, R>;
  /** API processes (JobClients) on the queue; default 1. */
  clients?: number;
  /** Workers (JobRunners); default 1. */
  workers?: number;
  /** Default 0: no count ceiling, only the time rule. */
  maxBacklogPerWorker?: number;
  /** A fixed worker count for shedding; default: the workers BullMQ sees. */
  expectedWorkers?: number;
  /** What each worker reports once an outcome is published (the metrics hook of worker-process.ts). */
  onFinished?: JobRunnerOptions<I, R>['onFinished'];
}

/** Starts the clients (each with its own result subscriber), then the workers. */
export async function startTestQueue<I, R>(label: string, o: TestQueueOptions<I, R>): Promise<TestQueue<I, R>> {
  const { prefix } = isolation(label);
  const queueName = `${label}-${randomUUID().slice(0, 6)}`;
  const { conn, closeAll } = testRedisConnections();
  const producer = conn('producer');
  await waitUntilReady(producer);
  const clients = Array.from(
    { length: o.clients ?? 1 },
    () =>
      new JobClient({
        redis: producer,
        subscriber: conn('subscriber'),
        prefix,
        queueName,
        log: quietLog,
        maxBacklogPerWorker: o.maxBacklogPerWorker ?? 0,
        outcomeSchema: o.outcomeSchema,
        expectedWorkers: o.expectedWorkers,
      }),
  );
  for (const client of clients) await client.start();
  const runners = Array.from(
    { length: o.workers ?? 1 },
    () =>
      new JobRunner<I, R>({
        queueName,
        prefix,
        connection: conn('worker'),
        parseInput: (x) => x as I,
        handler: o.handler,
        log: quietLog,
        ...(o.onFinished ? { onFinished: o.onFinished } : {}),
      }),
  );
  for (const runner of runners) runner.start();
  return {
    prefix,
    queueName,
    producer,
    conn,
    clients,
    runners,
    close: async () => {
      for (const runner of runners) await runner.close();
      for (const client of clients) await client.close();
      await closeAll();
    },
  };
}
