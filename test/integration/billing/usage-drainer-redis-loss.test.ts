// A Redis that comes back empty (restarted without persistence) while a drainer is writing a batch: the batch's
// outbox entries, its consumer group and the month's credit hash are gone, but the drainer still holds the events
// (already inserted in MongoDB). It counts them once in the usage counters, the credit hash agrees whichever came
// first (its rebuild from the document, or the drainer's count), and it goes on draining (it used to retry asking
// Redis for its pending entries forever). The loss is made by deleting the customer's partition keys in the shared
// test Redis: what an empty restart leaves, without stopping an engine other tests use (the real restart, under
// requests: test/integration/reliability/engine-restart.test.ts).
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import type { Redis } from 'ioredis';
import { createRedis, closeRedis, waitUntilReady } from '../../../shared/redis';
import { connectMongo } from '../../../shared/db/mongo';
import { createModels, ensureIndexes, type Models } from '../../../shared/db/models';
import { CreditLedger, creditsKey } from '../../../shared/billing/credit-ledger';
import { outboxEpochKey, outboxKey, orphansKey, undrainedKey } from '../../../shared/billing/usage-outbox';
import { counterId } from '../../../shared/billing/usage-counters';
import { partitionPrefix } from '../../../shared/redis-partitions';
import { systemClock, monthOf } from '../../../shared/billing/month';
import type { PlanView } from '../../../shared/billing/plans';
import { UsageDrainer } from '../../../workers/runtime/usage-drainer';
import { isolation, testMongoUri, testRedisUrl } from '../../support/engines';
import { quietLog } from '../../support/config';
import { outboxDrained, settledCount, settleReserved } from '../../support/billing';

describe('usage drainer: Redis loses its data while a batch is being written', function () {
  this.timeout(60_000);
  const plan: PlanView = { plan: 'starter', monthlyLimit: 1000, hardCap: false };
  let prefix: string;
  let redis: Redis;
  const drainerConns: Redis[] = [];
  let conn: Connection;
  let models: Models;
  let ledger: CreditLedger;
  const drainers: UsageDrainer[] = [];

  before(async () => {
    const iso = isolation('drainer-loss');
    redis = createRedis(testRedisUrl(), 'producer');
    await waitUntilReady(redis);
    conn = await connectMongo(testMongoUri(), iso.dbName);
    models = createModels(conn);
    await ensureIndexes(models);
  });
  beforeEach(() => {
    prefix = isolation('drainer-loss').prefix;
    ledger = new CreditLedger(redis, prefix, models, systemClock);
  });
  afterEach(async () => {
    for (const d of drainers.splice(0)) await d.stop();
    for (const c of drainerConns.splice(0)) await closeRedis(c);
  });
  after(async () => {
    await closeRedis(redis);
    await conn.close();
  });

  async function startDrainer(batching: { batchWindowMs?: number; batchMinRatePerS?: number } = {}): Promise<UsageDrainer> {
    const r = createRedis(testRedisUrl(), 'worker');
    drainerConns.push(r);
    await waitUntilReady(r);
    // The shipped batching unless told; claimIdleMs long: no takeover happens in these tests.
    const d = new UsageDrainer({ redis: r, prefix, models, log: quietLog, claimIdleMs: 60_000, blockMs: 200, ...batching });
    await d.start();
    drainers.push(d);
    return d;
  }

  /** One billed liveness call, reserved and settled as the API and the worker do. */
  async function call(customerId: string): Promise<string> {
    const rid = randomUUID();
    const r = await ledger.reserve(customerId, plan, rid);
    expect(r.ok).to.equal(true);
    const s = await settleReserved(ledger, prefix, { customerId, month: r.month, at: r.at, requestId: rid, plan });
    expect(s.committed).to.equal(true);
    return rid;
  }

  const month = () => monthOf(new Date());
  const counted = async (customerId: string) => (await models.UsageCounter.findById(counterId('liveness', customerId, month())).lean())?.used ?? 0;
  const events = (customerId: string) => models.UsageEvent.countDocuments({ customerId });
  const creditsUsed = async (customerId: string) => Number((await redis.hget(creditsKey(prefix, customerId, month()), 'used')) ?? 0);
  const leaseKey = (customerId: string) => `${prefix}:usage-counter-lease:liveness:${customerId}`;

  /** What an empty restart leaves of the customer's partition: nothing (its outbox stream, group, epoch, credits, index). */
  async function loseRedisData(customerId: string): Promise<void> {
    const home = partitionPrefix(prefix, customerId);
    await redis.del(
      outboxKey(home),
      outboxEpochKey(home),
      creditsKey(prefix, customerId, month()),
      undrainedKey(home, customerId, month()),
      orphansKey(home, customerId, month()),
    );
  }

  /**
   * Two calls drained normally, then a third held: the test takes the customer's counter lease, so the drainer
   * inserts the third event and waits for the lease before counting it. Resolves once it waits there.
   */
  async function drainerHoldingABatch(customerId: string): Promise<void> {
    await call(customerId);
    await call(customerId);
    expect(await settledCount(() => counted(customerId), 2)).to.equal(2);
    await redis.set(leaseKey(customerId), 'held-by-the-test', 'PX', 30_000);
    await call(customerId);
    expect(await settledCount(() => events(customerId), 3)).to.equal(3);
    expect(await counted(customerId)).to.equal(2);
  }

  /** The drainer goes on: one more call is drained and counted, and events, counters and credits all say `n`. */
  async function nextCallDrained(customerId: string, n: number): Promise<void> {
    await call(customerId);
    expect(await settledCount(() => counted(customerId), n)).to.equal(n);
    await outboxDrained(redis, prefix, 10_000);
    expect(await events(customerId)).to.equal(n);
    expect(await creditsUsed(customerId)).to.equal(n);
  }

  it('counts the batch it holds once when the month hash was rebuilt before it counted, and the hash agrees', async () => {
    await startDrainer();
    const customerId = randomUUID();
    await drainerHoldingABatch(customerId);
    await loseRedisData(customerId);
    // The next call finds no credit hash and rebuilds it from the counter document, which lacks the held call.
    await call(customerId);
    await redis.del(leaseKey(customerId));
    expect(await settledCount(() => counted(customerId), 4)).to.equal(4);
    expect(await creditsUsed(customerId)).to.equal(4);
    await nextCallDrained(customerId, 5);
  });

  it('counts it once when the hash is rebuilt after it counted, even after another drainer recreated the group', async () => {
    await startDrainer();
    const customerId = randomUUID();
    await drainerHoldingABatch(customerId);
    await loseRedisData(customerId);
    // A second drainer starting now creates the group and the outbox's epoch afresh: the first one's pending
    // entries are simply absent, as if taken over, but the changed epoch tells a loss from a takeover.
    await startDrainer();
    await redis.del(leaseKey(customerId));
    expect(await settledCount(() => counted(customerId), 3)).to.equal(3);
    // Rebuilt from the document, which now holds the third call: the drainer's record of it adds nothing again.
    expect((await ledger.snapshot(customerId, plan)).used).to.equal(3);
    await nextCallDrained(customerId, 4);
  });

  it('writes and counts the batch it was still gathering (a batch window) when the stream vanished', async () => {
    // Batching from the first event, with a window long enough to lose Redis's data inside it.
    await startDrainer({ batchWindowMs: 2000, batchMinRatePerS: 0 });
    const customerId = randomUUID();
    await call(customerId);
    const home = partitionPrefix(prefix, customerId);
    // Read by the drainer (pending in its group), not yet written: it waits out its window.
    await settledCount(async () => Number(((await redis.xpending(outboxKey(home), 'usage-drainers')) as [number])[0]), 1);
    expect(await events(customerId)).to.equal(0);
    await loseRedisData(customerId);
    expect(await settledCount(() => counted(customerId), 1)).to.equal(1);
    expect(await events(customerId)).to.equal(1);
    // Its credit hash was lost too; the rebuild finds the call in the document.
    expect((await ledger.snapshot(customerId, plan)).used).to.equal(1);
  });
});
