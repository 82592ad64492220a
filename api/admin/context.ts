// Owns what every admin command gets: config, a database connection (the running service's),
// the shared services, and output helpers. Finds the embedded engines of a running `npm start`.
import { loadConfig, type Config } from '../../shared/config';
import { connectMongo } from '../../shared/db/mongo';
import { createModels, type Models } from '../../shared/db/models';
import { prepareStore } from '../../shared/db/prepare-store';
import { AccountService } from '../../shared/accounts/account-service';
import { ApiKeyService, type AuthenticatedKey } from '../../shared/accounts/api-keys';
import { ConsoleCredentials } from '../../shared/accounts/console-credentials';
import { AuthCache } from '../../shared/accounts/auth-cache';
import { EmotionTokenService, type AuthenticatedToken } from '../../shared/accounts/emotion-tokens';
import { CreditLedger } from '../../shared/billing/credit-ledger';
import { systemClock } from '../../shared/billing/month';
import { readLocalState } from '../../shared/local-state';
import type { Connection } from 'mongoose';
import type { Redis } from 'ioredis';
import { closeRedis, createRedis, waitUntilReady } from '../../shared/redis';
import { type Flags } from '../../shared/cli-args';

export type { Flags };

export class UsageError extends Error {}

export interface AdminContext {
  config: Config;
  models: Models;
  accounts: AccountService;
  apiKeys: ApiKeyService;
  credentials: ConsoleCredentials;
  ledger: CreditLedger;
  redis: Redis;
  emotionTokens: EmotionTokenService;
  json: boolean;
  /** --get FIELD: print only that field of the JSON answer (for shell scripts without jq). */
  get?: string;
  close(): Promise<void>;
}

/** MONGODB_URI / REDIS_URL when set; otherwise the embedded engines of the `npm start` running from this folder. */
function resolveEngines(config: Config): { mongoUri: string; redisUrl: string } {
  const local = config.MONGODB_URI && config.REDIS_URL ? null : readLocalState(config.VAR_DIR);
  const mongoUri = config.MONGODB_URI ?? local?.mongoUri;
  const redisUrl = config.REDIS_URL ?? local?.redisUrl;
  if (!mongoUri || !redisUrl) {
    throw new UsageError('MONGODB_URI / REDIS_URL are not set and no local `npm start` is running from this folder');
  }
  return { mongoUri, redisUrl };
}

export async function openContext(json: boolean, get?: string): Promise<AdminContext> {
  const config = loadConfig();
  const engines = resolveEngines(config);
  const conn: Connection = await connectMongo(engines.mongoUri);
  const redis = createRedis(engines.redisUrl, 'producer', 'admin');
  await waitUntilReady(redis, 5000);
  const models = createModels(conn);
  await prepareStore(models);
  // The same auth cache as the API processes, so changes made here take effect there at once.
  const authCache = new AuthCache<AuthenticatedKey>(redis, config.QUEUE_PREFIX);
  const accounts = new AccountService(models, systemClock, authCache);
  return {
    config,
    models,
    accounts,
    apiKeys: new ApiKeyService(models, systemClock, accounts, authCache),
    credentials: new ConsoleCredentials(models, systemClock),
    ledger: new CreditLedger(redis, config.QUEUE_PREFIX, models, systemClock),
    emotionTokens: new EmotionTokenService(models, { cache: new AuthCache<AuthenticatedToken>(redis, config.QUEUE_PREFIX) }),
    json,
    get,
    redis,
    close: async () => {
      await closeRedis(redis);
      await conn.close();
    },
  };
}

export function required(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function optional(flags: Flags, name: string): string | undefined {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
}

export function onOff(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`--${name} takes on or off`);
}

/** Prints JSON with --json, one field's value with --get FIELD, otherwise a short human line. */
export function output(ctx: { json: boolean; get?: string }, value: unknown, human: string): void {
  if (ctx.get !== undefined) {
    const field = (value as Record<string, unknown> | null)?.[ctx.get];
    if (field === undefined) throw new UsageError(`--get ${ctx.get}: the answer has no such field`);
    process.stdout.write(`${typeof field === 'string' ? field : JSON.stringify(field)}\n`);
    return;
  }
  process.stdout.write(ctx.json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

export type Command = (ctx: AdminContext, words: string[], flags: Flags) => Promise<void>;
