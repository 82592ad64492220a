// Owns the field benchmark's seeded history: 10,000 accounts (mixed plans; the 62 that call are made by the
// account service the admin CLI uses, the rest inserted in bulk with the same models) and 1,000,000 usage
// events over this month and the two before, written the way production
// writes them (entries appended to the usage outbox stream in Redis, drained by several real UsageDrainers),
// so whatever the drainer maintains is built as in production. The result is cached per store and seed
// version (a SQLite data folder under var/bench-field, or a PostgreSQL template database) and reused.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { startFerretDb, startRedis, type Engine } from '../../dev/engines/local-engines';
import { connectMongo } from '../../shared/db/mongo';
import { createModels, ensureIndexes, type Models } from '../../shared/db/models';
import { AccountService } from '../../shared/accounts/account-service';
import { ApiKeyService } from '../../shared/accounts/api-keys';
import { backfillCredentialDigests } from '../../shared/accounts/credential-digests';
import { ConsoleCredentials } from '../../shared/accounts/console-credentials';
import { EmotionTokenService } from '../../shared/accounts/emotion-tokens';
import type { PlanId } from '../../shared/billing/plans';
import { monthOf, systemClock } from '../../shared/billing/month';
import { encodeOutboxEvent, outboxKey, outboxLength } from '../../shared/billing/usage-outbox';
import { partitionPrefix } from '../../shared/redis-partitions';
import { createRedis, closeRedis } from '../../shared/redis';
import { createLogger } from '../../shared/logger';
import { displayPrefix, generateApiKey, sha256Hex } from '../../shared/accounts/secrets';
import { UsageDrainer } from '../../workers/runtime/usage-drainer';
import { hashPassword } from '../../api/console/auth/passwords';
import { TotpService } from '../../api/console/auth/totp';

/** Bump when what is seeded changes: a cached seed of another version is not reused. */
export const SEED_VERSION = 'v3'; // v2: histories seeded customer by customer, counter documents kept by the drainer; v3: credential digests
/** `--scale 0.01` seeds a hundredth (a smoke run of the benchmark itself), cached apart from the full seed. */
export interface Scale {
  accounts: number;
  events: number;
  /** The console-page customer's events this month. */
  bigCustomerEvents: number;
}
export const fullScale = (f = 1): Scale => ({
  accounts: Math.max(100, Math.round(10_000 * f)),
  events: Math.round(1_000_000 * f),
  bigCustomerEvents: Math.round(50_000 * f),
});
export const DB_NAME = 'liveness'; // what dev/start.ts uses on the embedded store
const PREFIX = '{lc}'; // the shipped QUEUE_PREFIX: the outbox the service's drainers read
const DRAINERS = 4;
/** Outbox entries appended per round before waiting for the drainers (bounds Redis memory). */
const CHUNK = 20_000;
const SEED_TIMEOUT_MS = 40 * 60_000;

export type Store = 'sqlite' | 'postgresql';

/** What the benchmark needs to know about the seeded accounts (keys are shown only at creation). */
export interface SeedManifest {
  version: string;
  appSecret: string;
  seededMs: number;
  /** 30 paid accounts with history (existing customers). */
  existing: Array<{ customerId: string; key: string; plan: PlanId }>;
  /** 30 paid accounts that never called. */
  fresh: Array<{ customerId: string; key: string; plan: PlanId }>;
  hostile: { customerId: string; key: string };
  big: { customerId: string; email: string; password: string; totpSecret: string; key: string };
  eventsWritten: number;
}

export interface SeedPlace {
  store: Store;
  dir: string;
  /** PostgreSQL: the template database holding the seed (runs copy it). */
  pgDatabase?: string;
}

export function seedPlace(root: string, store: Store, scale: Scale): SeedPlace {
  const tag = `${SEED_VERSION}-${scale.accounts}-${scale.events}`;
  const dir = path.join(root, `seed-${tag}-${store}`);
  return store === 'sqlite' ? { store, dir } : { store, dir, pgDatabase: `bench_field_seed_${tag.replace(/-/g, '_')}` };
}

const manifestFile = (p: SeedPlace) => path.join(p.dir, 'manifest.json');

export function readSeed(p: SeedPlace): SeedManifest | null {
  try {
    const m = JSON.parse(fs.readFileSync(manifestFile(p), 'utf8')) as SeedManifest;
    return m.version === SEED_VERSION ? m : null;
  } catch {
    return null;
  }
}

/** psql/createdb/dropdb against the local PostgreSQL (trust auth, user postgres). */
export function pg(tool: 'psql' | 'createdb' | 'dropdb', pgHost: string, args: string[]): string {
  const u = new URL(pgHost);
  return execFileSync(tool, ['-h', u.hostname, '-p', u.port || '5432', '-U', u.username || 'postgres', ...args], { encoding: 'utf8' });
}

export function pgUrl(pgHost: string, database: string): string {
  const u = new URL(pgHost);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Accounts 0-29 existing customers, 30-59 new ones, 60 the hostile free tenant, 61 the console customer. */
const SPECIAL = 62;
const emailOf = (i: number) => `field-${i}@bench.example`;

function planOf(i: number): PlanId {
  // 30 % free, 30 % starter, 20 % standard, 10 % professional, 7 % business, 3 % enterprise.
  const r = i % 100;
  return r < 30 ? 'free' : r < 60 ? 'starter' : r < 80 ? 'standard' : r < 90 ? 'professional' : r < 97 ? 'business' : 'enterprise';
}

async function pool<T>(items: T[], width: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Seeds the store (SQLite folder or PostgreSQL database); prints progress; writes the manifest last. */
export async function seed(root: string, p: SeedPlace, pgHost: string, scale: Scale, log: (s: string) => void): Promise<SeedManifest> {
  const t0 = Date.now();
  fs.rmSync(p.dir, { recursive: true, force: true });
  fs.mkdirSync(p.dir, { recursive: true });
  if (p.pgDatabase) {
    pg('dropdb', pgHost, ['--if-exists', p.pgDatabase]);
    pg('createdb', pgHost, [p.pgDatabase]);
  }
  const engines: Engine[] = [];
  const work = path.join(root, `seeding-${p.store}`);
  fs.rmSync(work, { recursive: true, force: true });
  const redisEngine = await startRedis({ dir: path.join(work, 'redis') });
  engines.push(redisEngine);
  const dataDir = p.store === 'sqlite' ? path.join(p.dir, 'ferretdb') : path.join(work, 'ferretdb');
  const mongo = await startFerretDb(p.pgDatabase ? { dataDir, postgresqlUrl: pgUrl(pgHost, p.pgDatabase) } : { dataDir });
  engines.push(mongo);
  const conn = await connectMongo(mongo.url, DB_NAME);
  const models = createModels(conn);
  await ensureIndexes(models);
  const redis = createRedis(redisEngine.url, 'worker', 'bench-seed');
  try {
    const manifest = await seedAccountsAndEvents(models, redis, redisEngine.url, scale, log);
    manifest.seededMs = Date.now() - t0;
    await conn.close();
    await closeRedis(redis);
    for (const e of engines.reverse()) await e.stop();
    fs.rmSync(work, { recursive: true, force: true });
    fs.writeFileSync(manifestFile(p), JSON.stringify(manifest, null, 2));
    return manifest;
  } catch (err) {
    await conn.close().catch(() => undefined);
    for (const e of engines.reverse()) await e.stop();
    throw err;
  }
}

async function seedAccountsAndEvents(models: Models, redis: Redis, redisUrl: string, scale: Scale, log: (s: string) => void): Promise<SeedManifest> {
  const { accounts: ACCOUNTS, events: EVENTS, bigCustomerEvents: BIG_CUSTOMER_EVENTS } = scale;
  const apiKeys = new ApiKeyService(models, systemClock, new AccountService(models, systemClock));
  const credentials = new ConsoleCredentials(models, systemClock);
  const appSecret = randomUUID() + randomUUID();
  const started = Date.now();
  // Accounts 0-29 existing (paid, with history), 30-59 fresh (paid, never called), 60 hostile (free), 61 big.
  const ids: string[] = new Array<string>(ACCOUNTS);
  const keys = new Map<number, string>();
  const plans: PlanId[] = new Array<PlanId>(ACCOUNTS);
  const indices = Array.from({ length: ACCOUNTS }, (_, i) => i);
  // The 62 accounts that call (0-61) are made by ApiKeyService.createAccountWithKeys, as the admin CLI makes them. The other
  // accounts only hold history: inserted in bulk with the same model (its defaults and validation) and the same
  // key shape as ApiKeyService.writeKey, because one create costs ~4 round trips and, on a shared 2-core
  // machine, 10,000 of them took over half an hour on FerretDB/SQLite.
  await pool(indices.slice(0, SPECIAL), 8, async (i) => {
    const plan: PlanId = i < 60 ? (['starter', 'standard', 'professional', 'business'] as const)[i % 4]! : i === 60 ? 'free' : 'enterprise';
    plans[i] = plan;
    const created = await apiKeys.createAccountWithKeys({
      email: emailOf(i),
      plan,
      company: `Field ${i}`,
      ...(plan === 'enterprise' ? { monthlyLimit: 200_000 } : {}),
    });
    ids[i] = created.account._id;
    keys.set(i, created.primaryKey!);
  });
  for (let from = SPECIAL; from < ACCOUNTS; from += 500) {
    const batch = indices.slice(from, Math.min(ACCOUNTS, from + 500));
    const rotatedAt = new Date();
    const docs = batch.map((i) => {
      plans[i] = planOf(i);
      ids[i] = randomUUID();
      return {
        _id: ids[i],
        email: emailOf(i),
        company: `Field ${i}`,
        plan: plans[i],
        monthlyLimit: plans[i] === 'enterprise' ? 150_000 : null,
        hardCap: plans[i] === 'free',
        status: 'active',
      };
    });
    await models.Account.insertMany(docs);
    await models.ApiKey.insertMany(
      batch.flatMap((i) =>
        (['primary', 'secondary'] as const).map((slot) => {
          const key = generateApiKey();
          return { _id: randomUUID(), customerId: ids[i], slot, hash: sha256Hex(key), prefix: displayPrefix(key), rotatedAt, generation: 1 };
        }),
      ),
    );
    if ((from - SPECIAL) % 2000 < 500) log(`  accounts: ${Math.min(ACCOUNTS, from + 500)} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  // The bulk-inserted keys' digests and the backfill mark, as in a store that grew under this version (writeKey
  // writes a key's digest with it): otherwise every cold start of the bench would backfill 20,000 digests first.
  await backfillCredentialDigests(models);
  // The console customer signs in with a password and TOTP, set through the services the console uses.
  const big = { customerId: ids[61]!, email: 'field-61@bench.example', password: 'Bench-field-61!', totpSecret: '', key: keys.get(61)! };
  const totp = new TotpService(appSecret, redis, PREFIX);
  big.totpSecret = totp.newSecret();
  await credentials.setPassword(big.customerId, await hashPassword(big.password), 'changed');
  await credentials.setPendingTotpSecret(big.customerId, totp.sealSecret(big.totpSecret, big.customerId));
  await credentials.enableTotp(big.customerId, []);
  const bigToken = await new EmotionTokenService(models).create('field bench', big.customerId);

  const keyIds = new Map<string, string[]>();
  for (const k of await models.ApiKey.find({}, { customerId: 1 }).lean()) {
    const list = keyIds.get(k.customerId) ?? [];
    list.push(String(k._id));
    keyIds.set(k.customerId, list);
  }

  // Events: the big customer's 50,000 this month; the rest spread over the 9,939 others with history
  // (not the fresh 30 and not the hostile one), uniformly over the three months up to now.
  const now = Date.now();
  const thisMonthStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);
  const threeMonthsStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() - 2, 1);
  const withHistory = indices.filter((i) => !(i >= 30 && i <= 60) && i !== 61);
  let seq = 0;
  const eventAt = (i: number): number => {
    if (i < BIG_CUSTOMER_EVENTS) return thisMonthStart + Math.floor(Math.random() * (now - 60_000 - thisMonthStart));
    return threeMonthsStart + Math.floor(Math.random() * (now - 60_000 - threeMonthsStart));
  };
  const entryOf = (i: number): [string, string] => {
    // One customer's history after another (each a run of ~100 consecutive entries): the drainer keeps one counter
    // document per customer and month and updates it once per batch, so a batch spread over 200 customers costs 200
    // single-document updates. The store ends the same whatever the order; this order seeds in minutes, not hours.
    const who = i < BIG_CUSTOMER_EVENTS ? 61 : withHistory[Math.floor(((i - BIG_CUSTOMER_EVENTS) * withHistory.length) / (EVENTS - BIG_CUSTOMER_EVENTS))]!;
    const customerId = ids[who]!;
    const at = new Date(eventAt(i));
    const emotion = i < BIG_CUSTOMER_EVENTS ? i % 10 === 0 : false;
    const customerKeys = keyIds.get(customerId) ?? [];
    const event = encodeOutboxEvent({
      service: emotion ? 'emotion' : 'liveness',
      customerId,
      keyId: emotion ? null : (customerKeys[i % Math.max(1, customerKeys.length)] ?? null),
      tokenId: emotion ? bigToken.id : null,
      plan: plans[who]!,
      billable: true,
      latencyMs: 20 + (i % 40),
      verdict: emotion ? null : { result: i % 9 === 0 ? 'fake' : 'real' },
      at,
      month: monthOf(at),
    });
    return [`field-${SEED_VERSION}-${seq++}`, event];
  };

  const log0 = createLogger('bench-seed-drainer', 'warn');
  const drainerRedis = Array.from({ length: DRAINERS }, () => createRedis(redisUrl, 'worker', 'bench-drainer'));
  const drainers = await Promise.all(
    drainerRedis.map(async (r) => {
      const d = new UsageDrainer({ redis: r, prefix: PREFIX, models, log: log0, claimIdleMs: 10_000 });
      await d.start();
      return d;
    }),
  );
  const evStarted = Date.now();
  for (let from = 0; from < EVENTS; from += CHUNK) {
    const m = redis.multi();
    for (let i = from; i < Math.min(EVENTS, from + CHUNK); i++) {
      const [id, event] = entryOf(i);
      // Any partition's stream is drained; by request id, the chunk spreads over all of them.
      m.xadd(outboxKey(partitionPrefix(PREFIX, id)), '*', 'id', id, 'event', event, 'overage', '0');
    }
    await m.exec();
    // Keep at most two chunks in the outbox: Redis holds the backlog, not the whole history.
    while ((await outboxLength(redis, PREFIX)) > CHUNK) {
      if (Date.now() - evStarted > SEED_TIMEOUT_MS) throw new Error('seeding took longer than 40 min: stopped');
      await new Promise((r) => setTimeout(r, 200));
    }
    const done = from + CHUNK - (await outboxLength(redis, PREFIX));
    const s = (Date.now() - evStarted) / 1000;
    if ((from / CHUNK) % 5 === 4) log(`  events drained: ~${done} (${s.toFixed(0)} s, ${(done / s).toFixed(0)}/s)`);
  }
  while ((await outboxLength(redis, PREFIX)) > 0) {
    if (Date.now() - evStarted > SEED_TIMEOUT_MS) throw new Error('seeding took longer than 40 min: stopped');
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const d of drainers) await d.stop();
  for (const r of drainerRedis) await closeRedis(r);
  // Not counted in the store (a count is a scan of a million documents on FerretDB/SQLite, past the driver's
  // socket time-out): a drainer deletes an entry from the outbox only once the store holds its event.
  const eventsWritten = EVENTS;
  log(`  events drained: ${eventsWritten} (the outbox is empty) in ${((Date.now() - evStarted) / 1000).toFixed(0)} s`);
  const pick = (from: number) => Array.from({ length: 30 }, (_, j) => ({ customerId: ids[from + j]!, key: keys.get(from + j)!, plan: plans[from + j]! }));
  return {
    version: SEED_VERSION,
    appSecret,
    seededMs: 0,
    existing: pick(0),
    fresh: pick(30),
    hostile: { customerId: ids[60]!, key: keys.get(60)! },
    big,
    eventsWritten,
  };
}
