// Usage counter documents (shared/billing/usage-counters.ts): the drainer keeps them equal to a recount of the
// usage events when a drainer is killed mid-batch (the fault hook, step in_drainer) and its entries are taken
// over, and when two drainers run at once; the ledger's cold rebuild and the console read them, not the events.
import { expect } from 'chai';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import type { Redis } from 'ioredis';
import { createRedis, closeRedis, waitUntilReady } from '../../../shared/redis';
import { connectMongo } from '../../../shared/db/mongo';
import { createModels, ensureIndexes, type Models } from '../../../shared/db/models';
import { encodeOutboxEvent, OUTBOX_GROUP, outboxKey, undrainedKey } from '../../../shared/billing/usage-outbox';
import { storeOutcome } from '../../../shared/queues/outcome-store';
import { counterId, UsageCounters } from '../../../shared/billing/usage-counters';
import { CreditLedger, creditsKey } from '../../../shared/billing/credit-ledger';
import { allPartitionPrefixes, partitionPrefix } from '../../../shared/redis-partitions';
import { queueKeys } from '../../../shared/queues/keys';
import { monthOf } from '../../../shared/billing/month';
import { UsageDrainer } from '../../../workers/runtime/usage-drainer';
import { usageByKey, usageByToken } from '../../../api/console/usage';
import { commandCalls, isolation, testMongoUri, testRedisUrl } from '../../support/engines';
import { outboxDrained, settleReserved } from '../../support/billing';
import { quietLog } from '../../support/config';
import { StallableProxy } from '../../support/stallable-proxy';

const NOW = new Date();
const MONTH = monthOf(NOW);
const EARLIER = new Date(Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth() - 2, 10, 12));

/** What the events in MongoDB say for a customer's liveness month: the recount the counters must equal. */
async function recountLiveness(models: Models, customerId: string) {
  const events = await models.UsageEvent.find({ service: 'liveness', customerId, month: MONTH, billable: true }).lean();
  const keys: Record<string, number> = {};
  const daily: Record<string, number> = {};
  for (const e of events) {
    if (e.keyId) keys[e.keyId] = (keys[e.keyId] ?? 0) + 1;
    const day = e.at.toISOString().slice(8, 10);
    daily[day] = (daily[day] ?? 0) + 1;
  }
  return { used: events.length, overage: events.filter((e) => e.overage).length, keys, daily };
}

async function recountToken(models: Models, tokenId: string) {
  const events = await models.UsageEvent.find({ service: 'emotion', tokenId, month: MONTH }).lean();
  const audioSeconds = events.reduce((s, e) => s + Number((e.verdict as { duration?: number }).duration), 0);
  return { calls: events.length, audioSeconds };
}

describe('usage counter documents', () => {
  const { prefix, dbName } = isolation('usage-counters');
  let redis: Redis;
  let conn: Connection;
  let models: Models;
  let counters: UsageCounters;

  before(async () => {
    redis = createRedis(testRedisUrl(), 'producer');
    await waitUntilReady(redis);
    conn = await connectMongo(testMongoUri(), dbName);
    models = createModels(conn);
    await ensureIndexes(models);
    counters = new UsageCounters(redis, prefix, models);
    for (const home of allPartitionPrefixes(prefix)) await redis.xgroup('CREATE', outboxKey(home), OUTBOX_GROUP, '0', 'MKSTREAM');
  });
  after(async () => {
    await closeRedis(redis);
    await conn.close();
  });

  /** Appends one usage event to the outbox the way the workers do (storeOutcome), and returns its request id. */
  const appendLiveness = async (customerId: string, keyId: string, at = NOW) => {
    const requestId = randomUUID();
    await storeOutcome(redis, queueKeys(prefix).result(requestId, customerId), '{"ok":true}', 60_000, {
      requestId,
      json: encodeOutboxEvent({ service: 'liveness', customerId, keyId, plan: 'business', billable: true, latencyMs: 20, at }),
    });
    return requestId;
  };
  const appendEmotion = async (tokenId: string, duration: number) => {
    const requestId = randomUUID();
    await storeOutcome(redis, queueKeys(prefix).result(requestId, tokenId), '{"ok":true}', 60_000, {
      requestId,
      json: encodeOutboxEvent({ service: 'emotion', tokenId, billable: false, latencyMs: 30, verdict: { intervals: 2, duration }, at: NOW }),
    });
    return requestId;
  };

  const startDrainer = async (o: Partial<ConstructorParameters<typeof UsageDrainer>[0]> = {}) => {
    const drainerRedis = createRedis(testRedisUrl(), 'worker');
    await waitUntilReady(drainerRedis);
    // A 1 s takeover instead of the shipped 10 s keeps the kill test short; the property does not depend on it.
    const drainer = new UsageDrainer({ redis: drainerRedis, prefix, models, log: quietLog, claimIdleMs: 1000, blockMs: 200, ...o });
    await drainer.start();
    return {
      drainer,
      stop: async () => {
        await drainer.stop();
        await closeRedis(drainerRedis);
      },
    };
  };

  /** Consumer -> number of outbox entries it holds unacknowledged. */
  const pendingOwners = async () => {
    const owners = new Map<string, number>();
    for (const home of allPartitionPrefixes(prefix)) {
      const reply = (await redis.call('XPENDING', outboxKey(home), OUTBOX_GROUP)) as [number, string | null, string | null, Array<[string, string]> | null];
      for (const [name, n] of reply[3] ?? []) owners.set(name, (owners.get(name) ?? 0) + Number(n));
    }
    return owners;
  };
  const eventuallyTrue = async (check: () => Promise<boolean>, timeoutMs = 20_000) => {
    const until = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > until) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  /** Runs `append` with one drainer running, and stops it once the outbox is empty. */
  const drainedWhile = async (append: () => Promise<unknown> = async () => undefined, timeoutMs = 20_000) => {
    const d = await startDrainer();
    try {
      await append();
      await outboxDrained(redis, prefix, timeoutMs);
    } finally {
      await d.stop();
    }
  };

  const expectCountersEqualRecount = async (customerIds: string[], tokenIds: string[]) => {
    for (const customerId of customerIds) {
      const doc = await counters.month('liveness', customerId, MONTH);
      const recount = await recountLiveness(models, customerId);
      expect(recount.used).to.be.greaterThan(0);
      expect({ used: doc?.used, overage: doc?.overage, keys: doc?.keys, daily: doc?.daily }).to.deep.equal(recount);
    }
    for (const tokenId of tokenIds) {
      const doc = await counters.month('emotion', tokenId, MONTH);
      expect({ calls: doc?.calls, audioSeconds: doc?.audioSeconds }).to.deep.equal(await recountToken(models, tokenId));
    }
  };

  it('counts every event once when a drainer is killed after counting a batch and another takes its entries over', async function () {
    this.timeout(120_000);
    const customers = [randomUUID(), randomUUID(), randomUUID()];
    const token = randomUUID();
    const appended: string[] = [];
    for (let i = 0; i < 90; i++) appended.push(await appendLiveness(customers[i % 3]!, `key-${i % 2}`));
    for (let i = 0; i < 10; i++) appended.push(await appendEmotion(token, 1.5 + i));

    const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, '../../support/drainer-process.ts')], {
      env: {
        ...process.env,
        DRAINER_DB: dbName,
        DRAINER_PREFIX: prefix,
        DRAINER_CLAIM_IDLE_MS: '1000',
        FAULT_KILL_AT: 'in_drainer',
        TEST_REDIS_URL: testRedisUrl(),
        TEST_MONGODB_URI: testMongoUri(),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    child.stderr.on('data', (c: Buffer) => (logs += c.toString()));
    child.stdout.on('data', (c: Buffer) => (logs += c.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, sig) => resolve(sig)));
    expect(signal, logs).to.equal('SIGKILL');
    expect(logs).to.include('"step":"in_drainer"');
    // It died after writing the counters and before acknowledging: the counts are in, the entries still pending.
    expect((await counters.month('liveness', customers[0]!, MONTH))?.used).to.equal(30);
    expect([...(await pendingOwners()).values()].reduce((a, b) => a + b, 0)).to.equal(appended.length);

    await drainedWhile(undefined, 30_000);
    expect(await models.UsageEvent.countDocuments({ _id: { $in: appended } })).to.equal(appended.length);
    await expectCountersEqualRecount(customers, [token]);
    expect((await counters.month('liveness', customers[0]!, MONTH))?.used).to.equal(30);
    expect((await counters.month('emotion', token, MONTH))?.calls).to.equal(10);
  });

  it('gives exact counts with two drainers writing the same customers at once', async function () {
    this.timeout(120_000);
    const customers = [randomUUID(), randomUUID()];
    // Small batches, batched from the first event: both drainers then hold entries of the same customers at once.
    const a = await startDrainer({ batchSize: 20, batchMinRatePerS: 0, batchWindowMs: 50 });
    const b = await startDrainer({ batchSize: 20, batchMinRatePerS: 0, batchWindowMs: 50 });
    try {
      await Promise.all(Array.from({ length: 200 }, (_, i) => appendLiveness(customers[i % 2]!, `key-${i % 3}`)));
      await outboxDrained(redis, prefix, 60_000);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    await expectCountersEqualRecount(customers, []);
    for (const c of customers) expect((await counters.month('liveness', c, MONTH))?.used).to.equal(100);
  });

  it('keeps a batch whose write outlasts the claim idle time with its drainer: no other drainer takes it over mid-write', async function () {
    this.timeout(120_000);
    const customerId = randomUUID();
    // Drainer A writes through a proxy that stops answering, as a store under load does; B is healthy. The claim
    // idle time is 300 ms (shipped: 10 s) so that the stalled write outlasts it many times over in a short test.
    const db = new URL(testMongoUri());
    const proxy = new StallableProxy();
    await proxy.start({ host: db.hostname, port: Number(db.port) });
    const slowConn = await connectMongo(`mongodb://127.0.0.1:${proxy.port}/`, dbName);
    const a = await startDrainer({ models: createModels(slowConn), claimIdleMs: 300 });
    let b: Awaited<ReturnType<typeof startDrainer>> | undefined;
    try {
      proxy.stall();
      const ids = await Promise.all(Array.from({ length: 10 }, () => appendLiveness(customerId, 'key-slow')));
      // A has read the entries and is stuck writing them.
      await eventuallyTrue(async () => (await pendingOwners()).get(a.drainer.consumer) === ids.length);
      b = await startDrainer({ claimIdleMs: 300 });
      await new Promise((r) => setTimeout(r, 2000)); // B looks for abandoned entries every 150 ms meanwhile
      expect(Object.fromEntries(await pendingOwners()), 'the entries stay with the drainer writing them').to.deep.equal({ [a.drainer.consumer]: ids.length });
      proxy.resume();
      await outboxDrained(redis, prefix, 30_000);
    } finally {
      proxy.resume();
      await Promise.all([a.stop(), b?.stop()]);
      await slowConn.close();
      await proxy.close();
    }
    await expectCountersEqualRecount([customerId], []);
    expect((await counters.month('liveness', customerId, MONTH))?.used).to.equal(10);
  });

  it('counts once the batch of a drainer cut off from Redis and the store past the claim idle time, which another drainer took over meanwhile', async function () {
    this.timeout(120_000);
    const customerId = randomUUID();
    // Drainer A reaches Redis and the store through proxies that stop answering, as a worker host whose link goes
    // down does (npm run bench:hosts); B is healthy. Claim idle time 300 ms (shipped: 10 s) to keep the test short.
    const db = new URL(testMongoUri());
    const cache = new URL(testRedisUrl());
    const dbLink = new StallableProxy();
    const redisLink = new StallableProxy();
    await dbLink.start({ host: db.hostname, port: Number(db.port) });
    await redisLink.start({ host: cache.hostname, port: Number(cache.port) });
    const cutConn = await connectMongo(`mongodb://127.0.0.1:${dbLink.port}/`, dbName);
    const cutRedis = createRedis(`redis://127.0.0.1:${redisLink.port}`, 'worker');
    await waitUntilReady(cutRedis);
    const a = new UsageDrainer({ redis: cutRedis, prefix, models: createModels(cutConn), log: quietLog, claimIdleMs: 300, blockMs: 200 });
    await a.start();
    let b: Awaited<ReturnType<typeof startDrainer>> | undefined;
    try {
      dbLink.stall();
      const ids = await Promise.all(Array.from({ length: 10 }, () => appendLiveness(customerId, 'key-cut')));
      // A has read the entries and is stuck writing them; then its Redis link goes too (no more renewals).
      await eventuallyTrue(async () => (await pendingOwners()).get(a.consumer) === ids.length);
      redisLink.stall();
      b = await startDrainer({ claimIdleMs: 300 });
      await outboxDrained(redis, prefix, 30_000);
      expect((await counters.month('liveness', customerId, MONTH))?.used, 'B took the entries over and counted them').to.equal(10);
      // The link comes back: A finishes the write it started.
      dbLink.resume();
      redisLink.resume();
      await a.stop();
    } finally {
      dbLink.resume();
      redisLink.resume();
      await Promise.all([a.stop(), b?.stop()]);
      await closeRedis(cutRedis);
      await cutConn.close();
      await Promise.all([dbLink.close(), redisLink.close()]);
    }
    await expectCountersEqualRecount([customerId], []);
    expect((await counters.month('liveness', customerId, MONTH))?.used).to.equal(10);
  });

  it("rebuilds a cold customer's month from its counter document, without the usage events", async () => {
    const customerId = randomUUID();
    const plan = { plan: 'enterprise' as const, monthlyLimit: 2, hardCap: false };
    const ledger = new CreditLedger(redis, prefix, models, () => NOW);
    await drainedWhile(async () => {
      for (let i = 0; i < 5; i++) {
        const requestId = randomUUID();
        const r = await ledger.reserve(customerId, plan, requestId);
        await settleReserved(ledger, prefix, { customerId, month: r.month, at: r.at, requestId, plan });
      }
    });
    const before = await ledger.snapshot(customerId, plan);
    expect(before).to.include({ used: 5, overage: 3 });
    // The events are gone and Redis forgot the month: only the counter document can give these numbers back.
    await models.UsageEvent.deleteMany({ customerId });
    await redis.del(creditsKey(prefix, customerId, MONTH));
    const cold = new CreditLedger(redis, prefix, models, () => NOW);
    expect(await cold.snapshot(customerId, plan)).to.deep.equal(before);
  });

  it('adds the undrained billed calls the counter document does not hold yet, each once, without reading the outbox', async () => {
    const customerId = randomUUID();
    const plan = { plan: 'business' as const, monthlyLimit: 1000, hardCap: true };
    const ledger = new CreditLedger(redis, prefix, models, () => NOW);
    const bill = async () => {
      const requestId = randomUUID();
      const r = await ledger.reserve(customerId, plan, requestId);
      await settleReserved(ledger, prefix, { customerId, month: r.month, at: r.at, requestId, plan });
    };
    await drainedWhile(async () => {
      for (let i = 0; i < 3; i++) await bill();
    });
    // Two more that no drainer has written yet (none is running), among 500 other customers' entries.
    await bill();
    await bill();
    for (let i = 0; i < 500; i++) await appendLiveness(randomUUID(), 'key-9');
    await redis.del(creditsKey(prefix, customerId, MONTH));
    const xrangeBefore = await commandCalls(redis, 'xrange');
    const cold = new CreditLedger(redis, prefix, models, () => NOW);
    expect((await cold.snapshot(customerId, plan)).used).to.equal(5);
    expect((await commandCalls(redis, 'xrange')) - xrangeBefore, 'the outbox is not read').to.equal(0);
    await drainedWhile();
    expect((await counters.month('liveness', customerId, MONTH))?.used).to.equal(5);
    // Drained: its undrained index is empty again.
    expect(await redis.hlen(undrainedKey(partitionPrefix(prefix, customerId), customerId, MONTH))).to.equal(0);
  });

  it("gives the console's per-key and per-token figures from the counters", async () => {
    const customerId = randomUUID();
    const tokens = [randomUUID(), randomUUID()];
    await drainedWhile(async () => {
      for (let i = 0; i < 7; i++) await appendLiveness(customerId, i < 5 ? 'key-a' : 'key-b');
      await appendLiveness(customerId, 'key-c', EARLIER);
      for (let i = 0; i < 4; i++) await appendEmotion(tokens[0]!, 2.5);
    });
    const byKey = await usageByKey(models, customerId, MONTH, [
      { id: 'key-a', since: null },
      { id: 'key-b', since: new Date(NOW.getTime() + 1000) }, // regenerated after its last call: no last use shown
      { id: 'key-c', since: null },
      { id: 'key-d', since: null },
    ]);
    const doc = await models.UsageCounter.findById(counterId('liveness', customerId, MONTH)).lean();
    expect(doc?.keys).to.deep.equal({ 'key-a': 5, 'key-b': 2 });
    expect(byKey.get('key-a')).to.deep.equal({ keyId: 'key-a', calls: 5, lastUsedAt: NOW });
    expect(byKey.get('key-b')).to.deep.equal({ keyId: 'key-b', calls: 2, lastUsedAt: null });
    // Last used two months ago: found in that month's document.
    expect(byKey.get('key-c')).to.deep.equal({ keyId: 'key-c', calls: 0, lastUsedAt: EARLIER });
    expect(byKey.get('key-d')).to.deep.equal({ keyId: 'key-d', calls: 0, lastUsedAt: null });
    const byToken = await usageByToken(models, MONTH, tokens);
    expect(byToken.get(tokens[0]!)).to.deep.equal({ tokenId: tokens[0], calls: 4, audioSeconds: 10, lastUsedAt: NOW });
    expect(byToken.get(tokens[1]!)).to.deep.equal({ tokenId: tokens[1], calls: 0, audioSeconds: 0, lastUsedAt: null });
    expect((await recountToken(models, tokens[0]!)).calls).to.equal(4);
  });

  describe('admin usage backfill (events written before counters existed)', () => {
    it('adds them to the counters once, alongside what the drainer counted, and a second run changes nothing', async () => {
      const customerId = randomUUID();
      const tokenId = randomUUID();
      const lastMonth = monthOf(new Date(Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth() - 1, 15)));
      // As the drainer before counters wrote them: no `counted` mark.
      const legacy = (over: Record<string, unknown>) =>
        models.UsageEvent.create({
          _id: randomUUID(),
          service: 'liveness',
          customerId,
          keyId: 'key-a',
          plan: 'business',
          month: MONTH,
          hour: 'x',
          billable: true,
          latencyMs: 5,
          at: NOW,
          ...over,
        });
      for (let i = 0; i < 4; i++) await legacy({ overage: i === 0 });
      await legacy({ month: lastMonth, at: new Date(`${lastMonth}-15T10:00:00.000Z`) });
      await legacy({ service: 'emotion', customerId: null, keyId: null, tokenId, billable: false, verdict: { duration: 3 } });
      await drainedWhile(async () => {
        for (let i = 0; i < 2; i++) await appendLiveness(customerId, 'key-b');
      });
      const first = await counters.backfill();
      expect(first).to.include({ events: 6, documents: 3, written: 3, alreadyDone: 0 });
      const now = await counters.month('liveness', customerId, MONTH);
      expect(now).to.deep.include({ used: 6, overage: 1, keys: { 'key-a': 4, 'key-b': 2 }, backfilled: true });
      expect(await recountLiveness(models, customerId)).to.include({ used: 6, overage: 1 });
      expect((await counters.month('liveness', customerId, lastMonth))?.used).to.equal(1);
      expect(await counters.month('emotion', tokenId, MONTH)).to.deep.include({ calls: 1, audioSeconds: 3 });
      expect((await counters.backfill()).written).to.equal(0);
      expect((await counters.month('liveness', customerId, MONTH))?.used).to.equal(6);
    });
  });
});
