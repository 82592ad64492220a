// Redis Cluster benchmark (`npm run bench:redis-cluster`): the key layout of docs/operations.md, "Redis past one
// primary", measured on a private three-primary Redis Cluster (dev/engines/redis-cluster.ts) and FerretDB, with the
// liveness API and its workers as processes started by their production entry points (REDIS_URL=redis-cluster://).
// N accounts each send C liveness calls (a few lanes at once); it prints per primary the accounts whose partition it
// serves, and what the calls cost it: keys, commands, script runs, bytes received, CPU seconds.
// `-- --accounts 30 --calls 4 --lanes 4 --workers 2`
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { startFerretDb } from '../dev/engines/local-engines';
import { startRedisCluster } from '../dev/engines/redis-cluster';
import { outboxDrained, postLiveness, startServices, stopAll } from '../dev/harness/harness';
import { portrait } from '../dev/harness/sample-images';
import { AccountService } from '../shared/accounts/account-service';
import { ApiKeyService } from '../shared/accounts/api-keys';
import { systemClock } from '../shared/billing/month';
import { connectMongo } from '../shared/db/mongo';
import { createModels } from '../shared/db/models';
import { closeRedis, createRedis, waitUntilReady } from '../shared/redis';
import { partitionPrefix } from '../shared/redis-partitions';
import { arg } from './api';
import { loadAvg, runMain } from './support/main';

const PREFIX = '{lc}';

interface Sample {
  byCommand: Map<string, number>;
  keys: number;
  calls: number;
  scripts: number;
  netInBytes: number;
  cpuS: number;
}

/** What a node has counted since it started (INFO commandstats, stats, cpu) and its keys now. */
async function sample(node: Redis): Promise<Sample> {
  const info = await node.info('all');
  const num = (re: RegExp) => Number(re.exec(info)?.[1] ?? 0);
  const byCommand = new Map([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
  const calls = [...byCommand.values()].reduce((a, b) => a + b, 0);
  return {
    byCommand,
    keys: await node.dbsize(),
    calls,
    scripts: num(/cmdstat_evalsha:calls=(\d+)/) + num(/cmdstat_eval:calls=(\d+)/),
    netInBytes: num(/total_net_input_bytes:(\d+)/),
    cpuS: num(/used_cpu_sys:([\d.]+)/) + num(/used_cpu_user:([\d.]+)/),
  };
}

async function main(): Promise<void> {
  const accounts = arg('accounts', 30);
  const calls = arg('calls', 4);
  const lanes = arg('lanes', 4);
  const workers = arg('workers', 2);
  console.log(
    `bench:redis-cluster: ${accounts} accounts × ${calls} liveness calls, ${lanes} at once, ${workers} workers; ${os.cpus().length} CPUs, load ${loadAvg()}`,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-bench-cluster-'));
  const cluster = await startRedisCluster({ dir: path.join(dir, 'redis') });
  const mongo = await startFerretDb({ dataDir: path.join(dir, 'ferretdb') });
  const nodes = cluster.primaries.map((p) => createRedis(p.url, 'worker'));
  const redis = createRedis(cluster.url, 'worker');
  const procs = [];
  try {
    await Promise.all([...nodes, redis].map((n) => waitUntilReady(n)));
    const env = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      REDIS_URL: cluster.url,
      MONGODB_URI: `${mongo.url}bench_cluster`,
      QUEUE_PREFIX: PREFIX,
      APP_SECRET: 'bench-cluster-secret-bench-cluster-secret-0123',
    };
    procs.push(...(await startServices(['liveness-api', ...Array.from({ length: workers }, () => 'liveness-worker' as const)], env)));
    const api = procs[0]!;
    const conn = await connectMongo(env.MONGODB_URI);
    const models = createModels(conn);
    const apiKeys = new ApiKeyService(models, systemClock, new AccountService(models, systemClock));
    const slots = (await nodes[0]!.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    const primaryOf = async (key: string) => {
      const slot = Number(await nodes[0]!.call('CLUSTER', 'KEYSLOT', key));
      const port = slots.find(([from, to]) => slot >= from && slot <= to)![2][1];
      return cluster.primaries.findIndex((p) => p.port === port);
    };
    const customers: Array<{ key: string; primary: number }> = [];
    for (let i = 0; i < accounts; i++) {
      const created = await apiKeys.createAccountWithKeys({ email: `cluster-${i}@example.com`, plan: 'business' });
      customers.push({ key: created.primaryKey!, primary: await primaryOf(`${partitionPrefix(PREFIX, created.account._id)}:x`) });
    }
    const face = (await portrait()).toString('base64');
    // One call per account first: the workers warm up, every account's credits exist; then the measured calls.
    for (const c of customers) await postLiveness(api.port, c.key, face);
    await outboxDrained(redis, PREFIX, 60_000);
    const before = await Promise.all(nodes.map(sample));
    const t0 = performance.now();
    const queue = customers.flatMap((c) => Array.from({ length: calls }, () => c));
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        for (let c = queue.shift(); c; c = queue.shift()) {
          const r = await postLiveness(api.port, c.key, face);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    await outboxDrained(redis, PREFIX, 60_000);
    const after = await Promise.all(nodes.map(sample));
    const total = accounts * calls;
    console.log(`  ${total} calls in ${seconds.toFixed(1)} s: ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}; load ${loadAvg()}`);
    console.log('  | primary | slots | accounts | keys | commands | per call | scripts | MB in | CPU s |');
    console.log('  |---|---|---|---|---|---|---|---|---|');
    nodes.forEach((_, i) => {
      const [from, to] = slots.find(([, , [, port]]) => port === cluster.primaries[i]!.port)!;
      const d = (k: Exclude<keyof Sample, 'byCommand'>) => after[i]![k] - before[i]![k];
      console.log(
        `  | ${i} | ${from}-${to} | ${customers.filter((c) => c.primary === i).length} | ${after[i]!.keys} | ${d('calls')} | ${(d('calls') / total).toFixed(1)} | ${d('scripts')} | ${(d('netInBytes') / 1e6).toFixed(1)} | ${d('cpuS').toFixed(2)} |`,
      );
    });
    nodes.forEach((_, i) => {
      const top = [...after[i]!.byCommand]
        .map(([cmd, n]) => [cmd, n - (before[i]!.byCommand.get(cmd) ?? 0)] as const)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6);
      console.log(`  primary ${i} top commands: ${top.map(([cmd, n]) => `${cmd} ${n}`).join(', ')}`);
    });
    await conn.close();
  } finally {
    await stopAll(procs);
    for (const n of [...nodes, redis]) await closeRedis(n);
    await cluster.stop();
    await mongo.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
