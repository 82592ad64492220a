import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFerretDb, startRedis, type Engine } from '../../../dev/engines/local-engines';
import { startLivenessApi, type RunningLivenessApi } from '../../../api/liveness/server';
import { isolation } from '../../support/engines';
import { quietLog, testConfig } from '../../support/config';
import { http } from '../../support/http';

async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('condition not reached in time');
}

describe('GET /v1/health', () => {
  // A private database engine and Redis this file may stop and start at will.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-health-'));
  let mongo: Engine;
  let redis: Engine;
  let api: RunningLivenessApi;

  before(async () => {
    mongo = await startFerretDb({ dataDir: path.join(dir, 'ferretdb') });
    redis = await startRedis({ dir: path.join(dir, 'redis') });
    const { prefix } = isolation('health');
    api = await startLivenessApi({
      config: testConfig(prefix, { MONGODB_URI: `${mongo.url}health`, REDIS_URL: redis.url }),
      log: quietLog,
    });
  });

  after(async () => {
    await api?.stop();
    await mongo?.stop();
    await redis?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 200 {"status":"ok"} with no envelope when the database and queue are up', async () => {
    const res = await http(api.port, '/v1/health');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('turns 503 "database unavailable" when the database stops, and 200 again when it returns, without a restart', async () => {
    await mongo.stop();
    await eventually(async () => (await http(api.port, '/v1/health')).status === 503);
    const down = await http(api.port, '/v1/health');
    expect(down.body).to.deep.equal({ status: 'error', message: 'database unavailable' });

    mongo = await startFerretDb({ dataDir: path.join(dir, 'ferretdb'), port: mongo.port });
    await eventually(async () => (await http(api.port, '/v1/health')).status === 200);
    expect((await http(api.port, '/v1/health')).body).to.deep.equal({ status: 'ok' });
  });

  it('answers 503 "queue unavailable" while Redis is down, and recovers by itself', async () => {
    await redis.stop();
    await eventually(async () => (await http(api.port, '/v1/health')).status === 503);
    expect((await http(api.port, '/v1/health')).body).to.deep.equal({ status: 'error', message: 'queue unavailable' });
    redis = await startRedis({ dir: path.join(dir, 'redis'), port: redis.port });
    await eventually(async () => (await http(api.port, '/v1/health')).status === 200);
  });

  it('answers other methods with 405 and an Allow header', async () => {
    const res = await http(api.port, '/v1/health', { method: 'POST' });
    expect(res.status).to.equal(405);
    expect(res.headers.get('allow')).to.equal('GET');
  });
});
