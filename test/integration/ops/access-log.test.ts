import { expect } from 'chai';
import { Writable } from 'node:stream';
import { startLivenessApi, type RunningLivenessApi } from '../../../api/liveness/server';
import { createLogger } from '../../../shared/logger';
import { isolation } from '../../support/engines';
import { testConfig } from '../../support/config';
import { http } from '../../support/http';

describe('access log: one line per request, with who and how long, never the credential', () => {
  const lines: Record<string, unknown>[] = [];
  let api: RunningLivenessApi;

  before(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const { prefix, dbName } = isolation('accesslog');
    const config = testConfig(prefix, { LOG_LEVEL: 'info' }); // the access log is written at info, the shipped level
    api = await startLivenessApi({ config, log: createLogger('liveness-api', 'info', sink), dbName });
  });
  after(() => api.stop());

  const requests = () => lines.filter((l) => l.msg === 'request');

  it('logs method, route template, status, duration, sizes, client address and the customer, not the key', async () => {
    const created = await api.deps.apiKeys.createAccountWithKeys({ email: 'log@example.com', plan: 'starter' });
    const key = created.primaryKey!;
    const ok = await http(api.port, '/v1/usage', { headers: { 'x-api-key': key } });
    expect(ok.status).to.equal(200);
    const bad = await http(api.port, '/v1/usage', { headers: { 'x-api-key': 'lc_wrong' } });
    expect(bad.status).to.equal(401);
    await new Promise((r) => setImmediate(r));
    const [first, second] = requests().slice(-2);
    expect(first).to.include({ method: 'GET', route: '/v1/usage', status: 200, customerId: created.account._id, ip: '127.0.0.1' });
    expect(first!.requestId).to.equal(ok.headers.get('x-request-id'));
    expect(first!.ms).to.be.a('number');
    expect(first!.bytesOut).to.be.greaterThan(0);
    expect(second).to.include({ route: '/v1/usage', status: 401 });
    expect(second).to.not.have.property('customerId');
    expect(JSON.stringify(lines)).to.not.include(key).and.not.include('lc_wrong');
  });

  it('leaves probes and scrapes out of the log', async () => {
    const before = requests().length;
    await http(api.port, '/livez');
    await http(api.port, '/metrics');
    await new Promise((r) => setImmediate(r));
    expect(requests().length).to.equal(before);
  });
});
