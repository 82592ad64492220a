// Mocha global fixture: the real engines for the whole run.
// - REDIS_URL / MONGODB_URI set: use them.
// - TEST_ENGINES=testcontainers (needs a Docker engine): real mongo:7 and redis:7 containers.
// - otherwise: a private redis-server and FerretDB (SQLite) under var/test-engines/, stopped at the end.
import fs from 'node:fs';
import path from 'node:path';
import { startFerretDb, startRedis, type Engine } from '../../dev/engines/local-engines';
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

export async function mochaGlobalSetup(): Promise<void> {
  if (process.env.TEST_ENGINES === 'testcontainers') return startContainers();
  const root = path.join(varDir, 'test-engines', String(process.pid));
  fs.rmSync(root, { recursive: true, force: true });
  if (!process.env.REDIS_URL) {
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
