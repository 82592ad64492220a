// Test access to the engines started by test/setup/engines.ts, isolated per test file.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeRedis, createRedis, primariesOf } from '../../shared/redis';

export function testRedisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url)
    throw new Error(
      'TEST_REDIS_URL unset: the engines start only for files outside test/unit/ (test/setup/engines.ts); a test that needs them belongs in test/integration/',
    );
  return url;
}

export function testMongoUri(): string {
  const url = process.env.TEST_MONGODB_URI;
  if (!url)
    throw new Error(
      'TEST_MONGODB_URI unset: the engines start only for files outside test/unit/ (test/setup/engines.ts); a test that needs them belongs in test/integration/',
    );
  return url;
}

/** A fresh queue prefix (with its hash tag) and database name, so test files never see each other's data. */
export function isolation(label: string): { prefix: string; dbName: string } {
  const id = randomUUID().slice(0, 8);
  return { prefix: `{t-${label}-${id}}`, dbName: `t_${label.replace(/\W/g, '_')}_${id}` };
}

/** Redis connections to the test Redis, opened by role as a test needs them and closed together in its `after`. */
export function testRedisConnections(): { conn: (role: 'producer' | 'worker' | 'subscriber') => Redis; closeAll: () => Promise<void> } {
  const conns: Redis[] = [];
  return {
    conn: (role) => {
      const c = createRedis(testRedisUrl(), role);
      conns.push(c);
      return c;
    },
    closeAll: async () => {
      for (const c of conns.splice(0)) await closeRedis(c);
    },
  };
}

/** How many times Redis (every primary of a cluster) has run `command` since it started (INFO commandstats). */
export async function commandCalls(redis: Redis, command: string): Promise<number> {
  const calls = await Promise.all(
    primariesOf(redis).map(async (node) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(await node.info('commandstats'))?.[1] ?? 0)),
  );
  return calls.reduce((a, b) => a + b, 0);
}

/**
 * The keys under a deployment prefix that match `rest` after their hash tag: its own tag's and its partitions'
 * (shared/redis-partitions.ts), on every primary (KEYS sees one node of a cluster).
 */
export async function keysUnder(redis: Redis, prefix: string, rest = '*'): Promise<string[]> {
  const partitions = `${prefix.slice(0, -1)}:p[0-9][0-9]}`;
  const found = await Promise.all(primariesOf(redis).flatMap((node) => [node.keys(`${prefix}:${rest}`), node.keys(`${partitions}:${rest}`)]));
  return found.flat();
}
