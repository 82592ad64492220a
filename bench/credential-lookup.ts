// Credential look-up benchmark (`npm run bench:credentials`), issue 27: on FerretDB/SQLite with `--accounts`
// accounts (two keys each) written as the earlier version wrote them, how long the start-up digest backfill
// takes, then a cold burst of `--burst` concurrent authentications (no Redis cache) of valid and of unknown keys
// by digest document, beside the same burst of the earlier look-up by `hash` (a scan on FerretDB 1.x). Issue 41:
// each account has a marketplace subscription written the earlier way (only `marketplace.subscriptionId`), and the
// account is then found by its subscription id (the top-level `subscriptionId` the start-up backfill writes)
// beside the earlier look-up by the dotted path.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import mongoose from 'mongoose';
import { startFerretDb } from '../dev/engines/local-engines';
import { createModels } from '../shared/db/models';
import { prepareStore } from '../shared/db/prepare-store';
import { AccountService } from '../shared/accounts/account-service';
import { ApiKeyService } from '../shared/accounts/api-keys';
import { displayPrefix, generateApiKey, sha256Hex } from '../shared/accounts/secrets';
import { systemClock } from '../shared/billing/month';
import { arg, f1 } from './api';
import { loadAvg, runMain } from './support/main';
import { timedBurst } from './support/measure';

/** The burst's p50/max, and how many ran past authentication's own deadline (10 s: 503). */
async function timed(n: number, op: (i: number) => Promise<unknown>): Promise<string> {
  const r = await timedBurst(n, op);
  return `p50 ${f1(r.p50)} ms, max ${f1(r.max)} ms, ${r.errors} past the deadline`;
}

async function main(): Promise<void> {
  const accounts = arg('accounts', 10_000);
  const burst = arg('burst', 60);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-cred-'));
  const engine = await startFerretDb({ dataDir: dir });
  console.log(`bench:credentials on FerretDB/SQLite: ${accounts} accounts, bursts of ${burst}; ${os.cpus().length} CPUs, load ${loadAvg()}`);
  const conn = await mongoose.createConnection(engine.url, { dbName: 'credentials', maxPoolSize: 50, retryWrites: false }).asPromise();
  try {
    const models = createModels(conn);
    await Promise.all(Object.values(models).map((m: mongoose.Model<unknown>) => m.init()));
    const keys: string[] = [];
    for (let i = 0; i < accounts; i += 500) {
      const batch = Array.from({ length: Math.min(500, accounts - i) }, (_, j) => ({ id: randomUUID(), n: i + j }));
      await models.Account.collection.insertMany(
        batch.map((a) => ({
          _id: a.id,
          email: `c${a.n}@example.com`,
          plan: 'starter',
          hardCap: false,
          status: 'active',
          marketplace: { accountId: 'mkt-bench', subscriptionId: `sub-${a.n}` },
        })) as never,
      );
      const docs = batch.flatMap((a) =>
        (['primary', 'secondary'] as const).map((slot) => {
          const key = generateApiKey();
          keys.push(key);
          return { _id: randomUUID(), customerId: a.id, slot, hash: sha256Hex(key), prefix: displayPrefix(key) };
        }),
      );
      await models.ApiKey.insertMany(docs);
    }
    let t0 = performance.now();
    await prepareStore(models);
    console.log(`  start-up with the digest backfill of ${keys.length} keys and ${accounts} subscription ids: ${f1(performance.now() - t0)} ms`);
    t0 = performance.now();
    await prepareStore(models);
    console.log(`  a later start-up (backfill marked done): ${f1(performance.now() - t0)} ms`);
    const service = new ApiKeyService(models, systemClock, new AccountService(models, systemClock));
    const pick = (i: number) => keys[(i * 7919) % keys.length]!;
    // Opens the pool's connections first, so no burst below pays for them.
    await timed(burst, () => models.Account.findById('none').lean().exec());
    const one = async (op: () => Promise<unknown>) => {
      const t = performance.now();
      for (let i = 0; i < 20; i++) await op();
      return f1((performance.now() - t) / 20);
    };
    const plan = await models.CredentialDigest.find({ _id: sha256Hex(pick(3)) }).explain();
    console.log(`  the digest read, explained: ${JSON.stringify(plan).slice(0, 300)}`);
    console.log(
      `  one at a time: valid key ${await one(() => service.authenticate(pick(1)))} ms, unknown key ${await one(() => service.authenticate(generateApiKey()))} ms, by hash ${await one(
        () =>
          models.ApiKey.findOne({ hash: sha256Hex(pick(2)) })
            .lean()
            .exec(),
      )} ms`,
    );
    const owner = new AccountService(models, systemClock);
    const sub = (i: number) => `sub-${(i * 7919) % accounts}`;
    const bySubscription = await models.Account.find({ subscriptionId: sub(5) }).explain();
    console.log(`  the subscription look-up, explained: ${JSON.stringify(bySubscription).slice(0, 200)}`);
    const earlier = async () => {
      const t = performance.now();
      for (let i = 0; i < 5; i++)
        await models.Account.findOne({ 'marketplace.subscriptionId': sub(i) })
          .lean()
          .exec();
      return f1((performance.now() - t) / 5);
    };
    console.log(
      `  one at a time: account by subscription id ${await one(() => owner.getBySubscription(sub(4)))} ms, by marketplace.subscriptionId (the earlier look-up) ${await earlier()} ms`,
    );
    console.log(`  ${burst} valid keys by digest document:     ${await timed(burst, (i) => service.authenticate(pick(i)))}`);
    console.log(`  ${burst} unknown keys by digest document:   ${await timed(burst, () => service.authenticate(generateApiKey()))}`);
    console.log(
      `  ${burst} keys by hash (the earlier look-up): ${await timed(burst, (i) =>
        models.ApiKey.findOne({ hash: sha256Hex(pick(i)) })
          .lean()
          .exec(),
      )}`,
    );
  } finally {
    await conn.close();
    await engine.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
