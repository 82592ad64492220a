// Shared fixture of the ops tests: real API and worker processes on an isolated queue prefix and database,
// plus in-process access to the same Redis and database (accounts, tokens, queue counts, usage events).
import { Queue } from 'bullmq';
import type { Connection } from 'mongoose';
import { connectMongo } from '../../../shared/db/mongo';
import { createModels, ensureIndexes, type Models } from '../../../shared/db/models';
import { AccountService } from '../../../shared/accounts/account-service';
import { ApiKeyService } from '../../../shared/accounts/api-keys';
import { EmotionTokenService } from '../../../shared/accounts/emotion-tokens';
import { systemClock } from '../../../shared/billing/month';
import { createRedis, closeRedis } from '../../../shared/redis';
import { QUEUE_NAMES } from '../../../shared/queues/contracts';
import { isolation, testMongoUri, testRedisUrl } from '../../support/engines';
import { spawnService, type ServiceKind, type ServiceProcess } from '../../../dev/harness/processes';

export interface OpsEnv {
  env: Record<string, string>;
  prefix: string;
  dbName: string;
  models: Models;
  livenessQueue: Queue;
  emotionQueue: Queue;
  spawn(kind: ServiceKind, extra?: Record<string, string>): Promise<ServiceProcess>;
  livenessKey(): Promise<string>;
  emotionToken(): Promise<string>;
  close(): Promise<void>;
}

export async function opsEnv(label: string, base: Record<string, string> = {}): Promise<OpsEnv> {
  const { prefix, dbName } = isolation(label);
  const env = {
    REDIS_URL: testRedisUrl(),
    MONGODB_URI: `${testMongoUri()}${dbName}`,
    QUEUE_PREFIX: prefix,
    APP_SECRET: 'ops-test-secret-ops-test-secret-0123456789',
    // Shipped throttle and admission: the bursts here (at most 14 calls per key) fit both.
    ...base,
  };
  const conn: Connection = await connectMongo(testMongoUri(), dbName);
  const models = createModels(conn);
  await ensureIndexes(models);
  const redis = createRedis(testRedisUrl(), 'worker', `ops-test-${label}`);
  const livenessQueue = new Queue(QUEUE_NAMES.liveness, { connection: redis, prefix });
  const emotionQueue = new Queue(QUEUE_NAMES.emotion, { connection: redis, prefix });
  const spawned: ServiceProcess[] = [];
  let n = 0;
  return {
    env,
    prefix,
    dbName,
    models,
    livenessQueue,
    emotionQueue,
    async spawn(kind, extra = {}) {
      const p = await spawnService(kind, { ...env, ...extra });
      spawned.push(p);
      return p;
    },
    async livenessKey() {
      // A paid plan without a hard cap: bursts are never refused by quota.
      const created = await new ApiKeyService(models, systemClock, new AccountService(models, systemClock)).createAccountWithKeys({
        email: `ops${++n}-${label}@example.com`,
        plan: 'business',
      });
      return created.primaryKey!;
    },
    async emotionToken() {
      return (await new EmotionTokenService(models).create(`ops-${label}`)).token;
    },
    async close() {
      for (const p of spawned) {
        // A SIGSTOPped process ignores SIGTERM until continued.
        if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGCONT');
      }
      await Promise.all(spawned.map((p) => p.stop(15_000).catch(() => p.kill9())));
      await livenessQueue.close();
      await emotionQueue.close();
      await closeRedis(redis);
      await conn.close();
    },
  };
}

/** POST /v1/check/liveness on a spawned API; resolves with the status and parsed body. */
export async function checkLiveness(port: number, key: string, imageB64: string): Promise<{ status: number; body: any; requestId: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/check/liveness`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ image: imageB64, image_format: 'jpeg' }),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, requestId: res.headers.get('x-request-id') };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` every `everyMs` until it returns a truthy value; throws with `what` after timeoutMs. */
export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last instanceof Error ? last.message : JSON.stringify(last)}` : ''}`);
}
