// Finding 3 of the security review, where the customer feels it: suspension and cancellation (a scheduled
// one on the 1st, with an injected clock) end console sessions and make emotion tokens answer 403, and a
// token revoked on the dashboard is refused by the next real call. The emotion API reads tokens through the auth
// cache, which every such change clears at once, so "within one cache lifetime" is "from the next request".
import { expect } from 'chai';
import crypto from 'node:crypto';
import { startEmotionApi, type RunningEmotionApi } from '../../../api/emotion/server';
import { fullySignedIn, startConsole, textOf, type ConsoleHarness, type Onboarded } from '../console/harness';
import { quietLog } from '../../support/config';

/** Sessions are stored under a hash of the cookie id. */
const sessionKey = (h: ConsoleHarness, cookie: string) =>
  `${h.config.QUEUE_PREFIX}:console:session:${crypto.createHash('sha256').update(cookie).digest('base64url')}`;

describe('Security: account status reaches console sessions and emotion tokens (finding 3)', function () {
  this.timeout(180_000);
  let now: Date;
  let h: ConsoleHarness;
  let emotion: RunningEmotionApi;

  before(async () => {
    now = new Date();
    const clock = () => now;
    h = await startConsole('account-status', {}, clock);
    emotion = await startEmotionApi({ config: h.config, log: quietLog, dbName: h.api.deps.models.Account.db.name, clock });
  });
  after(async () => {
    await emotion?.stop();
    await h?.stop();
  });

  /** A call that passed authentication answers 400 (not audio, no worker needed); a refused one 403. */
  const analyse = (token: string) =>
    fetch(`http://127.0.0.1:${emotion.port}/feelings/v3/analysis`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: 'x',
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error: { code: string } } }));

  async function tokenFromDashboard(user: Onboarded): Promise<string> {
    const page = await user.client.open('/console/emotion');
    const shown = await user.client.submit(page, '/console/emotion/tokens', { name: 'status test' }); // 303 to the page that shows it once
    const token = textOf(shown.html, 'new-token');
    expect(token).to.match(/^[A-Za-z0-9_-]{20,}$/);
    return token;
  }

  it('finding 3: a token revoked on the dashboard is refused by the next real call with 403', async () => {
    const user = await fullySignedIn(h);
    const token = await tokenFromDashboard(user);
    expect((await analyse(token)).status).to.equal(400);
    const list = await user.client.open('/console/emotion');
    // Revoke asks for a confirmation first: follow the link, then confirm.
    const link = /href="(\/console\/emotion\/tokens\/[^"]+\/revoke)"/.exec(list.html)![1]!;
    const confirm = await user.client.open(link);
    await user.client.submit(confirm, link, {});
    expect((await analyse(token)).status).to.equal(403);
  });

  it('finding 3: suspension ends the console session and makes the emotion token answer 403 at once', async () => {
    const user = await fullySignedIn(h);
    const token = await tokenFromDashboard(user);
    expect((await user.client.get('/console/dashboard')).status).to.equal(200);
    expect((await analyse(token)).status).to.equal(400);
    const cookie = user.client.cookies.get('lc_console')!;

    await h.api.deps.accounts.setStatus(user.customerId, 'suspended');

    const dash = await user.client.get('/console/dashboard');
    expect(dash.status).to.equal(303);
    expect(dash.location).to.equal('/console/sign-in');
    expect(await h.api.deps.redis.exists(sessionKey(h, cookie)), 'the session is gone from Redis').to.equal(0);
    const refused = await analyse(token);
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('account_suspended');

    const form = await user.client.open('/console/sign-in');
    const again = await user.client.submit(form, '/console/sign-in', { email: user.email, password: user.password }, false);
    expect(again.status, 'signing in again is refused').to.equal(403);

    await h.api.deps.accounts.setStatus(user.customerId, 'active');
    expect((await analyse(token)).status, 'reinstated').to.equal(400);
  });

  it('finding 3: a scheduled cancellation turns into 403 and a closed console on the 1st (injected clock)', async () => {
    now = new Date(Date.UTC(2026, 10, 20, 12, 0, 0));
    const user = await fullySignedIn(h);
    const token = await tokenFromDashboard(user);
    const { effective } = await h.api.deps.accounts.scheduleCancellation(user.customerId);
    expect(effective).to.equal('2026-12');
    const usage = () => fetch(`http://127.0.0.1:${h.api.port}/v1/usage`, { headers: { 'x-api-key': user.primaryKey } }).then((r) => r.status);

    now = new Date(Date.UTC(2026, 10, 30, 23, 59, 59, 999)); // the last instant of November
    expect((await analyse(token)).status).to.equal(400);
    expect(await usage()).to.equal(200);
    expect((await user.client.get('/console/dashboard')).status).to.equal(200);

    now = new Date(Date.UTC(2026, 11, 1, 0, 0, 0)); // the 1st
    const refused = await analyse(token);
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('subscription_ended');
    expect(await usage()).to.equal(403);
    const dash = await user.client.get('/console/dashboard');
    expect(dash.status).to.equal(303);
    expect(dash.location).to.equal('/console/sign-in');
  });
});
