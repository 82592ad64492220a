// Owns the liveness front-end process: builds its dependencies from config, listens, and stops cleanly.
import type { Metrics } from '../../shared/metrics';
import type { Redis } from 'ioredis';
import type { Config } from '../../shared/config';
import { createLogger, type Logger } from '../../shared/logger';
import type { Models } from '../../shared/db/models';
import { AccountService } from '../../shared/accounts/account-service';
import { AuthCache } from '../../shared/accounts/auth-cache';
import { ApiKeyService, type AuthenticatedKey } from '../../shared/accounts/api-keys';
import { CreditLedger } from '../../shared/billing/credit-ledger';
import { systemClock, type Clock } from '../../shared/billing/month';
import { QUEUE_NAMES } from '../../shared/queues/contracts';
import { startFrontEndBase, type FrontEndBase } from '../http/front-end';
import { authFailureGuard, Throttle } from '../http/throttle';
import { uploadGate, type UploadGate } from '../http/upload-gate';
import { createLivenessApp } from './app';
import { IdempotencyStore } from './idempotency';
import { createConsole } from '../console/app';

export interface LivenessServerOptions {
  config: Config;
  log?: Logger;
  clock?: Clock;
  /** Database name (tests isolate per file); default: the URI's. */
  dbName?: string;
  /** Serves the console (/console) and the marketplace's endpoint on this front-end, as the production process does (main.ts). */
  console?: boolean;
}

export interface LivenessServerDeps {
  config: Config;
  log: Logger;
  models: Models;
  accounts: AccountService;
  apiKeys: ApiKeyService;
  ledger: CreditLedger;
  redis: Redis;
  clock: Clock;
  metrics: Metrics;
  /** The job client of a queue on this process's connections (its own liveness one, or the emotion one for the console's try-it). */
  jobsFor: FrontEndBase['jobsFor'];
  /** The process's one upload room: /v1 and the console's try-it routes count in it, each account in one share. */
  uploads: UploadGate;
}

export interface RunningLivenessApi {
  port: number;
  /** The port of /metrics when METRICS_PORT moved it off the customer port. */
  metricsPort: number | null;
  deps: LivenessServerDeps;
  stop(): Promise<void>;
}

export async function startLivenessApi(o: LivenessServerOptions): Promise<RunningLivenessApi> {
  const { config } = o;
  const log = o.log ?? createLogger('liveness-api', config.LOG_LEVEL);
  const clock = o.clock ?? systemClock;
  const base = await startFrontEndBase({
    config,
    log,
    service: 'liveness-api',
    queueName: QUEUE_NAMES.liveness,
    dbName: o.dbName,
  });
  const { redis, models } = base;
  const authCache = new AuthCache<AuthenticatedKey>(redis, config.QUEUE_PREFIX);
  const accounts = new AccountService(models, clock, authCache);
  const apiKeys = new ApiKeyService(models, clock, accounts, authCache);
  const ledger = new CreditLedger(redis, config.QUEUE_PREFIX, models, clock);
  const deps: LivenessServerDeps = {
    config,
    log,
    models,
    accounts,
    apiKeys,
    ledger,
    redis,
    clock,
    metrics: base.metrics,
    jobsFor: base.jobsFor,
    uploads: uploadGate(config),
  };
  const consoleApp = o.console ? createConsole(deps) : null;
  const app = createLivenessApp({
    log,
    metrics: base.metrics,
    redis,
    mongo: base.mongo,
    accounts,
    apiKeys,
    ledger,
    jobs: base.jobs,
    throttle: new Throttle(redis, config.QUEUE_PREFIX, {
      burst: config.THROTTLE_BURST,
      ratePerSecond: config.THROTTLE_RATE_PER_SEC,
      workMsPerToken: config.THROTTLE_WORK_MS_PER_TOKEN,
      code: 'rate_limited',
      message: 'Too many requests for this account; slow down',
    }),
    authFailures: authFailureGuard(redis, config),
    trustProxy: config.TRUST_PROXY,
    idempotency: new IdempotencyStore(redis, config.QUEUE_PREFIX, config.LIVENESS_BUDGET_MS),
    uploads: deps.uploads,
    fairUse: { bytesPerToken: config.THROTTLE_BYTES_PER_TOKEN, parseMsPerToken: config.THROTTLE_PARSE_MS_PER_TOKEN },
    clock,
    budgetMs: config.LIVENESS_BUDGET_MS,
    readiness: base.readiness,
    console: consoleApp,
  });
  // Draining waits for the longest request either app may still be serving.
  const longestBudgetMs = Math.max(config.LIVENESS_BUDGET_MS, consoleApp ? config.CONSOLE_BUDGET_MS : 0);
  const server = await base.serve(app, config.LIVENESS_PORT, longestBudgetMs + 1000);
  return { port: server.port, metricsPort: server.metricsPort, deps, stop: () => server.stop() };
}
