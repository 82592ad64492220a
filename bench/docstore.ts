// Document-store benchmark (`npm run bench:docstore`), issue 18: the store alone under 300 concurrent
// reads (API-key lookups by digest), 300 concurrent writes (usage-event inserts) and 300 mixed, for FerretDB
// on SQLite as shipped, on SQLite with other connection settings, and on PostgreSQL (when one answers at
// PG_URL, default postgres://postgres@127.0.0.1:5432/postgres), at several driver pool sizes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import mongoose from 'mongoose';
import { startFerretDb, type Engine } from '../dev/engines/local-engines';
import { createModels, ensureIndexes, type Models } from '../shared/db/models';
import { sha256Hex } from '../shared/accounts/secrets';
import { arg, f1 } from './api';
import { timedBurst, type BurstRow } from './support/measure';
import { loadAvg, runMain } from './support/main';

async function seed(models: Models, customers: number): Promise<string[]> {
  const digests: string[] = [];
  for (let i = 0; i < customers; i++) {
    const hash = sha256Hex(randomUUID());
    digests.push(hash);
    await models.ApiKey.create({ _id: randomUUID(), customerId: randomUUID(), slot: 'primary', hash, prefix: 'lc_x' });
  }
  return digests;
}

async function measure(label: string, engine: Engine, pools: number[], concurrency: number): Promise<void> {
  for (const pool of pools) {
    const conn = await mongoose
      .createConnection(engine.url, {
        dbName: `docstore_${pool}`,
        maxPoolSize: pool,
        waitQueueTimeoutMS: 10_000,
        socketTimeoutMS: 30_000,
        retryWrites: false,
        autoIndex: false,
      })
      .asPromise();
    const models = createModels(conn);
    await ensureIndexes(models);
    const digests = await seed(models, 30);
    const read = (i: number) =>
      models.ApiKey.findOne({ hash: digests[i % digests.length] })
        .lean()
        .exec();
    const write = () =>
      models.UsageEvent.create({
        _id: randomUUID(),
        service: 'liveness',
        customerId: 'c',
        month: '2099-01',
        hour: '2099-01-01T00',
        billable: true,
        latencyMs: 1,
        at: new Date(),
      });
    const rows: Array<[string, BurstRow]> = [
      ['reads', await timedBurst(concurrency, read)],
      ['writes', await timedBurst(concurrency, write)],
      ['mixed', await timedBurst(concurrency, (i) => (i % 2 ? read(i) : write()))],
    ];
    for (const [kind, r] of rows) {
      console.log(
        `  ${label.padEnd(28)} pool ${String(pool).padStart(3)}  ${kind.padEnd(6)}  ok ${String(r.ok).padStart(3)}  err ${String(r.errors).padStart(3)}${r.firstError ? ` (${r.firstError})` : ''}  p50 ${f1(r.p50).padStart(7)}  p99 ${f1(r.p99).padStart(7)}  max ${f1(r.max).padStart(7)} ms`,
      );
    }
    await conn.dropDatabase().catch(() => undefined);
    await conn.close();
  }
}

async function pgAnswers(url: string): Promise<boolean> {
  const u = new URL(url);
  const net = await import('node:net');
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port || 5432), u.hostname);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function main(): Promise<void> {
  const concurrency = arg('concurrency', 300);
  const pools = [10, 20, 50, 100];
  console.log(`bench:docstore: ${concurrency} concurrent operations per burst; ${os.cpus().length} CPUs, load ${loadAvg()}`);
  const setups: Array<[string, { postgresqlUrl?: string; sqliteQuery?: string }]> = [
    ['FerretDB/SQLite (shipped)', {}],
    ['FerretDB/SQLite synchronous=NORMAL', { sqliteQuery: '?_pragma=synchronous(NORMAL)' }],
  ];
  const pg = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await pgAnswers(pg)) setups.push(['FerretDB/PostgreSQL', { postgresqlUrl: pg }]);
  else console.log(`  (no PostgreSQL at ${pg}: skipped)`);
  for (const [label, o] of setups) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-docstore-'));
    const engine = await startFerretDb({ dataDir: dir, ...o });
    try {
      await measure(label, engine, pools, concurrency);
    } finally {
      await engine.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`load average now: ${loadAvg()}`);
}

runMain(main);
