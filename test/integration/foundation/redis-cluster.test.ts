// The service on a real three-primary Redis Cluster (dev/engines/redis-cluster.ts; the layout: docs/operations.md,
// "Redis past one primary"): liveness calls go through admission, the queue and a real worker, each bills its
// account in the settle script and the drainer writes its usage event, while the accounts' keys (credits,
// idempotency entries, payloads, results, outbox entries) land on the primary of their account's partition, so
// every primary holds some. Prints keys and commands per primary (the figure in bench/results/redis-cluster.md).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { portrait } from '../../../dev/harness/sample-images';
import { startRedisCluster, type RedisClusterEngine } from '../../../dev/engines/redis-cluster';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { outboxDrained } from '../../support/billing';
import { closeRedis, createRedis, waitUntilReady } from '../../../shared/redis';
import { partitionPrefix } from '../../../shared/redis-partitions';
import { creditsKey } from '../../../shared/billing/credit-ledger';
import { outboxKey } from '../../../shared/billing/usage-outbox';
import { monthOf } from '../../../shared/billing/month';

// The shipped prefix: a private cluster needs no isolation, and {lc}'s 16 partitions sit 4/4/8 on the three primaries.
const PREFIX = '{lc}';
/** Accounts per primary the test makes sure of before it calls (accounts' ids decide their partitions). */
const PER_PRIMARY = 2;

interface NodeStats {
  keys: number;
  calls: number;
  evalsha: number;
}

/** All keys and all commands a node has counted (INFO commandstats), and its script runs. */
async function statsOf(node: Redis): Promise<NodeStats> {
  const info = await node.info('commandstats');
  const calls = [...info.matchAll(/calls=(\d+)/g)].reduce((s, m) => s + Number(m[1]), 0);
  const evalsha = Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0) + Number(/cmdstat_eval:calls=(\d+)/.exec(info)?.[1] ?? 0);
  return { keys: await node.dbsize(), calls, evalsha };
}

describe('Redis Cluster: three primaries share the accounts, fair admission and settle keep their keys together', function () {
  this.timeout(180_000);
  let dir: string;
  let cluster: RedisClusterEngine;
  let nodes: Redis[];
  let stack: LivenessStack;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-cluster-test-'));
    cluster = await startRedisCluster({ dir });
    nodes = cluster.primaries.map((p) => createRedis(p.url, 'worker'));
    await Promise.all(nodes.map((n) => waitUntilReady(n)));
    stack = await startLivenessStack('cluster', { env: { REDIS_URL: cluster.url, QUEUE_PREFIX: PREFIX } });
  });
  after(async () => {
    await stack?.stop();
    for (const n of nodes ?? []) await closeRedis(n);
    await cluster?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The primary (index in `nodes`) that serves `key`: the node that answers CLUSTER COUNTKEYSINSLOT for its own slots. */
  const primaryOf = async (key: string): Promise<number> => {
    const slot = Number(await nodes[0]!.call('CLUSTER', 'KEYSLOT', key));
    const ranges = (await nodes[0]!.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    const range = ranges.find(([from, to]) => slot >= from && slot <= to)!;
    return cluster.primaries.findIndex((p) => p.port === range[2][1]);
  };

  it('bills liveness calls of accounts on every primary through admission, the queue, the settle script and the drainer', async () => {
    const face = await portrait();
    // Accounts until every primary holds the partitions of PER_PRIMARY of them (bounded: 16 partitions, 4 at least per primary).
    const accounts: Array<{ customerId: string; primaryKey: string; primary: number }> = [];
    const per = [0, 0, 0];
    while (per.some((n) => n < PER_PRIMARY) && accounts.length < 100) {
      const a = await stack.createAccount('business');
      const primary = await primaryOf(`${partitionPrefix(PREFIX, a.customerId)}:x`);
      per[primary]!++;
      accounts.push({ ...a, primary });
    }
    expect(Math.min(...per)).to.be.at.least(PER_PRIMARY);

    const before = await Promise.all(nodes.map(statsOf));
    for (const [i, a] of accounts.entries()) {
      const res = await stack.check(a.primaryKey, face, 'jpeg', { 'idempotency-key': `order-${i}` });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    // The same key again: replayed from the idempotency entry, not billed twice.
    const again = await stack.check(accounts[0]!.primaryKey, face, 'jpeg', { 'idempotency-key': 'order-0' });
    expect(again.status).to.equal(200);
    await outboxDrained(stack.api.deps.redis, PREFIX, 30_000);
    const after = await Promise.all(nodes.map(statsOf));

    // Billed once each, in Redis and in the document store.
    const month = monthOf(new Date());
    for (const a of accounts) {
      expect((await stack.usage(a.primaryKey)).body.data).to.include({ total_calls: 1 });
      const key = creditsKey(PREFIX, a.customerId, month);
      expect(await primaryOf(key)).to.equal(a.primary);
      expect(await nodes[a.primary]!.exists(key), 'the credits hash is on its partition primary').to.equal(1);
    }
    expect(await stack.api.deps.models.UsageEvent.countDocuments({ service: 'liveness' })).to.equal(accounts.length);

    // Every primary holds some accounts' keys and ran some of their scripts (reserve, settle, idempotency).
    const credits = await Promise.all(nodes.map(async (n) => (await n.keys('{lc:p*}:credits:*')).length));
    const streams = await Promise.all(
      nodes.map(async (n) => {
        let added = 0;
        for (const k of await n.keys('{lc:p*}:outbox:usage')) {
          const info = (await n.call('XINFO', 'STREAM', k)) as unknown[];
          added += Number(info[info.indexOf('entries-added') + 1]);
        }
        return added;
      }),
    );
    const queueKeys = await Promise.all(nodes.map(async (n) => (await n.keys(`${PREFIX}:liveness:*`)).length));
    expect(credits).to.deep.equal(per);
    expect(streams).to.deep.equal(per);
    for (let i = 0; i < nodes.length; i++) expect(after[i]!.evalsha - before[i]!.evalsha, `primary ${i} scripts`).to.be.greaterThan(0);
    // The queue and fair admission stay on one primary: the {lc} slot.
    expect(queueKeys.filter((n) => n > 0)).to.have.length(1);
    expect(await primaryOf(outboxKey(PREFIX))).to.equal(queueKeys.findIndex((n) => n > 0));

    const rows = nodes.map(
      (_, i) =>
        `      primary ${i} (:${cluster.primaries[i]!.port}): accounts ${per[i]}, credits hashes ${credits[i]}, outbox events ${streams[i]}, ` +
        `keys ${after[i]!.keys}, queue keys ${queueKeys[i]}, commands +${after[i]!.calls - before[i]!.calls}, scripts +${after[i]!.evalsha - before[i]!.evalsha}`,
    );
    console.log(`      ${accounts.length} accounts, one liveness call each (+1 idempotent replay):\n${rows.join('\n')}`);
  });
});
