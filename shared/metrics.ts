// Owns Prometheus metrics (prom-client): one registry per process, base units, no per-key labels.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { primariesOf } from './redis';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];
const STAGE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed'] as const;

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * The `outcome` label of a finished job: `ok`; `rejected` when the customer's input was refused (a 4xx: no
 * face, undecodable audio), which is not the system's fault and must not page anyone; `shed` when it was answered
 * 503 unrun because another tenant's job took its place in a full queue (fair-queue.ts: a capacity shed, not an
 * error); `error` for the rest.
 */
export function jobOutcomeLabel(outcome: { ok: true } | { ok: false; error: { httpStatus: number } }, evicted = false): 'ok' | 'rejected' | 'shed' | 'error' {
  if (evicted) return 'shed';
  if (outcome.ok) return 'ok';
  return outcome.error.httpStatus < 500 ? 'rejected' : 'error';
}

/** used_memory and maxmemory (0 = unlimited) from INFO memory. */
export function parseRedisMemory(info: string): { used: number; max: number } | null {
  const used = /^used_memory:(\d+)/m.exec(info)?.[1];
  const max = /^maxmemory:(\d+)/m.exec(info)?.[1];
  return used === undefined || max === undefined ? null : { used: Number(used), max: Number(max) };
}

export function createMetrics(service: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const queues: Queue[] = [];
  let redisForMemory: Redis | null = null;
  const dependencies = new Map<string, () => Promise<boolean>>();
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route template and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    queueJobs: new Gauge({
      name: 'lc_queue_jobs',
      help: 'Jobs in each BullMQ queue by state, read at scrape time',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
      async collect() {
        for (const q of queues) {
          try {
            const counts = await q.getJobCounts(...QUEUE_STATES);
            for (const state of QUEUE_STATES) this.set({ queue: q.name, state }, counts[state] ?? 0);
          } catch {
            // Redis down: leave the series stale rather than failing the whole scrape.
          }
        }
      },
    }),
    jobWait: new Histogram({
      name: 'lc_job_wait_seconds',
      help: 'Time a job waited in the queue before a worker took it',
      labelNames: ['queue'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    jobProcessing: new Histogram({
      name: 'lc_job_processing_seconds',
      help: 'Time a worker spent on a job',
      labelNames: ['queue', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    handlerCpu: new Counter({
      name: 'lc_job_handler_cpu_seconds_total',
      help: 'CPU time of the worker process (all threads) while its handler ran: the engine, under whatever contention the machine has',
      labelNames: ['queue'] as const,
      registers: [registry],
    }),
    jobs: new Counter({
      name: 'lc_jobs_total',
      help: 'Jobs finished by a worker, by outcome',
      labelNames: ['queue', 'outcome'] as const,
      registers: [registry],
    }),
    inferenceStage: new Histogram({
      name: 'lc_inference_stage_seconds',
      help: 'Time of each inference stage (decode, detect, spoof; probe, decode, vad, features, mapping)',
      labelNames: ['queue', 'stage'] as const,
      buckets: STAGE_BUCKETS,
      registers: [registry],
    }),
    livenessResults: new Counter({
      name: 'lc_liveness_results_total',
      help: 'Liveness answers by outcome (live, fake, invalid)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    quotaOutcomes: new Counter({
      name: 'lc_quota_outcomes_total',
      help: 'Credit decisions (served within the plan, capped with 429, overage)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    modelInfo: new Gauge({
      name: 'lc_model_info',
      help: 'Models loaded by this worker (value 1)',
      labelNames: ['name', 'sha256'] as const,
      registers: [registry],
    }),
    dependencyUp: new Gauge({
      name: 'lc_dependency_up',
      help: 'Whether this process reaches a dependency (1) or not (0), checked at scrape time',
      labelNames: ['dependency'] as const,
      registers: [registry],
      async collect() {
        for (const [name, check] of dependencies) this.set({ dependency: name }, (await check().catch(() => false)) ? 1 : 0);
      },
    }),
    redisMemory: new Gauge({
      name: 'lc_redis_memory_bytes',
      help: 'Redis memory (INFO memory; on a cluster, its fullest primary) read at scrape time: kind="used" (used_memory) and kind="max" (maxmemory, 0 = unlimited)',
      labelNames: ['kind'] as const,
      registers: [registry],
      async collect() {
        if (!redisForMemory) return;
        try {
          // A cluster's fullest primary (by used memory) is the one that refuses writes first.
          const all = await Promise.all(primariesOf(redisForMemory).map(async (node) => parseRedisMemory(await node.info('memory'))));
          const parsed = all.reduce((a, b) => (b && (!a || b.used > a.used) ? b : a), null);
          if (parsed) {
            this.set({ kind: 'used' }, parsed.used);
            this.set({ kind: 'max' }, parsed.max);
          }
        } catch {
          // Redis down: lc_dependency_up says so; leave these series stale.
        }
      },
    }),
    mailSent: new Counter({
      name: 'lc_mail_sent_total',
      help: 'Console e-mails handed to the mail server, by outcome (sent, failed)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    /** Report this Redis's memory at scrape time (with noeviction, a full Redis stops job intake). */
    watchRedisMemory(redis: Redis) {
      redisForMemory = redis;
    },
    /** A dependency (redis, mongodb) whose reachability this process reports at scrape time. */
    watchDependency(name: string, check: () => Promise<boolean>) {
      dependencies.set(name, check);
    },
    /** Queues whose depth this process reports at scrape time. */
    watchQueue(q: Queue) {
      queues.push(q);
    },
  };
}
