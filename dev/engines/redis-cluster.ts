// Owns a private Redis Cluster on this machine: three primaries (Debian's redis-server in cluster mode, no
// replicas) on free loopback ports, each with its data in a directory under `dir`, joined by
// `redis-cli --cluster create` (the 16384 slots split evenly, in three ranges). For tests and benchmarks of the
// layout in docs/operations.md, "Redis past one primary"; `npx tsx dev/engines/redis-cluster.ts` starts one and
// prints its REDIS_URL until Ctrl-C.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startRedis, type Engine } from './local-engines';

const run = promisify(execFile);

export interface RedisClusterEngine extends Engine {
  /** The primaries, in the order of their slot ranges; each `url` is the node's own redis:// address. */
  readonly primaries: Engine[];
}

/** Starts `primaries` (default 3) cluster-mode redis-servers under `dir` and joins them into one cluster. */
export async function startRedisCluster(opts: { dir: string; primaries?: number }): Promise<RedisClusterEngine> {
  const count = opts.primaries ?? 3;
  fs.mkdirSync(opts.dir, { recursive: true });
  const nodes: Engine[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const dir = path.join(opts.dir, `node-${i}`);
      nodes.push(
        await startRedis({
          dir,
          // The bus port on a free port of its own too (its default, port + 10000, may be taken).
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            path.join(dir, 'nodes.conf'),
            '--cluster-node-timeout',
            '5000',
            '--cluster-port',
            String(await freePort()),
          ],
        }),
      );
    }
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], { timeout: 30_000 });
    for (const n of nodes) await clusterReady(n.port);
    return {
      name: 'redis-cluster',
      url: `redis-cluster://${addresses.join(',')}`,
      port: nodes[0]!.port,
      primaries: nodes,
      stop: async () => void (await Promise.all(nodes.map((n) => n.stop()))),
    };
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw err;
  }
}

/** Waits until the node reports cluster_state:ok (every slot served, as it sees the cluster). */
async function clusterReady(port: number, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
    if (/cluster_state:ok/.test(stdout)) return;
    if (Date.now() > until) throw new Error(`redis cluster node on ${port} not ok within ${timeoutMs} ms:\n${stdout}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

if (require.main === module) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-redis-cluster-'));
  void startRedisCluster({ dir }).then((c) => {
    process.stdout.write(`REDIS_URL=${c.url}\n`);
    const stop = () => void c.stop().then(() => fs.rmSync(dir, { recursive: true, force: true }));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
