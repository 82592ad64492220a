// Mocha global fixture: the real engines for the whole run. Uses REDIS_URL/MONGODB_URI when given;
// otherwise starts a private redis-server and FerretDB (SQLite) under var/test-engines/, stopped at the end.
import fs from 'node:fs';
import path from 'node:path';
import { startFerretDb, startRedis, type Engine } from '../../scripts/engines/local-engines';
import { varDir } from '../../shared/paths';

const started: Engine[] = [];

export async function mochaGlobalSetup(): Promise<void> {
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
