// Findings 2 and 12 of the security review, tried over HTTP: behind a proxy one client address cannot use up
// another's failed-authentication allowance on either front-end; the proxy setting trusts only what
// TRUST_PROXY names; /metrics can leave the customer port.
import crypto from 'node:crypto';
import os from 'node:os';
import { expect } from 'chai';
import type { Connection } from 'mongoose';
import { startEmotionApi, type RunningEmotionApi } from '../../../api/emotion/server';
import { startLivenessApi, type RunningLivenessApi } from '../../../api/liveness/server';
import { EmotionTokenService } from '../../../shared/accounts/emotion-tokens';
import { AccountService } from '../../../shared/accounts/account-service';
import { ApiKeyService } from '../../../shared/accounts/api-keys';
import { parseConfig, type Config } from '../../../shared/config';
import { connectMongo } from '../../../shared/db/mongo';
import { createModels, type Models } from '../../../shared/db/models';
import { systemClock } from '../../../shared/billing/month';
import { isolation } from '../../support/engines';
import { quietLog, testConfig } from '../../support/config';
import { admittedWithin, sendAll } from '../../support/buckets';

const SHIPPED = parseConfig({});
/** The shipped brute-force allowance (test/support/config.ts lifts it for other files; these tests need the real one). */
const SHIPPED_AUTH_LIMITS = {
  // The shipped values, read from the config schema: these tests check what users get.
  AUTH_FAILURE_BURST: String(SHIPPED.AUTH_FAILURE_BURST),
  AUTH_FAILURE_RATE_PER_SEC: String(SHIPPED.AUTH_FAILURE_RATE_PER_SEC), // shipped value
  AUTH_PREFIX_FAILURE_BURST: String(SHIPPED.AUTH_PREFIX_FAILURE_BURST), // shipped value
  AUTH_PREFIX_FAILURE_RATE_PER_SEC: String(SHIPPED.AUTH_PREFIX_FAILURE_RATE_PER_SEC), // shipped value
};

const randomSecret = () => crypto.randomBytes(32).toString('base64url');

describe('Security: failed-authentication limits behind a proxy (findings 2 and 12)', function () {
  this.timeout(180_000);
  let config: Config;
  let dbName: string;
  let mongo: Connection;
  let models: Models;
  let emotion: RunningEmotionApi;
  let liveness: RunningLivenessApi;
  let validToken: string;
  let validKey: string;

  before(async () => {
    const iso = isolation('limiters');
    dbName = iso.dbName;
    config = testConfig(iso.prefix, SHIPPED_AUTH_LIMITS);
    emotion = await startEmotionApi({ config, log: quietLog, dbName });
    liveness = await startLivenessApi({ config, log: quietLog, dbName });
    mongo = await connectMongo(config.MONGODB_URI!, dbName);
    models = createModels(mongo);
    const apiKeys = new ApiKeyService(models, systemClock, new AccountService(models, systemClock));
    const { account, primaryKey } = await apiKeys.createAccountWithKeys({ email: `limits-${iso.prefix.length}@example.com`, plan: 'starter' });
    validKey = primaryKey!;
    validToken = (await new EmotionTokenService(models).create('limits', account._id)).token;
  });
  after(async () => {
    await emotion?.stop();
    await liveness?.stop();
    await mongo?.close();
  });

  const emotionCall = (token: string, clientIp: string) =>
    fetch(`http://127.0.0.1:${emotion.port}/feelings/v3/analysis`, {
      method: 'POST',
      // text/plain: a request that passed authentication and the throttle answers 400, no worker needed
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain', 'x-forwarded-for': clientIp },
      body: 'not audio',
    }).then(async (r) => (await r.arrayBuffer(), r.status));

  const livenessCall = (key: string, clientIp: string) =>
    fetch(`http://127.0.0.1:${liveness.port}/v1/usage`, { headers: { 'x-api-key': key, 'x-forwarded-for': clientIp } }).then(
      async (r) => (await r.arrayBuffer(), r.status),
    );

  it('finding 2: 500 bad tokens from one client IP behind a proxy do not stop a valid token from another client IP (emotion API)', async () => {
    const started = Date.now();
    const statuses = await sendAll(500, 16, () => emotionCall(randomSecret(), '203.0.113.7'));
    const refused = statuses.filter((s) => s === 403).length;
    expect(statuses.filter((s) => s === 429).length, 'the guessing address is stopped').to.be.greaterThan(0);
    expect(refused).to.be.at.most(admittedWithin(SHIPPED.AUTH_FAILURE_BURST, SHIPPED.AUTH_FAILURE_RATE_PER_SEC, Date.now() - started));
    expect(await emotionCall(validToken, '198.51.100.9'), 'another client with a valid token gets through authentication').to.equal(400);
    expect(await emotionCall(randomSecret(), '203.0.113.7'), 'the guessing address is still stopped').to.equal(429);
  });

  it('finding 2: 500 bad keys from one client IP behind a proxy do not stop a valid key from another client IP (liveness API)', async () => {
    const started = Date.now();
    const statuses = await sendAll(500, 16, () => livenessCall(`lc_${randomSecret()}`, '203.0.113.8'));
    expect(statuses.filter((s) => s === 429).length).to.be.greaterThan(0);
    expect(statuses.filter((s) => s === 401).length).to.be.at.most(
      admittedWithin(SHIPPED.AUTH_FAILURE_BURST, SHIPPED.AUTH_FAILURE_RATE_PER_SEC, Date.now() - started),
    );
    expect(await livenessCall(validKey, '198.51.100.10')).to.equal(200);
  });

  it("finding 2: wrong secrets under a valid credential's own prefix, from many addresses, never stop that credential", async () => {
    const tokenPrefix = validToken.slice(0, 6);
    const keyPrefix = validKey.slice(0, 9);
    const tokenStatuses = await sendAll(3 * SHIPPED.AUTH_PREFIX_FAILURE_BURST, 8, (i) => emotionCall(tokenPrefix + randomSecret(), `192.0.2.${1 + (i % 250)}`));
    const keyStatuses = await sendAll(3 * SHIPPED.AUTH_PREFIX_FAILURE_BURST, 8, (i) => livenessCall(keyPrefix + randomSecret(), `198.18.0.${1 + (i % 250)}`));
    expect(tokenStatuses, 'the spread guess under one prefix is slowed').to.include(429);
    expect(keyStatuses).to.include(429);
    expect(await emotionCall(validToken, '192.0.2.1')).to.equal(400);
    expect(await livenessCall(validKey, '198.18.0.1')).to.equal(200);
  });

  it('finding 12: a private-range neighbour cannot pick its client address with X-Forwarded-For (TRUST_PROXY defaults to loopback)', async function () {
    const uniqueLocal = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && !a.internal && a.family === 'IPv6' && /^f[cd]/i.test(a.address));
    if (!uniqueLocal) this.skip(); // needs a unique-local (fc00::/7) interface to speak from a private, non-loopback address
    const open = await startLivenessApi({ config: { ...config, HOST: '::' }, log: quietLog, dbName });
    try {
      // Each request names a different client: with every private range trusted, none of them ever runs out.
      const statuses = await sendAll(SHIPPED.AUTH_FAILURE_BURST + 20, 4, (i) =>
        fetch(`http://[${uniqueLocal.address}]:${open.port}/v1/usage`, {
          headers: { 'x-api-key': `lc_${randomSecret()}`, 'x-forwarded-for': `203.0.113.${1 + i}` },
        }).then(async (r) => (await r.arrayBuffer(), r.status)),
      );
      expect(statuses, 'the neighbour is one client address, and it runs out').to.include(429);
    } finally {
      await open.stop();
    }
  });

  it('finding 12: with METRICS_PORT, /metrics answers on its own port and not on the customer port', async () => {
    const api = await startLivenessApi({ config: { ...config, METRICS_PORT: 0 }, log: quietLog, dbName });
    try {
      expect(api.metricsPort).to.be.a('number').and.not.equal(api.port);
      const customer = await fetch(`http://127.0.0.1:${api.port}/metrics`);
      await customer.arrayBuffer();
      expect(customer.status).to.equal(404);
      const own = await fetch(`http://127.0.0.1:${api.metricsPort}/metrics`);
      expect(own.status).to.equal(200);
      expect(await own.text()).to.contain('http_request_duration_seconds');
    } finally {
      await api.stop();
    }
  });
});
