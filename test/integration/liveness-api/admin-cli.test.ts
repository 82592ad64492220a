import { expect } from 'chai';
import { runCli } from '../../support/cli';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { testMongoUri, testRedisUrl } from '../../support/engines';

describe('operator CLI (npm run -s admin)', () => {
  let stack: LivenessStack;
  let env: Record<string, string>;

  before(async () => {
    stack = await startLivenessStack('admincli', { withWorker: false });
    env = { MONGODB_URI: `${testMongoUri()}${stack.dbName}`, REDIS_URL: testRedisUrl(), QUEUE_PREFIX: stack.prefix, LOG_LEVEL: 'silent' };
  });
  after(() => stack.stop());

  const admin = async (...args: string[]) => {
    const res = await runCli('api/admin/main.ts', [...args, '--json'], env);
    return { ...res, json: res.stdout ? JSON.parse(res.stdout) : null };
  };

  it('account create prints the customer id and both keys, which work on the API', async () => {
    const res = await admin('account', 'create', '--email', 'ops@example.com', '--plan', 'starter', '--company', 'Acme');
    expect(res.code).to.equal(0);
    expect(res.json.customerId).to.match(/^[0-9a-f-]{36}$/);
    expect(res.json.primaryKey).to.match(/^lc_[A-Za-z0-9_-]{32,}$/);
    expect(res.json.secondaryKey).to.match(/^lc_[A-Za-z0-9_-]{32,}$/);
    expect((await stack.usage(res.json.primaryKey)).status).to.equal(200);
  });

  it('account set, key regenerate and usage show agree with GET /v1/usage', async () => {
    const created = (await admin('account', 'create', '--email', 'ops2@example.com', '--plan', 'enterprise', '--monthly-limit', '250000')).json;
    // Used once, so the API process has it cached: the CLI's changes must still take effect at once.
    expect((await stack.usage(created.primaryKey)).body.data.hard_cap_enabled).to.equal(false);
    const set = await admin('account', 'set', '--customer', created.customerId, '--hard-cap', 'on');
    expect(set.code).to.equal(0);
    const regen = await admin('key', 'regenerate', '--customer', created.customerId, '--which', 'primary');
    expect(regen.json.key).to.match(/^lc_/);
    expect((await stack.usage(created.primaryKey)).status).to.equal(401);
    const api = (await stack.usage(regen.json.key)).body.data;
    const cli = (await admin('usage', 'show', '--customer', created.customerId)).json;
    expect(cli).to.deep.equal(api);
    expect(cli).to.include({ monthly_limit: 250000, hard_cap_enabled: true, plan: 'enterprise' });
    await admin('account', 'set', '--customer', created.customerId, '--status', 'suspended');
    expect((await stack.usage(regen.json.key)).status).to.equal(403);
  });

  it('refuses bad arguments with a message and a non-zero exit', async () => {
    const res = await admin('account', 'create', '--email', 'x@example.com', '--plan', 'platinum');
    expect(res.code).to.not.equal(0);
    expect(res.json.error.message).to.include('unknown plan');
  });

  it('emotion-token create prints a token once; revoke makes it stop working', async () => {
    const res = await admin('emotion-token', 'create', '--name', 'batch');
    expect(res.json.token).to.be.a('string').with.length.greaterThan(20);
    expect(res.json.id).to.be.a('string');
    const revoked = await admin('emotion-token', 'revoke', '--id', res.json.id);
    expect(revoked.code).to.equal(0);
  });
});
