// Field benchmark (`npm run bench:field [-- --store sqlite|postgresql|both --scale 1 --events N --reseed --seed-only --pg URL]`),
// issue 27: the service as a customer meets it after a restart, on a store with real history. Seeds (or
// reuses) 10,000 accounts and 1,000,000 usage events written through the real outbox and drainers
// (bench/support/seed.ts), starts `dev/start.ts` cold on a copy of that store (new processes, shipped
// defaults, an empty Redis), then measures at the client: a 300-call liveness burst from 60 customers on 30
// loopback addresses beside a hostile free tenant, 300 usage reads, and the console pages of the customer
// with 50,000 events this month. Prints codes, p50/p99/max, billed vs events written, database errors in
// the service logs and the peak RSS of every process, for FerretDB/SQLite and FerretDB/PostgreSQL.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import sharp from 'sharp';
import { createRedis, closeRedis, waitUntilReady } from '../shared/redis';
import { createModels } from '../shared/db/models';
import { outboxLength } from '../shared/billing/usage-outbox';
import { varDir } from '../shared/paths';
import { describeDocstore } from '../dev/engines/local-engines';
import { DB_NAME, fullScale, pg, pgUrl, readSeed, seed, seedPlace, type SeedManifest, type Store } from './support/seed';
import { call, f0, pct, tally, type Shot, type Tally } from './support/measure';
import { postgresPeakMiB, startService, type Service } from './support/service';
import { ConsoleVisitor, serverMsOf } from './support/console';
import { phonePhoto } from '../dev/harness/sample-images';
import { loadAvg, runMain } from './support/main';

const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
};
const ROOT = path.join(varDir, 'bench-field');
const CALLS_PER_CUSTOMER = 5;
/** No call of the benchmark waits longer than this (the service's budget is 10 s). */
const CALL_TIMEOUT_MS = 30_000;
/** The hostile tenant's flood ends with the burst, and in any case after this long. */
const HOSTILE_MAX_MS = 60_000;
const HOSTILE_NO_FACE_CALLS = 40;
const HOSTILE_BIG_UPLOADS = 20;
const CONSOLE_LOADS = 5;
const DATABASE_ERROR = /database unavailable|MongoServerSelectionError|MongoNetwork|MongoPoolCleared|MongoWaitQueueTimeout|MongoOperationTimeout|timed out/i;
/** A step ran out of the budget (shared/deadline.ts) or the job's result did not come in time (job-client.ts). */
const BUDGET_ERROR = /No (answer|result) within the time budget/;

interface Images {
  photo: string;
  photoBytes: number;
  noFace: string;
  noFaceBytes: number;
  tenMb: string;
}

/** The phone-sized photo (dev/harness/sample-images.ts), a 40 MP photo without a face, a 10 MB body. */
async function images(): Promise<Images> {
  const best = await phonePhoto();
  // 40 megapixels without a face: grey with mild noise (decoding it costs the worker what a real 40 MP photo does).
  const noFace = await sharp({ create: { width: 7300, height: 5480, channels: 3, background: '#777', noise: { type: 'gaussian', mean: 120, sigma: 6 } } })
    .jpeg({ quality: 40 })
    .toBuffer();
  return {
    photo: JSON.stringify({ image: best.toString('base64'), image_format: 'jpeg' }),
    photoBytes: best.length,
    noFace: JSON.stringify({ image: noFace.toString('base64'), image_format: 'jpeg' }),
    noFaceBytes: noFace.length,
    tenMb: JSON.stringify({ image: 'A'.repeat(10 * 1024 * 1024 - 40), image_format: 'jpeg' }),
  };
}

interface StoreResult {
  store: Store;
  label: string;
  seed: SeedManifest;
  seededNow: boolean;
  startMs: number;
  burst: Tally;
  burstFresh: Tally;
  burstExisting: Tally;
  /** How many of its calls each of the 60 customers got answered with 200, ascending. */
  answeredPerCustomer: number[];
  hostileNoFace: Tally;
  hostileUploads: Tally;
  usage: Tally;
  answered200: number;
  eventsWritten: number;
  pendingOutbox: number;
  pages: Array<{ page: string; status: string; p50: number; max: number; source: string }>;
  dbErrors: number;
  budgetErrors: number;
  dbErrorExamples: string[];
  rss: Map<string, number>;
  rssAtRest: Map<string, number>;
  /** Wall time of the burst (first call sent to last answer) and the CPU each process spent in it. */
  burstMs: number;
  burstCpuMs: Map<string, number>;
}

interface HostileShots {
  noFace: Shot[];
  uploads: Shot[];
}

/**
 * The hostile free tenant, from its own address: 40-megapixel images without a face (4 at a time, at most
 * HOSTILE_NO_FACE_CALLS) and, once its fair-use bucket is spent (80 usage reads at once against the burst of
 * 60), 20 concurrent 10 MB uploads that the throttle should refuse.
 */
async function hostileFlood(base: string, key: string, img: Images, stopAt: () => boolean): Promise<HostileShots> {
  const out: HostileShots = { noFace: [], uploads: [] };
  const deadline = Date.now() + HOSTILE_MAX_MS;
  const localAddress = '127.0.0.40';
  const opts = { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, localAddress, timeoutMs: CALL_TIMEOUT_MS };
  let sent = 0;
  const noFaceLoop = async () => {
    while (sent < HOSTILE_NO_FACE_CALLS && !stopAt() && Date.now() < deadline) {
      sent++;
      out.noFace.push(await call(`${base}/v1/check/liveness`, { ...opts, body: img.noFace }));
    }
  };
  const throttledUploads = async () => {
    await Promise.all(Array.from({ length: 80 }, () => call(`${base}/v1/usage`, { headers: { 'x-api-key': key }, localAddress, timeoutMs: CALL_TIMEOUT_MS })));
    out.uploads = await Promise.all(Array.from({ length: HOSTILE_BIG_UPLOADS }, () => call(`${base}/v1/check/liveness`, { ...opts, body: img.tenMb })));
  };
  await Promise.all([...Array.from({ length: 4 }, noFaceLoop), throttledUploads()]);
  return out;
}

async function runStore(store: Store, scaleF: number, reseed: boolean, pgHost: string): Promise<StoreResult | null> {
  // --events N keeps the accounts (and so the documents every request reads) at full scale with a shorter history:
  // the usage events themselves are never read on a request or page, only their per-month counter documents.
  const events = argValue('events');
  const scale = { ...fullScale(scaleF), ...(events ? { events: Number(events) } : {}) };
  const place = seedPlace(ROOT, store, scale);
  let manifest = reseed ? null : readSeed(place);
  const seededNow = !manifest;
  if (!manifest) {
    console.log(`[${store}] seeding ${scale.accounts} accounts and ${scale.events} events through the outbox (cached in ${place.dir})`);
    manifest = await seed(ROOT, place, pgHost, scale, (s) => console.log(`[${store}]${s}`));
    console.log(`[${store}] seeded in ${(manifest.seededMs / 1000).toFixed(0)} s (${manifest.eventsWritten} events written)`);
  } else {
    console.log(`[${store}] reusing the seed in ${place.dir} (it took ${(manifest.seededMs / 1000).toFixed(0)} s to make)`);
  }
  if (process.argv.includes('--seed-only')) return null;

  // A fresh copy of the seeded store for this run: the run's writes never reach the cache.
  const runDir = path.join(ROOT, `run-${store}`);
  fs.rmSync(runDir, { recursive: true, force: true });
  fs.mkdirSync(runDir, { recursive: true });
  let localDocstore = 'sqlite';
  if (store === 'sqlite') {
    fs.cpSync(path.join(place.dir, 'ferretdb'), path.join(runDir, 'ferretdb'), { recursive: true });
  } else {
    const runDb = 'bench_field_run';
    pg('dropdb', pgHost, ['--if-exists', runDb]);
    pg('createdb', pgHost, ['-T', place.pgDatabase!, runDb]);
    localDocstore = pgUrl(pgHost, runDb);
  }
  const img = await images();
  const label = describeDocstore(localDocstore);
  console.log(
    `[${store}] starting dev/start.ts cold on ${label} (photo ${img.photoBytes} B JPEG, ${img.photo.length} B of JSON; hostile no-face JPEG ${img.noFaceBytes} B); load ${loadAvg()}`,
  );
  const t0 = Date.now();
  const svc: Service = await startService(runDir, { APP_SECRET: manifest.appSecret, LOCAL_DOCSTORE: localDocstore });
  const startMs = Date.now() - t0;
  try {
    return await measure(store, label, manifest, seededNow, startMs, svc, img);
  } finally {
    await svc.stop();
    // Every process's log lines (access log with each request's stages), for a look at where calls waited.
    fs.writeFileSync(path.join(runDir, 'service.log'), svc.logs.join('\n') + '\n');
  }
}

async function measure(store: Store, label: string, m: SeedManifest, seededNow: boolean, startMs: number, svc: Service, img: Images): Promise<StoreResult> {
  const base = svc.livenessUrl;
  // Sent in turns (existing 0, new 0, existing 1, …) so that neither group is first in the accept queue by the
  // bench's own order.
  const customers = m.existing.flatMap((c, j) => [
    { ...c, j, fresh: false },
    { ...m.fresh[j]!, j, fresh: true },
  ]);
  const addressOf = (j: number) => `127.0.0.${10 + j}`;
  // Each process's RSS once started and idle (sampled for a second), then the peaks from the burst on.
  svc.resetPeaks();
  await new Promise((r) => setTimeout(r, 1_000));
  const rssAtRest = svc.peaks();
  svc.resetPeaks();
  console.log(`[${store}] burst: ${customers.length} customers × ${CALLS_PER_CUSTOMER} liveness calls at once on 30 addresses, a hostile free key beside them`);
  let burstOver = false;
  const cpuBefore = svc.cpuMs();
  const burstStart = Date.now();
  const hostile = hostileFlood(base, m.hostile.key, img, () => burstOver);
  const calls = await Promise.all(
    customers.flatMap((c) =>
      Array.from({ length: CALLS_PER_CUSTOMER }, async () => ({
        fresh: c.fresh,
        customerId: c.customerId,
        shot: await call(`${base}/v1/check/liveness`, {
          method: 'POST',
          headers: { 'x-api-key': c.key, 'content-type': 'application/json' },
          body: img.photo,
          localAddress: addressOf(c.j),
          timeoutMs: CALL_TIMEOUT_MS,
        }),
      })),
    ),
  );
  burstOver = true;
  const burstMs = Date.now() - burstStart;
  const cpuAfter = svc.cpuMs();
  const burstCpuMs = new Map([...cpuAfter].map(([label, ms]) => [label, ms - (cpuBefore.get(label) ?? 0)]));
  const hostileShots = await hostile;
  console.log(`[${store}] usage reads: ${customers.length} customers × ${CALLS_PER_CUSTOMER} GET /v1/usage at once`);
  const usage = await Promise.all(
    customers.flatMap((c) =>
      Array.from({ length: CALLS_PER_CUSTOMER }, () =>
        call(`${base}/v1/usage`, { headers: { 'x-api-key': c.key }, localAddress: addressOf(c.j), timeoutMs: CALL_TIMEOUT_MS }),
      ),
    ),
  );

  // Billed vs written: wait (bounded) for the outbox to drain, then count the events of the 60 customers.
  const redis = createRedis(svc.state.redisUrl, 'producer', 'bench-field');
  await waitUntilReady(redis);
  // Its own connection, not the service's settings: counting events may be a scan (slow on purpose here).
  const conn = await mongoose
    .createConnection(svc.state.mongoUri, { dbName: DB_NAME, socketTimeoutMS: 180_000, retryWrites: false, autoIndex: false })
    .asPromise();
  let pendingOutbox = 0;
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 500))) {
    pendingOutbox = await outboxLength(redis, '{lc}');
    if (pendingOutbox === 0) break;
  }
  // By _id (the request id each answer carried): a primary-key read per answer, never a scan of the history.
  const UsageEvent = createModels(conn).UsageEvent;
  const answeredIds = calls.map((c) => c.shot).flatMap((s) => (s.status === 200 && s.requestId ? [s.requestId] : []));
  let eventsWritten = 0;
  for (let i = 0; i < answeredIds.length; i += 10) {
    const found = await Promise.all(answeredIds.slice(i, i + 10).map((id) => UsageEvent.findById(id, { billable: 1 }).lean()));
    eventsWritten += found.filter((e) => e?.billable).length;
  }
  await conn.close();
  await closeRedis(redis);

  console.log(`[${store}] console pages of the customer with the most events`);
  const visitor = new ConsoleVisitor(base);
  const pages: StoreResult['pages'] = [];
  try {
    // The pages are measured on their own, not behind the burst's tail: at most 60 s for the API to be ready again.
    for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 1000))) {
      if ((await call(`${base}/readyz`, { timeoutMs: 5000 })).status === 200) break;
    }
    await visitor.signIn(m.big.email, m.big.password, m.big.totpSecret).catch(async (err: Error) => {
      console.log(`[${store}] console sign-in failed once (${err.message}); signing in again`);
      await new Promise((r) => setTimeout(r, 31_000)); // a TOTP code is accepted once per 30-s step
      await visitor.signIn(m.big.email, m.big.password, m.big.totpSecret);
    });
    for (const page of ['dashboard', 'keys', 'emotion']) {
      const loads: Array<{ status: number; ms: number; fromLog: boolean }> = [];
      for (let i = 0; i < CONSOLE_LOADS; i++) {
        const s = await visitor.get(`/console/${page}`);
        await new Promise((r) => setTimeout(r, 100)); // the access-log line is written after the answer
        const server = serverMsOf(svc.logs, s.requestId);
        loads.push({ status: s.status, ms: server ?? s.ms, fromLog: server !== null });
      }
      const ms = loads.map((l) => l.ms).sort((a, b) => a - b);
      const statuses = [...new Set(loads.map((l) => l.status))].join('/');
      pages.push({
        page,
        status: statuses,
        p50: pct(ms, 50),
        max: ms[ms.length - 1]!,
        source: loads.every((l) => l.fromLog) ? 'server (access log)' : 'client (loopback)',
      });
    }
  } catch (err) {
    console.log(`[${store}] console: ${(err as Error).message}`);
  }

  const dbLines = svc.logs.filter((l) => DATABASE_ERROR.test(l) && !BUDGET_ERROR.test(l));
  const rss = svc.peaks();
  if (store === 'postgresql') rss.set('PostgreSQL (largest backend)', postgresPeakMiB());
  const shots = calls.map((c) => c.shot);
  return {
    store,
    label,
    seed: m,
    seededNow,
    startMs,
    burst: tally(shots),
    burstFresh: tally(calls.filter((c) => c.fresh).map((c) => c.shot)),
    burstExisting: tally(calls.filter((c) => !c.fresh).map((c) => c.shot)),
    answeredPerCustomer: customers.map((c) => calls.filter((k) => k.customerId === c.customerId && k.shot.status === 200).length).sort((a, b) => a - b),
    hostileNoFace: tally(hostileShots.noFace),
    hostileUploads: tally(hostileShots.uploads),
    usage: tally(usage),
    answered200: shots.filter((s) => s.status === 200).length,
    eventsWritten,
    pendingOutbox,
    pages,
    dbErrors: dbLines.length,
    budgetErrors: svc.logs.filter((l) => BUDGET_ERROR.test(l)).length,
    dbErrorExamples: [...new Set(dbLines.map((l) => l.replace(/"(time|pid|requestId|reqId|hostname)":[^,]*,?/g, '').slice(0, 240)))].slice(0, 3),
    rss,
    rssAtRest,
    burstMs,
    burstCpuMs,
  };
}

function print(r: StoreResult): void {
  const line = (name: string, t: Tally) => `  ${name.padEnd(34)} ${`p50 ${f0(t.p50)}  p99 ${f0(t.p99)}  max ${f0(t.max)} ms`.padEnd(34)} ${t.codes}`;
  console.log(`\n== ${r.label} ==`);
  console.log(
    `  seed: ${r.seed.eventsWritten} events, seeding took ${(r.seed.seededMs / 1000).toFixed(0)} s${r.seededNow ? '' : ' (cached seed reused)'}; cold start to ready ${(r.startMs / 1000).toFixed(1)} s`,
  );
  console.log(line(`liveness burst (${r.burst.n} at once)`, r.burst));
  const cpuTotal = [...r.burstCpuMs.values()].reduce((a, b) => a + b, 0);
  console.log(
    `  burst wall ${(r.burstMs / 1000).toFixed(1)} s; CPU in it ${(cpuTotal / 1000).toFixed(1)} s: ${[...r.burstCpuMs]
      .filter(([, ms]) => ms >= 50)
      .map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)}`)
      .join(', ')}`,
  );
  console.log(line('  of which 30 new customers', r.burstFresh));
  console.log(line('  of which 30 existing customers', r.burstExisting));
  const per = r.answeredPerCustomer;
  const share = (k: number) => per.filter((n) => n === k).length;
  console.log(
    `  200s per customer (of ${CALLS_PER_CUSTOMER}): min ${per[0]}, median ${per[per.length >> 1]}, max ${per.at(-1)}; ${Array.from({ length: CALLS_PER_CUSTOMER + 1 }, (_, k) => `${share(k)} × ${k}`).join(', ')}`,
  );
  console.log(line(`hostile: ${r.hostileNoFace.n} no-face 40 MP images`, r.hostileNoFace));
  console.log(line(`hostile: ${r.hostileUploads.n} × 10 MB, throttled`, r.hostileUploads));
  console.log(line(`GET /v1/usage (${r.usage.n} at once)`, r.usage));
  console.log(
    `  billed: ${r.answered200} answered 200; ${r.eventsWritten} of their request ids have a billable event in the store (outbox pending: ${r.pendingOutbox})`,
  );
  for (const p of r.pages)
    console.log(`  console /${p.page.padEnd(10)} ${p.status}  p50 ${f0(p.p50)}  max ${f0(p.max)} ms (${p.source}, ${CONSOLE_LOADS} loads)`);
  console.log(`  service log: ${r.dbErrors} database errors, ${r.budgetErrors} "No answer / No result within the time budget"`);
  for (const e of r.dbErrorExamples) console.log(`    e.g. ${e}`);
  console.log(`  RSS at rest (MiB): ${[...r.rssAtRest].map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}`);
  console.log(`  peak RSS (MiB): ${[...r.rss].map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}`);
}

async function main(): Promise<void> {
  const which = argValue('store') ?? 'both';
  const stores: Store[] = which === 'both' ? ['sqlite', 'postgresql'] : [which as Store];
  const scale = Number(argValue('scale') ?? '1');
  const pgHost = argValue('pg') ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  console.log(
    `bench:field: ${stores.join(' and ')}; scale ${scale}; ${os.cpus().length} CPUs, load ${loadAvg()}; conditions: shipped defaults, cold start (empty Redis), loopback only`,
  );
  const results: StoreResult[] = [];
  for (const store of stores) {
    // One store's failure does not lose the other's figures.
    const r = await runStore(store, scale, process.argv.includes('--reseed'), pgHost).catch((err: Error) => {
      console.log(`[${store}] failed: ${err.stack ?? err.message}`);
      process.exitCode = 1;
      return null;
    });
    if (!r) continue;
    print(r);
    results.push(r);
  }
  if (results.length < 2) return;
  console.log(`\n== summary (client-side times; machine load now ${loadAvg()}) ==`);
  for (const r of results) print(r);
}

runMain(main);
