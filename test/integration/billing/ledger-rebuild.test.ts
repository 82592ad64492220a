// A burst's first calls on a month whose counters Redis does not hold share one rebuild (one read of the customer's
// undrained calls and of MongoDB, none of the outbox), not one each: counted with Redis's own command statistics.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import type { Redis } from 'ioredis';
import { createRedis, closeRedis, waitUntilReady } from '../../../shared/redis';
import { connectMongo } from '../../../shared/db/mongo';
import { createModels, ensureIndexes } from '../../../shared/db/models';
import { CreditLedger, creditsKey } from '../../../shared/billing/credit-ledger';
import { systemClock } from '../../../shared/billing/month';
import type { PlanView } from '../../../shared/billing/plans';
import { commandCalls, isolation, testMongoUri, testRedisUrl } from '../../support/engines';

describe('credit ledger: counters rebuilt once per customer and month', () => {
  const { prefix, dbName } = isolation('ledger-rebuild');
  let redis: Redis;
  let conn: Connection;
  let ledger: CreditLedger;
  const starter: PlanView = { plan: 'starter', monthlyLimit: 1000, hardCap: true };

  before(async () => {
    redis = createRedis(testRedisUrl(), 'producer');
    await waitUntilReady(redis);
    conn = await connectMongo(testMongoUri(), dbName);
    const models = createModels(conn);
    await ensureIndexes(models);
    ledger = new CreditLedger(redis, prefix, models, systemClock);
  });
  after(async () => {
    await closeRedis(redis);
    await conn.close();
  });

  it('rebuilds a missing month once for 20 concurrent first calls, and every call gets its credit', async () => {
    const customerId = randomUUID();
    const [hgetall, xrange] = [await commandCalls(redis, 'hgetall'), await commandCalls(redis, 'xrange')];
    const results = await Promise.all(Array.from({ length: 20 }, () => ledger.reserve(customerId, starter, randomUUID())));
    expect(results.every((r) => r.ok)).to.equal(true);
    // Its partition's index and the one of the layout before partitions (an upgrade's calls not yet drained).
    expect((await commandCalls(redis, 'hgetall')) - hgetall, 'one read of each index of its undrained calls').to.equal(2);
    expect((await commandCalls(redis, 'xrange')) - xrange, 'no read of the outbox').to.equal(0);
    const month = results[0]!.month;
    const reserved = Object.keys(await redis.hgetall(creditsKey(prefix, customerId, month))).filter((f) => f.startsWith('p:'));
    expect(reserved).to.have.length(20);
  });
});
