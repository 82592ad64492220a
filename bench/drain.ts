// Usage drainer benchmark (`npm run bench:drain`), issue 27: how fast the outbox drainer writes usage events and
// their counter documents into FerretDB/SQLite (as shipped). Fills the outbox with --events events spread over
// --customers customers (two keys each), then starts --drainers drainers (the shipped batch size and window) and
// times them until the outbox is empty; checks the counters' sum equals the events.
import fs from 'node:fs';
import os from 'node:os';
import { loadAvg, runMain } from './support/main';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startFerretDb, startRedis } from '../dev/engines/local-engines';
import { createRedis, closeRedis, waitUntilReady } from '../shared/redis';
import { connectMongo } from '../shared/db/mongo';
import { createModels, ensureIndexes } from '../shared/db/models';
import { encodeOutboxEvent, outboxKey, outboxLength } from '../shared/billing/usage-outbox';
import { partitionPrefix } from '../shared/redis-partitions';
import { createLogger } from '../shared/logger';
import { UsageDrainer } from '../workers/runtime/usage-drainer';
import { arg } from './api';

async function main(): Promise<void> {
  const events = arg('events', 20_000);
  const customers = arg('customers', 10_000);
  const drainers = arg('drainers', 1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-drain-'));
  const redisEngine = await startRedis({ dir: path.join(dir, 'redis') });
  const mongoEngine = await startFerretDb({ dataDir: path.join(dir, 'ferretdb') });
  const redis = createRedis(redisEngine.url, 'producer');
  await waitUntilReady(redis);
  const conn = await connectMongo(mongoEngine.url, 'drain');
  const models = createModels(conn);
  await ensureIndexes(models);
  const prefix = '{bench-drain}';
  const ids = Array.from({ length: customers }, () => randomUUID());
  console.log(`bench:drain: ${events} events over ${customers} customers, ${drainers} drainer(s); ${os.cpus().length} CPUs, load ${loadAvg()}`);
  const at = new Date();
  for (let i = 0; i < events; i += 1000) {
    const pipe = redis.pipeline();
    for (let j = i; j < Math.min(events, i + 1000); j++) {
      const customerId = ids[j % customers]!;
      const event = encodeOutboxEvent({
        service: 'liveness',
        customerId,
        keyId: `${customerId}-${j % 2}`,
        plan: 'business',
        billable: true,
        latencyMs: 20,
        at,
      });
      pipe.xadd(outboxKey(partitionPrefix(prefix, customerId)), '*', 'id', randomUUID(), 'event', event, 'overage', '0');
    }
    await pipe.exec();
  }
  const log = createLogger('bench-drain', 'warn');
  const conns = Array.from({ length: drainers }, () => createRedis(redisEngine.url, 'worker'));
  const running = conns.map((c) => new UsageDrainer({ redis: c, prefix, models, log, claimIdleMs: 10_000 }));
  const t0 = performance.now();
  await Promise.all(running.map((d) => d.start()));
  let lastShown = t0;
  while ((await outboxLength(redis, prefix)) > 0) {
    await new Promise((r) => setTimeout(r, 200));
    if (performance.now() - lastShown > 10_000) {
      lastShown = performance.now();
      const left = await outboxLength(redis, prefix);
      console.log(`  ${events - left} drained after ${((lastShown - t0) / 1000).toFixed(0)} s`);
    }
  }
  const s = (performance.now() - t0) / 1000;
  await Promise.all(running.map((d) => d.stop()));
  const counted = (await models.UsageCounter.find({}, { used: 1 }).lean()).reduce((n, d) => n + (d.used ?? 0), 0);
  console.log(`  drained ${events} events in ${s.toFixed(1)} s: ${(events / s).toFixed(0)} events/s; counters hold ${counted}; load ${loadAvg()}`);
  for (const c of conns) await closeRedis(c);
  await closeRedis(redis);
  await conn.close();
  await mongoEngine.stop();
  await redisEngine.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

runMain(main);
