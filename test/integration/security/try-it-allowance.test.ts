// Issue 29, finding 5b: try-it gave a free account 50 verdicts a day per service (~1,500 a month) while its plan
// allows 50 a month, and the development mailbox answered any Host (a DNS-rebinding page on the developer's
// machine could read it). Try-it is now capped per UTC month at a tenth of the plan's calls; the mailbox
// answers loopback Host names only.
import http from 'node:http';
import { expect } from 'chai';
import { tryItMonthlyCap } from '../../../api/console/services/try-it-allowance';
import { PLANS, PLAN_IDS } from '../../../shared/billing/plans';
import { selfieJpeg } from '../../fixtures/liveness/images';
import { csrfOf, fullySignedIn, startConsole, type ConsoleHarness, type Onboarded } from '../console/harness';

/** A GET with a Host header of our choosing (fetch() will not send one). */
function getWithHost(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Try-it within the plan, and the development mailbox for this machine only (issue 29, finding 5b)', function () {
  this.timeout(120_000);
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole('try-it-allowance');
  });
  after(async () => h?.stop());

  async function tryCall(user: Onboarded, path: string, body: Buffer, type: string): Promise<Response> {
    const page = await user.client.open('/console/liveness/try');
    return fetch(`${h.base}${path}`, {
      method: 'POST',
      headers: { cookie: `lc_console=${user.client.cookies.get('lc_console')}`, 'x-csrf-token': csrfOf(page.html), origin: h.base, 'content-type': type },
      body,
    });
  }

  it("caps try-it at a tenth of every plan's monthly calls (5 a month per service on the free plan, never over 100)", () => {
    expect(tryItMonthlyCap(PLANS.free.monthlyCalls)).to.equal(5);
    for (const id of PLAN_IDS) {
      const cap = tryItMonthlyCap(PLANS[id].monthlyCalls);
      expect(cap * 2, `${id}: both services together stay within a tenth`).to.be.at.most(Math.max(10, PLANS[id].monthlyCalls / 5));
      expect(cap).to.be.within(5, 100);
    }
  });

  it('finding 5b: a free account that used its 5 tries this month gets 429 try_it_monthly_limit until the 1st, on both services', async () => {
    const user = await fullySignedIn(h, 'free');
    const page = await user.client.open('/console/liveness/try');
    expect(page.html).to.contain('Free: 5 tries a month');
    const month = new Date().toISOString().slice(0, 7);
    for (const service of ['liveness', 'emotion']) await h.api.deps.redis.set(`${h.config.QUEUE_PREFIX}:try-it:${service}:${user.customerId}:${month}`, '5');
    const liveness = await tryCall(user, '/console/liveness/try/check', await selfieJpeg(), 'image/jpeg');
    expect(liveness.status).to.equal(429);
    expect(((await liveness.json()) as { error: { code: string } }).error.code).to.equal('try_it_monthly_limit');
    expect(Number(liveness.headers.get('retry-after'))).to.be.within(1, 31 * 86_400);
    const emotion = await tryCall(user, '/console/emotion/try/analyze', Buffer.from('RIFF0000WAVEfmt '), 'audio/wav');
    expect(emotion.status).to.equal(429);
    expect(((await emotion.json()) as { error: { code: string } }).error.code).to.equal('try_it_monthly_limit');
  });

  it('the development mailbox answers loopback Host names only (a DNS-rebinding page sends its own name)', async () => {
    const port = h.api.port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `app.localhost:${port}`]) {
      expect((await getWithHost(port, '/console/dev/mailbox', host)).status, host).to.equal(200);
    }
    for (const host of [`rebind.attacker.example:${port}`, 'evil.example', `127.0.0.1.nip.io:${port}`]) {
      const res = await getWithHost(port, '/console/dev/mailbox', host);
      expect(res.status, host).to.equal(404);
      expect(res.body).to.not.contain('Confirm');
    }
  });
});
