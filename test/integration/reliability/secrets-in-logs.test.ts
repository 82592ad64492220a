import { expect } from 'chai';
import { Redis } from 'ioredis';
import { blank, portrait } from '../../../dev/harness/sample-images';
import { speech } from '../../support/emotion-stack';
import type { ServiceProcess } from '../../../dev/harness/processes';
import { PrivateDeployment, startServices, type Ledger } from '../../../dev/harness/harness';
import { rawRequest } from './raw-http';
import { keysUnder } from '../../support/engines';

/** Fragments a leaked upload would show: base64 slices at several offsets, and the raw text of the key. */
function fragments(bytes: Buffer, n = 6): string[] {
  const b64 = bytes.toString('base64');
  return Array.from({ length: n }, (_, i) => b64.slice(Math.floor((i * b64.length) / n) + 8, Math.floor((i * b64.length) / n) + 40));
}

// The whole service as processes logging at debug, driven through successes and every failure path that
// touches a secret; then their captured output, the usage events and Redis are searched for the secrets.
describe('Secrets: keys, tokens, images and audio never reach the logs (processes at LOG_LEVEL=debug)', function () {
  this.timeout(115_000);
  let deployment: PrivateDeployment;
  let ledger: Ledger;
  let procs: ServiceProcess[] = [];
  let prefix: string;

  before(async () => {
    // Debug logs are the point; an 8 s budget keeps the failure paths (timeouts) inside the test's time.
    deployment = await PrivateDeployment.start('secrets', { LOG_LEVEL: 'debug', LIVENESS_BUDGET_MS: '8000' });
    prefix = deployment.prefix;
    procs = await startServices(['liveness-api', 'emotion-api', 'liveness-worker', 'emotion-worker'], deployment.env);
    ledger = await deployment.openLedger();
  });

  after(async () => {
    await deployment?.stop(procs);
  });

  it('logs none of them across a full run of successes and failures', async () => {
    const [live, emo] = [procs[0]!.port, procs[1]!.port];
    const created = await ledger.apiKeys.createAccountWithKeys({ email: 'secrets@example.com', plan: 'business' });
    const key = created.primaryKey!;
    const secondary = created.secondaryKey!;
    const token = await ledger.tokens.create('secrets');
    const face = await portrait();
    const noFace = await blank();
    const audio = speech(6);
    const nearKey = key.slice(0, -4) + 'AAAA';
    const wrongToken = token.token.slice(0, -4) + 'AAAA';

    const json = (k: string, body: unknown, extra: Record<string, string> = {}) =>
      rawRequest(live, { path: '/v1/check/liveness', headers: { 'content-type': 'application/json', 'x-api-key': k, ...extra }, body: JSON.stringify(body) });
    const statuses = [
      (await json(key, { image: face.toString('base64'), image_format: 'jpeg' })).status,
      (await json(secondary, { image: face.toString('base64'), image_format: 'jpeg' }, { 'idempotency-key': 'idem-secrets-1' })).status,
      (await json(key, { image: noFace.toString('base64'), image_format: 'jpeg' })).status,
      (await json(key, { image: face.toString('base64'), image_format: 'png' })).status,
      (await json(nearKey, { image: face.toString('base64'), image_format: 'jpeg' })).status,
      (await json(key, { image: face.toString('base64').slice(0, 5000), image_format: 'jpeg' })).status,
      (
        await rawRequest(live, {
          path: '/v1/check/liveness',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: `{"image":"${face.toString('base64')}`,
        })
      ).status,
      (await rawRequest(live, { method: 'GET', path: '/v1/usage', headers: { 'x-api-key': key } })).status,
      (await rawRequest(emo, { path: '/feelings/v3/analysis', headers: { authorization: `Bearer ${token.token}`, 'content-type': 'audio/wav' }, body: audio }))
        .status,
      (await rawRequest(emo, { path: '/feelings/v3/analysis', headers: { authorization: `Bearer ${wrongToken}`, 'content-type': 'audio/wav' }, body: audio }))
        .status,
      (
        await rawRequest(emo, {
          path: '/feelings/v3/analysis',
          headers: { authorization: `Bearer ${token.token}`, 'content-type': 'audio/wav' },
          body: audio.subarray(0, 40),
        })
      ).status,
      (
        await rawRequest(emo, {
          path: '/feelings/v3/analysis',
          headers: { authorization: `Bearer ${token.token}`, 'content-type': 'audio/wav' },
          body: Buffer.concat([Buffer.from('fLaC'), audio.subarray(4)]),
        })
      ).status,
    ];
    expect(statuses).to.deep.equal([200, 200, 400, 400, 401, 400, 400, 200, 200, 403, 400, 400]);

    const logs = procs.flatMap((p) => p.logs).join('\n');
    // The processes did log at debug level (otherwise this test would prove nothing).
    expect(logs).to.match(/"level":20|"level":30/);
    const secrets: Array<[string, string]> = [
      ['primary key', key],
      ['secondary key', secondary],
      ['near-miss key', nearKey],
      ['key body', key.slice(3)],
      ['emotion token', token.token],
      ['wrong token', wrongToken],
      ...fragments(face).map((f): [string, string] => ['image fragment', f]),
      ...fragments(audio).map((f): [string, string] => ['audio fragment', f]),
    ];
    for (const [what, secret] of secrets) expect(logs.includes(secret), `${what} found in the logs`).to.equal(false);

    // Neither in the durable usage events, nor left in Redis (payload keys go when the job ends).
    const events = JSON.stringify(await ledger.models.UsageEvent.find({}).lean());
    for (const [what, secret] of secrets) expect(events.includes(secret), `${what} found in usage events`).to.equal(false);
    const redis = new Redis(deployment.engines.redis.url);
    try {
      expect(await keysUnder(redis, prefix, 'payload:*')).to.deep.equal([]);
    } finally {
      redis.disconnect();
    }
  });
});
