// Owns Redis connections: one factory per role, so each gets the retry semantics it needs; a single Redis
// (`redis://`) or a Redis Cluster (`redis-cluster://host:port,host:port`, docs/configuration.md), whose keys spread
// over its primaries as docs/operations.md, "Redis past one primary", lays out.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from './logger';

/**
 * producer: API-side commands fail fast while Redis is down (the request answers 503 instead of hanging); no
 * blocking commands (auto-pipelined).
 * worker: BullMQ workers and blocking commands wait for Redis to return (BullMQ requires maxRetriesPerRequest null).
 * subscriber: the result bus's pub/sub connection; reconnects and resubscribes by itself.
 */
export type RedisRole = 'producer' | 'worker' | 'subscriber';

const retryStrategy = (times: number) => Math.min(100 * 2 ** Math.min(times, 5), 2000);

const CLUSTER_SCHEME = 'redis-cluster://';

/** A Redis Cluster's address: its seed nodes (the client learns the rest) and the credentials every node takes. */
export interface ClusterTarget {
  nodes: Array<{ host: string; port: number }>;
  username?: string;
  password?: string;
}

/** Whether a REDIS_URL names a Redis Cluster (redis-cluster://...). */
export function isClusterUrl(url: string): boolean {
  return url.startsWith(CLUSTER_SCHEME);
}

/**
 * The cluster a `redis-cluster://[[user]:password@]host:port[,host:port...][/]` URL names; null for any other URL.
 * Throws on a malformed cluster URL (shared/config.ts reports it at boot).
 */
export function clusterTarget(url: string): ClusterTarget | null {
  if (!isClusterUrl(url)) return null;
  const rest = url.slice(CLUSTER_SCHEME.length).replace(/\/$/, '');
  const at = rest.lastIndexOf('@');
  const auth = at === -1 ? '' : rest.slice(0, at);
  const hosts = (at === -1 ? rest : rest.slice(at + 1)).split(',');
  const nodes = hosts.map((h) => {
    const m = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\]):(\d{1,5})$/.exec(h);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new Error(`"${h}" is not host:port`);
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
  });
  const colon = auth.indexOf(':');
  const username = colon === -1 ? auth : auth.slice(0, colon);
  const password = colon === -1 ? '' : auth.slice(colon + 1);
  return { nodes, ...(username ? { username: decodeURIComponent(username) } : {}), ...(password ? { password: decodeURIComponent(password) } : {}) };
}

/**
 * A connection for `role` to the Redis (or Redis Cluster) at `url`. A cluster client answers the same commands as
 * a Redis client and BullMQ takes either, so it is typed as Redis: callers never tell them apart, and every
 * multi-key command, script or transaction they send keeps its keys in one hash-tag slot
 * (shared/redis-partitions.ts).
 */
export function createRedis(url: string, role: RedisRole, name?: string): Redis {
  const common: RedisOptions = { retryStrategy, connectionName: name, lazyConnect: false };
  const byRole: Record<RedisRole, RedisOptions> = {
    // Auto-pipelining: the commands of one event-loop tick go out in one write (a burst's requests each make several
    // small ones, and a socket write per command costs the API process CPU it needs for the burst).
    producer: { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, enableAutoPipelining: true },
    worker: { maxRetriesPerRequest: null, enableReadyCheck: true },
    subscriber: { maxRetriesPerRequest: null },
  };
  const cluster = clusterTarget(url);
  if (!cluster) return new Redis(url, { ...common, ...byRole[role] });
  const { enableOfflineQueue, enableAutoPipelining, enableReadyCheck, ...perNode } = { ...common, ...byRole[role] };
  const options: ClusterOptions = {
    clusterRetryStrategy: retryStrategy,
    lazyConnect: false,
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
    redisOptions: { ...perNode, username: cluster.username, password: cluster.password },
  };
  return new Cluster(cluster.nodes, options) as unknown as Redis;
}

/**
 * A second connection like `redis` (the same Redis or cluster, the same role's options) with its own name: for a
 * library that defines its own commands on its connection (BullMQ), which an auto-pipelined connection would copy
 * into every pipeline it builds.
 */
export function duplicateRedis(redis: Redis, overrides: { connectionName: string; enableAutoPipelining?: boolean }): Redis {
  const r = redis as unknown;
  if (!(r instanceof Cluster)) return redis.duplicate(overrides);
  const { connectionName, enableAutoPipelining } = overrides;
  return r.duplicate(undefined, {
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    redisOptions: { ...r.options.redisOptions, connectionName },
  }) as unknown as Redis;
}

/** Whether a connection from createRedis is a Redis Cluster's (its keys' slots may sit on different primaries). */
export function isCluster(redis: Redis): boolean {
  return (redis as unknown) instanceof Cluster;
}

/** The primaries behind a connection: each master of a cluster, or the connection itself. */
export function primariesOf(redis: Redis): Redis[] {
  const r = redis as unknown;
  return r instanceof Cluster ? r.nodes('master') : [redis];
}

export function waitUntilReady(redis: Redis, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
    };
    redis.on('ready', onReady);
  });
}

/** BullMQ loses jobs if Redis evicts keys; say so loudly at start-up when the policy is not noeviction. */
export async function checkEvictionPolicy(redis: Redis, log: Logger): Promise<boolean> {
  try {
    // Every primary of a cluster holds queued jobs: each must keep them.
    const replies = (await Promise.all(primariesOf(redis).map((node) => node.config('GET', 'maxmemory-policy')))) as string[][];
    const policy = replies.map((reply) => reply[1]).find((p) => p !== 'noeviction') ?? 'noeviction';
    if (policy !== 'noeviction') {
      log.error(
        { policy },
        `Redis maxmemory-policy is "${policy}", not "noeviction": queued jobs and results can be evicted. Set maxmemory-policy noeviction.`,
      );
      return false;
    }
    return true;
  } catch (err) {
    log.warn({ err }, 'Could not read Redis maxmemory-policy (CONFIG disabled?); make sure it is noeviction');
    return false;
  }
}

export async function closeRedis(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

/** True for errors that mean "Redis is unreachable" (fail-fast producer connections raise these). */
export function isRedisUnavailable(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === 'MaxRetriesPerRequestError' || e?.name === 'ClusterAllFailedError') return true;
  if (e?.code === 'ECONNREFUSED' || e?.code === 'ECONNRESET') return true;
  return /Stream isn't writeable|Connection is closed|enableOfflineQueue/.test(e?.message ?? '');
}
