// The usage drainer writes in batches under load: after a new outbox entry it waits its batch window, then writes
// everything that arrived meanwhile in one insertMany, window after window while entries keep coming (up to the
// longest wait); a trickle is written at once; a stop ends the window early.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import type { Redis } from 'ioredis';
import { createRedis, closeRedis, waitUntilReady } from '../../../shared/redis';
import { connectMongo } from '../../../shared/db/mongo';
import { createModels, ensureIndexes, type Models } from '../../../shared/db/models';
import { encodeOutboxEvent } from '../../../shared/billing/usage-outbox';
import { pendingOutboxEntries } from '../../support/billing';
import { storeOutcome } from '../../../shared/queues/outcome-store';
import { queueKeys } from '../../../shared/queues/keys';
import { UsageDrainer, USAGE_BATCH_MAX_WAIT_MS, USAGE_BATCH_MIN_RATE_PER_S, USAGE_BATCH_WINDOW_MS } from '../../../workers/runtime/usage-drainer';
import { isolation, testMongoUri, testRedisUrl } from '../../support/engines';
import { quietLog } from '../../support/config';

describe('usage drainer: batched writes', () => {
  const { prefix, dbName } = isolation('drainer-batch');
  let redis: Redis;
  let drainerRedis: Redis;
  let conn: Connection;
  let models: Models;

  before(async () => {
    redis = createRedis(testRedisUrl(), 'producer');
    drainerRedis = createRedis(testRedisUrl(), 'worker');
    await waitUntilReady(redis);
    await waitUntilReady(drainerRedis);
    conn = await connectMongo(testMongoUri(), dbName);
    models = createModels(conn);
    await ensureIndexes(models);
  });

  after(async () => {
    await closeRedis(drainerRedis);
    await closeRedis(redis);
    await conn.close();
  });

  const append = (requestId: string) =>
    storeOutcome(redis, queueKeys(prefix).result(requestId), '{"ok":true}', 60_000, {
      requestId,
      json: encodeOutboxEvent({ service: 'liveness', billable: true, latencyMs: 20, at: new Date() }),
    });
  const written = (ids: string[]) => models.UsageEvent.countDocuments({ _id: { $in: ids } });
  /** How many of `ids` are in MongoDB once all are, or after 5 s. */
  // Waits up to 15 s (a held window of 3 s plus writes to a busy store in a full run: 5 s was once too short).
  const allWritten = async (ids: string[]) => {
    for (let i = 0; i < 300 && (await written(ids)) < ids.length; i++) await new Promise((r) => setTimeout(r, 50));
    return written(ids);
  };

  it('ships a batch window of half a second, held up to 10 s while entries keep coming, from 16 events a second up', () => {
    // Shipped defaults: under load events reach MongoDB at most 10 s later; one write per burst, not per call.
    expect(USAGE_BATCH_WINDOW_MS).to.equal(500);
    expect(USAGE_BATCH_MAX_WAIT_MS).to.equal(10_000);
    expect(USAGE_BATCH_MIN_RATE_PER_S).to.equal(16);
  });

  /** Appends one event every `everyMs` for `forMs`; resolves with their ids. */
  const steadyStream = async (everyMs: number, forMs: number): Promise<string[]> => {
    const ids: string[] = [];
    for (const until = Date.now() + forMs; Date.now() < until; await new Promise((r) => setTimeout(r, everyMs))) {
      const id = randomUUID();
      ids.push(id);
      await append(id);
    }
    return ids;
  };
  /** A started drainer with this batch window; it batches from the shipped rate up unless told another. */
  async function startDrainer(o: { batchWindowMs: number; batchMinRatePerS?: number; batchMaxWaitMs?: number }): Promise<UsageDrainer> {
    const drainer = new UsageDrainer({ redis: drainerRedis, prefix, models, log: quietLog, claimIdleMs: 60_000, blockMs: 200, ...o });
    await drainer.start();
    return drainer;
  }

  it('holds its batch while entries keep arriving and writes it, exactly once, when they stop', async () => {
    // Batching from the first event; windows and waits scaled to the test's seconds.
    const drainer = await startDrainer({ batchWindowMs: 400, batchMaxWaitMs: 30_000, batchMinRatePerS: 0 });
    try {
      // An entry every 150 ms for 2 s: each window sees more, so nothing is written while they come.
      const ids = await steadyStream(150, 2000);
      expect(await written(ids)).to.equal(0);
      expect(await allWritten(ids)).to.equal(ids.length);
    } finally {
      await drainer.stop();
    }
    expect(await pendingOutboxEntries(redis, prefix)).to.have.length(0);
  });

  it('writes a held batch after the longest wait even while entries keep arriving', async () => {
    const drainer = await startDrainer({ batchWindowMs: 300, batchMaxWaitMs: 1200, batchMinRatePerS: 0 });
    try {
      const ids = await steadyStream(100, 3000);
      // Written in batches of at most 1.2 s while the stream went on: most are in already.
      expect(await written(ids)).to.be.greaterThan(ids.length / 2);
      expect(await allWritten(ids)).to.equal(ids.length);
    } finally {
      await drainer.stop();
    }
  });

  it('writes a trickle at once, without waiting for the window', async () => {
    // A window far longer than the test: the event can only be in MongoDB this soon if it did not wait.
    const drainer = await startDrainer({ batchWindowMs: 120_000 });
    const id = randomUUID();
    try {
      await append(id);
      for (let i = 0; i < 200 && (await written([id])) < 1; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await written([id])).to.equal(1);
    } finally {
      await drainer.stop();
    }
  });

  it('under load, holds an event for its window and writes it with the ones that follow, exactly once', async () => {
    // A window far longer than the steps below take, so "not yet written" is certain; batching from the first event.
    const drainer = await startDrainer({ batchWindowMs: 3000, batchMinRatePerS: 0 });
    const ids = Array.from({ length: 6 }, () => randomUUID());
    try {
      await append(ids[0]!);
      await new Promise((r) => setTimeout(r, 300));
      expect(await written(ids)).to.equal(0);
      for (const id of ids.slice(1)) await append(id);
      expect(await allWritten(ids)).to.equal(ids.length);
    } finally {
      await drainer.stop();
    }
    expect(await pendingOutboxEntries(redis, prefix)).to.have.length(0);
  });

  it('writes what it holds when stopped during a window', async () => {
    // Batching from the first event (batchMinRatePerS 0) and a window that only the stop can end.
    const drainer = await startDrainer({ batchWindowMs: 60_000, batchMinRatePerS: 0 });
    const id = randomUUID();
    await append(id);
    await new Promise((r) => setTimeout(r, 300));
    await drainer.stop();
    expect(await written([id])).to.equal(1);
    expect(await pendingOutboxEntries(redis, prefix)).to.have.length(0);
  });
});
