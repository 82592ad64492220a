// Owns the service as real OS processes on private engines, for the tests and benchmarks: PrivateEngines (a
// redis-server and a FerretDB a suite may stop and restart on their ports), PrivateDeployment, the Ledger checks
// (direct database and Redis access), and small polling, percentile and RSS helpers. Used by the reliability
// suites, test/support/billing.ts, `npm run bench:load` and `npm run bench:chaos`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { startFerretDb, startRedis, type Engine } from '../engines/local-engines';
import { spawnEntry as spawnProjectEntry, spawnService, type ServiceKind, type ServiceProcess } from './processes';
import { connectMongo } from '../../shared/db/mongo';
import { createModels, type Models } from '../../shared/db/models';
import { AccountService } from '../../shared/accounts/account-service';
import { ApiKeyService } from '../../shared/accounts/api-keys';
import { EmotionTokenService } from '../../shared/accounts/emotion-tokens';
import { systemClock, monthOf } from '../../shared/billing/month';
import type { PlanId } from '../../shared/billing/plans';
import { outboxLength } from '../../shared/billing/usage-outbox';
import { creditsKey } from '../../shared/billing/credit-ledger';
import { createRedis, waitUntilReady } from '../../shared/redis';

/** A redis-server and a FerretDB owned by one suite, restartable on their ports. */
export class PrivateEngines {
  readonly dir: string;
  redis!: Engine;
  mongo!: Engine;

  private constructor(label: string) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `lc-rel-${label}-`));
  }

  static async start(label: string): Promise<PrivateEngines> {
    const e = new PrivateEngines(label);
    e.redis = await startRedis({ dir: path.join(e.dir, 'redis') });
    e.mongo = await startFerretDb({ dataDir: path.join(e.dir, 'ferretdb') });
    return e;
  }

  async stopRedis(): Promise<void> {
    await this.redis.stop();
  }

  /** Same port, empty data set (the engine runs without persistence, like a crashed cache). */
  async startRedisAgain(): Promise<void> {
    this.redis = await startRedis({ dir: path.join(this.dir, 'redis'), port: this.redis.port });
  }

  async stopMongo(): Promise<void> {
    await this.mongo.stop();
  }

  /** Same port, same SQLite files: the data survives, as a restarted MongoDB's would. */
  async startMongoAgain(): Promise<void> {
    this.mongo = await startFerretDb({ dataDir: path.join(this.dir, 'ferretdb'), port: this.mongo.port });
  }

  async stop(): Promise<void> {
    await this.redis?.stop().catch(() => undefined);
    await this.mongo?.stop().catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The environment every service process of one deployment shares. */
export function serviceEnv(engines: PrivateEngines, dbName: string, prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    // Reliability tests send many deliberate failures from 127.0.0.1; the limiter tests use the shipped value.
    AUTH_FAILURE_BURST: '100000',
    AUTH_PREFIX_FAILURE_BURST: '100000', // deliberate wrong keys share prefixes; the limiter tests use the shipped value
    REDIS_URL: engines.redis.url,
    MONGODB_URI: `${engines.mongo.url}${dbName}`,
    QUEUE_PREFIX: prefix,
    APP_SECRET: 'reliability-secret-reliability-secret-0123',
    ...extra,
  };
}

export function isolationIds(label: string): { prefix: string; dbName: string } {
  const id = randomUUID().slice(0, 8);
  return { prefix: `{r-${label}-${id}}`, dbName: `r_${label}_${id}` };
}

/**
 * One suite's private deployment: its own engines, queue prefix and database, the environment its service processes
 * share, and the ledger, opened once the services are up. `stop` ends the processes, the ledger, then the engines.
 */
export class PrivateDeployment {
  ledger: Ledger | undefined;

  private constructor(
    readonly engines: PrivateEngines,
    readonly prefix: string,
    readonly dbName: string,
    readonly env: Record<string, string>,
  ) {}

  static async start(label: string, extraEnv: Record<string, string> = {}): Promise<PrivateDeployment> {
    const engines = await PrivateEngines.start(label);
    const { prefix, dbName } = isolationIds(label);
    return new PrivateDeployment(engines, prefix, dbName, serviceEnv(engines, dbName, prefix, extraEnv));
  }

  async openLedger(): Promise<Ledger> {
    this.ledger = await Ledger.open(this.engines, this.dbName, this.prefix);
    return this.ledger;
  }

  async stop(procs: Array<ServiceProcess | undefined>): Promise<void> {
    await stopAll(procs);
    await this.ledger?.close().catch(() => undefined);
    await this.engines.stop();
  }
}

/** Direct access to the deployment's data, as an operator's reconciliation script would have. */
export class Ledger {
  private constructor(
    readonly conn: Connection,
    readonly models: Models,
    readonly accounts: AccountService,
    readonly apiKeys: ApiKeyService,
    readonly tokens: EmotionTokenService,
    private readonly redisUrl: string,
    private readonly prefix: string,
  ) {}

  static async open(engines: { redis: { url: string }; mongo: { url: string } }, dbName: string, prefix: string): Promise<Ledger> {
    const conn = await connectMongo(`${engines.mongo.url}${dbName}`);
    const models = createModels(conn);
    const accounts = new AccountService(models, systemClock);
    return new Ledger(conn, models, accounts, new ApiKeyService(models, systemClock, accounts), new EmotionTokenService(models), engines.redis.url, prefix);
  }

  async account(plan: PlanId, opts: { monthlyLimit?: number; hardCap?: boolean } = {}): Promise<{ customerId: string; key: string }> {
    const created = await this.apiKeys.createAccountWithKeys({ email: `rel-${randomUUID()}@example.com`, plan, ...opts });
    return { customerId: created.account._id, key: created.primaryKey! };
  }

  /** The customer's liveness usage events in MongoDB, counted once the outbox holds none still to be written. */
  async usageEvents(customerId: string): Promise<number> {
    const redis = createRedis(this.redisUrl, 'worker');
    try {
      await waitUntilReady(redis);
      await outboxDrained(redis, this.prefix, 30_000);
    } finally {
      redis.disconnect();
    }
    return this.models.UsageEvent.countDocuments({ service: 'liveness', customerId });
  }

  /** The credits hash of this month: used, calls, and the in-flight reservations (p:<requestId> fields). */
  async credits(customerId: string): Promise<{ used: number; calls: number; pending: string[] }> {
    const redis = createRedis(this.redisUrl, 'worker');
    try {
      await waitUntilReady(redis);
      const h = await redis.hgetall(creditsKey(this.prefix, customerId, monthOf(new Date())));
      return { used: Number(h.used ?? 0), calls: Number(h.calls ?? 0), pending: Object.keys(h).filter((k) => k.startsWith('p:')) };
    } finally {
      redis.disconnect();
    }
  }

  async close(): Promise<void> {
    await this.conn.close();
  }
}

/** Spawns a project TypeScript entry point that is not one of spawnService's kinds (a test worker). */
export function spawnEntry(entry: string, env: Record<string, string>): Promise<ServiceProcess> {
  return spawnProjectEntry(entry, 'liveness-worker', 'WORKER_METRICS_PORT', env);
}

/** Starts services and waits until each answers /readyz (workers: models loaded). */
export async function startServices(kinds: ServiceKind[], env: Record<string, string>): Promise<ServiceProcess[]> {
  const procs: ServiceProcess[] = [];
  try {
    for (const kind of kinds) procs.push(await spawnService(kind, env));
    await Promise.all(procs.map((p) => p.ready(90_000)));
    return procs;
  } catch (err) {
    await stopAll(procs);
    throw err;
  }
}

/** SIGTERM everything, SIGKILL what is left after a short grace: tests never leave children behind. */
export async function stopAll(procs: Array<ServiceProcess | undefined>): Promise<void> {
  await Promise.all(procs.filter((p): p is ServiceProcess => !!p).map((p) => p.stop(10_000).catch(() => p.kill9())));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000, stepMs = 250): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await sleep(stepMs);
  }
  throw new Error(`condition not reached within ${timeoutMs} ms`);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Resident set size of a process in bytes (VmRSS), or null once it is gone. */
export function rssOf(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** One liveness request with its status, body and wall time; network failures are status 0. */
export async function postLiveness(
  port: number,
  key: string,
  imageB64: string,
  format = 'jpeg',
  timeoutMs = 60_000,
): Promise<{ status: number; body: any; ms: number; retryAfter: string | null; requestId: string | null }> {
  const t0 = performance.now();
  try {
    const res = await fetch(`http://127.0.0.1:${port}/v1/check/liveness`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ image: imageB64, image_format: format }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body, ms: performance.now() - t0, retryAfter: res.headers.get('retry-after'), requestId: res.headers.get('x-request-id') };
  } catch {
    return { status: 0, body: null, ms: performance.now() - t0, retryAfter: null, requestId: null };
  }
}

export { serverMs } from './processes';

/** Resolves once the usage outbox is empty (every event written to MongoDB and removed), or throws after timeoutMs. */
export async function outboxDrained(redis: Redis, prefix: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await outboxLength(redis, prefix)) === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`usage outbox not drained within ${timeoutMs} ms`);
}
