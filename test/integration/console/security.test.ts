// Findings 4, 5 and 6 of the security review against the running console: no Redis key per anonymous
// visitor, e-mail links never taken from a forged Host, the development mailbox only for this machine and
// never in production.
import crypto from 'node:crypto';
import http from 'node:http';
import { expect } from 'chai';
import { buildConsoleDeps } from '../../../api/console/app';
import { RULES } from '../../../api/console/auth/attempts';
import { csrfOf, FormClient, startConsole, type ConsoleHarness } from './harness';
import { keysUnder } from '../../support/engines';

/** A raw request: fetch() will not send a Host header of our choosing. */
function rawRequest(
  port: number,
  o: { method: string; path: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: o.method, path: o.path, headers: o.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

describe('Console security: sessions, links and the development mailbox (findings 4, 5, 6)', function () {
  this.timeout(300_000);
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole('console-security');
  });
  after(async () => h?.stop());

  // Not BullMQ's own queue keys: a new Queue writes its meta hash when its connection is ready, on its own schedule.
  const ourKeys = async () =>
    (await keysUnder(h.api.deps.redis, h.config.QUEUE_PREFIX)).filter((k) => !k.startsWith(`${h.config.QUEUE_PREFIX}:liveness:`)).sort();

  it('finding 4: 10,000 cookieless GETs of console pages add no Redis keys', async () => {
    const pages = ['/console/sign-in', '/console/verify/resend', '/console/register', '/console/dashboard', '/console/no-such-page'];
    const before = await ourKeys();
    let next = 0;
    const statuses = new Set<number>();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 10_000) {
          const res = await fetch(`${h.base}${pages[next++ % pages.length]}`, { redirect: 'manual' });
          statuses.add(res.status);
          await res.arrayBuffer();
        }
      }),
    );
    expect([...statuses].sort()).to.deep.equal([200, 303, 400, 404]);
    expect(await ourKeys()).to.deep.equal(before);
  });

  it('finding 4: a visitor without a stored session can still post a form (the CSRF token needs no Redis key)', async () => {
    const client = new FormClient(h.base);
    const before = await ourKeys();
    const form = await client.open('/console/sign-in');
    const res = await client.submit(form, '/console/sign-in', { email: 'nobody@example.com', password: 'wrong-password' }, false);
    expect(res.status, 'a wrong password, not a CSRF refusal').to.equal(401);
    const forged = await client.request('POST', '/console/sign-in', { _csrf: 'x'.repeat(43), email: 'nobody@example.com', password: 'p' });
    expect(forged.status).to.equal(403);
    const added = (await ourKeys()).filter((k) => !before.includes(k));
    expect(
      added.filter((k) => k.includes(':console:session')),
      'no session stored for the failed sign-in',
    ).to.deep.equal([]);
  });

  it('finding 5: a forged Host never becomes the link in a verification e-mail (development: loopback only)', async () => {
    const email = `pending-${Date.now()}@example.com`;
    await h.api.deps.accounts.create({ email, plan: 'starter', status: 'pending', firstName: 'Ada' });
    const client = new FormClient(h.base);
    const form = await client.open('/console/verify/resend');
    const sent = await rawRequest(h.api.port, {
      method: 'POST',
      path: '/console/verify/resend',
      headers: {
        host: 'evil.example',
        cookie: `lc_console=${client.cookies.get('lc_console')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ _csrf: csrfOf(form.html), email }).toString(),
    });
    expect(sent.status).to.equal(200);
    const mail = await h.waitForMail(email, /Confirm/);
    const link = mail.links.find((l) => l.includes('/console/verify'))!;
    expect(link).to.not.contain('evil.example');
    expect(link.startsWith(`http://127.0.0.1:${h.api.port}/console/verify?token=`), link).to.equal(true);
  });

  it('finding 5: outside development the console refuses to start without PUBLIC_BASE_URL', () => {
    // A generated secret: production also refuses the repetitive one the tests use elsewhere.
    const production = {
      ...h.config,
      NODE_ENV: 'production' as const,
      MAILBOX_DIR: undefined,
      APP_SECRET: crypto.randomBytes(36).toString('base64'),
      MARKETPLACE_SECRET: crypto.randomBytes(36).toString('base64'),
    };
    expect(() => buildConsoleDeps({ ...h.api.deps, config: { ...production, PUBLIC_BASE_URL: undefined } })).to.throw(/PUBLIC_BASE_URL/);
    expect(() => buildConsoleDeps({ ...h.api.deps, config: { ...production, PUBLIC_BASE_URL: 'https://console.example.com' } })).to.not.throw();
  });

  it('finding 6: production refuses the development mailbox (NODE_ENV=production with MAILBOX_DIR)', () => {
    const config = {
      ...h.config,
      NODE_ENV: 'production' as const,
      PUBLIC_BASE_URL: 'https://console.example.com',
      APP_SECRET: crypto.randomBytes(36).toString('base64'),
    };
    expect(() => buildConsoleDeps({ ...h.api.deps, config })).to.throw(/MAILBOX_DIR/);
  });

  it('finding 6: the development mailbox answers this machine only, not a client a proxy speaks for', async () => {
    const local = await fetch(`${h.base}/console/dev/mailbox`);
    await local.arrayBuffer();
    expect(local.status).to.equal(200);
    const forwarded = await fetch(`${h.base}/console/dev/mailbox`, { headers: { 'x-forwarded-for': '203.0.113.5' } });
    expect(forwarded.status).to.equal(404);
    expect(await forwarded.text()).to.not.contain('Confirm');
  });

  // Last: it uses up this client address's allowance of verification e-mails.
  it('an anonymous visitor asking for verification links adds bounded state: no key for a malformed address, 20 per hour per client address', async () => {
    const client = new FormClient(h.base);
    const form = await client.open('/console/verify/resend');
    const before = await ourKeys();
    const junk = await client.submit(form, '/console/verify/resend', { email: `${'x'.repeat(30_000)}@example.com` }, false);
    expect(junk.status).to.equal(400);
    expect(await ourKeys(), 'a malformed address is not counted').to.deep.equal(before);
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await client.submit(form, '/console/verify/resend', { email: `visitor-${i}@example.com` }, false)).status);
    expect(statuses.filter((s) => s === 200).length).to.be.within(1, RULES.verifyResendByIp.maxFailures);
    expect(statuses.slice(-5)).to.deep.equal([429, 429, 429, 429, 429]);
    const added = (await ourKeys()).filter((k) => !before.includes(k) && k.includes(':console:attempts:'));
    expect(added.length, 'one per-address counter and one per accepted e-mail').to.be.at.most(RULES.verifyResendByIp.maxFailures + 1);
    for (const k of added) expect(k.length).to.be.below(120);
  });
});
