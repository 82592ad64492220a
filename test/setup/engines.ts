// Mocha global fixture: the real engines for the whole run, started only when the run holds a file outside
// test/unit/ (integration and e2e); a run of unit files alone starts none, so it answers in seconds.
// - REDIS_URL / MONGODB_URI set: use them.
// - TEST_ENGINES=testcontainers (needs a Docker engine): real mongo:7 and redis:7 containers.
// - otherwise: a private redis-server and FerretDB (SQLite) under var/test-engines/, stopped at the end.
// - LC_TEST_REDIS=cluster: a private three-primary Redis Cluster (dev/engines/redis-cluster.ts) instead of the redis-server.
import fs from 'node:fs';
import path from 'node:path';
import { startFerretDb, startRedis, type Engine } from '../../dev/engines/local-engines';
import { startRedisCluster } from '../../dev/engines/redis-cluster';
import { varDir } from '../../shared/paths';

const started: Engine[] = [];

async function startContainers(): Promise<void> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const redis = await new GenericContainer('redis:7')
    .withCommand(['redis-server', '--maxmemory-policy', 'noeviction', '--save', '', '--appendonly', 'no'])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
    .start();
  const mongo = await new GenericContainer('mongo:7').withExposedPorts(27017).withWaitStrategy(Wait.forLogMessage('Waiting for connections')).start();
  process.env.TEST_REDIS_URL = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
  process.env.TEST_MONGODB_URI = `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}/`;
  started.push(
    { name: 'redis', url: process.env.TEST_REDIS_URL, port: redis.getMappedPort(6379), stop: async () => void (await redis.stop()) },
    { name: 'mongo', url: process.env.TEST_MONGODB_URI, port: mongo.getMappedPort(27017), stop: async () => void (await mongo.stop()) },
  );
}

const UNIT_DIR = path.resolve(__dirname, '..', 'unit') + path.sep;

interface LoadedSuite {
  file?: string;
  tests: Array<{ file?: string }>;
  suites: LoadedSuite[];
}

/** The spec files of this run, as mocha loaded them (mocha calls a global fixture with its Runner as `this`). */
function specFiles(runner: { suite?: LoadedSuite } | undefined): string[] | null {
  if (!runner?.suite) return null;
  const files = new Set<string>();
  const walk = (s: LoadedSuite) => {
    if (s.file) files.add(s.file);
    for (const t of s.tests) if (t.file) files.add(t.file);
    s.suites.forEach(walk);
  };
  walk(runner.suite);
  return [...files];
}

export async function mochaGlobalSetup(this: { suite?: LoadedSuite } | undefined): Promise<void> {
  // When mocha's runner cannot be read, the engines start: a slow unit run beats a failing integration run.
  const files = specFiles(this);
  if (files && files.every((f) => path.resolve(f).startsWith(UNIT_DIR))) return;
  if (process.env.TEST_ENGINES === 'testcontainers') return startContainers();
  const root = path.join(varDir, 'test-engines', String(process.pid));
  fs.rmSync(root, { recursive: true, force: true });
  if (!process.env.REDIS_URL && process.env.LC_TEST_REDIS === 'cluster') {
    const cluster = await startRedisCluster({ dir: path.join(root, 'redis-cluster') });
    started.push(cluster);
    process.env.TEST_REDIS_URL = cluster.url;
  } else if (!process.env.REDIS_URL) {
    const redis = await startRedis({ dir: path.join(root, 'redis') });
    started.push(redis);
    process.env.TEST_REDIS_URL = redis.url;
  } else {
    process.env.TEST_REDIS_URL = process.env.REDIS_URL;
  }
  if (!process.env.MONGODB_URI) {
    const mongo = await startFerretDb({ dataDir: path.join(root, 'ferretdb') });
    started.push(mongo);
    process.env.TEST_MONGODB_URI = mongo.url;
  } else {
    process.env.TEST_MONGODB_URI = process.env.MONGODB_URI;
  }
}

export async function mochaGlobalTeardown(): Promise<void> {
  for (const e of started.reverse()) await e.stop();
  fs.rmSync(path.join(varDir, 'test-engines', String(process.pid)), { recursive: true, force: true });
}
