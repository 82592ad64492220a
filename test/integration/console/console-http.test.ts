import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { generate } from 'otplib';
import { VerificationTokens, VERIFICATION_TTL_MS } from '../../../api/console/links/verification-token';
import { RULES } from '../../../api/console/auth/attempts';
import { HmacRegistrationSigner, newLocalSubscription, registrationUrl } from '../../../api/console/links/registration-token';
import { CONSOLE_ASSETS_DIR } from '../../../api/console/assets/serve';
import { http } from '../../support/http';
import {
  csrfOf,
  decodeEntities,
  FormClient,
  fullySignedIn,
  registerAndActivate,
  secretOf,
  signIn,
  startConsole,
  subscriptionOf,
  textOf,
  type ConsoleHarness,
} from './harness';

const cookieOf = (c: FormClient) => c.cookies.get('lc_console');
/** A code from the next 30-second step: accepted (one step of drift is allowed) and never a replay. */
const nextCode = (secret: string) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });

describe('Console over HTTP: sessions, CSRF, lockout and the onboarding rules', function () {
  this.timeout(120_000);
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole('console-http');
  });
  after(async () => h?.stop());

  describe('pages', () => {
    it('carry a strict Content-Security-Policy (no inline script or style), no-store caching and frame denial', async () => {
      const page = await new FormClient(h.base).get('/console/sign-in');
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).to.contain("default-src 'self'").and.contain("script-src 'self'").and.contain("style-src 'self'").and.contain("frame-ancestors 'none'");
      expect(csp).to.not.contain('unsafe-inline');
      expect(page.headers.get('cache-control')).to.equal('no-store');
      expect(page.headers.get('x-frame-options')).to.equal('DENY');
      expect(page.html).to.not.match(/<script(?![^>]*\ssrc=)/); // every script is an external file
      expect(page.html).to.not.match(/\sstyle=/);
    });

    it('set the session cookie HttpOnly and SameSite=Lax (Secure only when SECURE_COOKIES)', async () => {
      const res = await fetch(`${h.base}/console/sign-in`);
      const cookie = res.headers.getSetCookie()[0]!;
      expect(cookie)
        .to.match(/^lc_console=[A-Za-z0-9_-]{40,};/)
        .and.contain('HttpOnly')
        .and.contain('SameSite=Lax')
        .and.contain('Path=/');
      expect(cookie).to.not.contain('Secure');
    });

    it('answer an unknown console address with a 404 page that leads back', async () => {
      const page = await new FormClient(h.base).get('/console/no-such-page');
      expect(page.status).to.equal(404);
      expect(page.headers.get('content-type')).to.contain('text/html');
      expect(page.html).to.contain('href="/console/sign-in"');
    });

    it('send visitors who are not signed in from the dashboard to sign-in', async () => {
      const res = await new FormClient(h.base).get('/console/dashboard');
      expect(res.status).to.equal(303);
      expect(res.location).to.equal('/console/sign-in');
    });
  });

  describe('built assets (dist/console-assets, npm run build:console)', () => {
    it('serves every asset a page links under its content-hashed name, cached a year as immutable', async () => {
      const page = await new FormClient(h.base).get('/console/sign-in');
      const urls = [...page.html.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
      expect(urls).to.have.length(3); // the icon, the stylesheet and the script
      for (const url of urls) {
        const [, stem, hash, ext] = /^\/console\/assets\/([a-z-]+)-([0-9a-f]{10})\.([a-z]+)$/.exec(url) ?? [];
        expect(stem, url).to.be.a('string');
        const res = await fetch(`${h.base}${url}`);
        expect(res.status, url).to.equal(200);
        expect(res.headers.get('cache-control'), url).to.equal('public, max-age=31536000, immutable');
        expect(res.headers.get('content-type'), url).to.contain({ js: 'javascript', css: 'text/css', svg: 'image/svg+xml' }[ext!]);
        const body = Buffer.from(await res.arrayBuffer());
        // The name's hash is the body's: a changed file gets a new name, so the year-long cache never goes stale.
        expect(createHash('sha256').update(body).digest('hex').slice(0, 10), url).to.equal(hash);
        expect(body.equals(fs.readFileSync(path.join(CONSOLE_ASSETS_DIR, path.basename(url)))), url).to.equal(true);
      }
    });

    it('answers an asset name the build did not emit, and the build manifest, with the 404 page, not cached', async () => {
      // The manifest is the server's index of the build, not an asset: its fixed name must not be cached for a year.
      for (const url of ['/console/assets/app-0000000000.js', '/console/assets/app.js', '/console/assets/no-such-file.css', '/console/assets/manifest.json']) {
        const res = await new FormClient(h.base).get(url);
        expect(res.status, url).to.equal(404);
        expect(res.headers.get('content-type'), url).to.contain('text/html');
        expect(res.headers.get('cache-control'), url).to.equal('no-store');
      }
    });
  });

  describe('CSRF', () => {
    it("refuses a form without the token, with another session's token, or from another site", async () => {
      const a = new FormClient(h.base);
      const b = new FormClient(h.base);
      const pageA = await a.get('/console/sign-in');
      const pageB = await b.get('/console/sign-in');
      const creds = { email: 'x@example.com', password: 'whatever' };
      expect((await a.request('POST', '/console/sign-in', creds)).status).to.equal(403);
      expect((await a.request('POST', '/console/sign-in', { ...creds, _csrf: csrfOf(pageB.html) })).status).to.equal(403);
      const crossSite = await a.request('POST', '/console/sign-in', { ...creds, _csrf: csrfOf(pageA.html) }, { origin: 'https://evil.example' });
      expect(crossSite.status).to.equal(403);
      expect(crossSite.html).to.contain('csrf_failed');
      // The right token passes the check (and the wrong password is then what fails).
      expect((await a.request('POST', '/console/sign-in', { ...creds, _csrf: csrfOf(pageA.html) })).status).to.equal(401);
    });

    it('protects signed-in actions too: a forged regenerate leaves the key working', async () => {
      const user = await fullySignedIn(h);
      const res = await user.client.request('POST', '/console/keys/primary/regenerate', { _csrf: 'forged' });
      expect(res.status).to.equal(403);
      expect((await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': user.primaryKey } })).status).to.equal(200);
    });
  });

  describe('sign-in', () => {
    it('rotates the session id at sign-in and again when the TOTP step completes; old ids are dead', async () => {
      const user = await registerAndActivate(h);
      await user.client.get('/console/sign-in');
      const anonymous = cookieOf(user.client)!;
      const setup = await signIn(user.client, user.email, user.password);
      const afterPassword = cookieOf(user.client)!;
      expect(afterPassword).to.not.equal(anonymous);
      await user.client.submit(setup, '/console/two-factor/setup', { code: await generate({ secret: secretOf(setup) }) });
      const afterTotp = cookieOf(user.client)!;
      expect(afterTotp).to.not.equal(afterPassword);

      const thief = new FormClient(h.base);
      thief.cookies.set('lc_console', afterPassword);
      expect((await thief.get('/console/dashboard')).location).to.equal('/console/sign-in');
      expect((await user.client.get('/console/dashboard')).status).to.equal(200);
    });

    it('does not open the dashboard between the password and the TOTP code', async () => {
      const user = await fullySignedIn(h);
      await user.client.submit(await user.client.open('/console/dashboard'), '/console/sign-out', {});
      const challenge = await signIn(user.client, user.email, user.password);
      expect(challenge.url).to.match(/\/console\/sign-in\/two-factor$/);
      const dash = await user.client.get('/console/dashboard');
      expect(dash.status).to.equal(303);
      expect(dash.location).to.equal('/console/sign-in/two-factor');
    });

    it('asks for the code at every later sign-in', async () => {
      const user = await registerAndActivate(h);
      const setup = await signIn(user.client, user.email, user.password);
      const secret = secretOf(setup);
      await user.client.submit(setup, '/console/two-factor/setup', { code: await generate({ secret }) });
      await user.client.submit(await user.client.open('/console/dashboard'), '/console/sign-out', {});
      const challenge = await signIn(user.client, user.email, user.password);
      expect(challenge.url).to.match(/two-factor$/);
      const dash = await user.client.submit(challenge, '/console/sign-in/two-factor', { code: await nextCode(secret) });
      expect(dash.url).to.match(/\/console\/dashboard$/);
    });

    it('locks an account after 5 wrong passwords: the right one is refused with 429 until the window ends', async () => {
      const user = await registerAndActivate(h);
      for (let i = 0; i < RULES.signInAccount.maxFailures; i++) {
        expect((await signIn(new FormClient(h.base), user.email, 'Wrong#Passw0rd')).status).to.equal(401);
      }
      const locked = await signIn(new FormClient(h.base), user.email, user.password);
      expect(locked.status).to.equal(429);
      expect(locked.headers.get('retry-after')).to.match(/^\d+$/);
      expect(locked.html).to.contain('Too many failed sign-in attempts');
    });

    it('counts concurrent wrong passwords before checking any: of 12 sent at once, 5 are tried and 7 refused with 429', async () => {
      const user = await registerAndActivate(h);
      const answers = await Promise.all(Array.from({ length: 12 }, () => signIn(new FormClient(h.base), user.email, 'Wrong#Passw0rd')));
      expect(answers.filter((a) => a.status === 401)).to.have.length(RULES.signInAccount.maxFailures);
      expect(answers.filter((a) => a.status === 429)).to.have.length(12 - RULES.signInAccount.maxFailures);
      expect((await signIn(new FormClient(h.base), user.email, user.password)).status).to.equal(429);
    });

    it('gives the same answer for an unknown e-mail as for a wrong password', async () => {
      const unknown = await signIn(new FormClient(h.base), 'nobody@example.com', 'Sturdy#Passw0rd');
      expect(unknown.status).to.equal(401);
      expect(unknown.html).to.contain('The e-mail address or password is incorrect.');
    });

    it('locks two-factor after 5 wrong codes, even for the right code', async () => {
      const user = await registerAndActivate(h);
      const setup = await signIn(user.client, user.email, user.password);
      const secret = secretOf(setup);
      const right = await generate({ secret });
      const wrong = right === '123456' ? '654321' : '123456';
      let page = setup;
      for (let i = 0; i < RULES.totp.maxFailures; i++) page = await user.client.submit(page, '/console/two-factor/setup', { code: wrong }, false);
      expect(page.status).to.equal(429);
      const locked = await user.client.submit(page, '/console/two-factor/setup', { code: right }, false);
      expect(locked.status).to.equal(429);
      const account = await h.api.deps.accounts.get(user.customerId);
      expect(account!.totpEnabled).to.equal(false);
    });

    it('checks no more than 5 codes of a burst sent at once, and then refuses the right one too', async () => {
      const user = await registerAndActivate(h);
      const setup = await signIn(user.client, user.email, user.password);
      const secret = secretOf(setup);
      const right = await generate({ secret });
      const wrongs = Array.from({ length: 40 }, (_, i) => String((Number(right) + 1 + i) % 1_000_000).padStart(6, '0'));
      const answers = await Promise.all(wrongs.map((code) => user.client.submit(setup, '/console/two-factor/setup', { code }, false)));
      // Attempts 1-4 are told how many tries are left (400); the 5th and every one refused before its check: 429.
      expect(answers.filter((a) => a.status === 400)).to.have.length(RULES.totp.maxFailures - 1);
      expect(answers.filter((a) => a.status === 429)).to.have.length(40 - (RULES.totp.maxFailures - 1));
      expect((await user.client.submit(setup, '/console/two-factor/setup', { code: right }, false)).status).to.equal(429);
    });

    it('stores the TOTP secret encrypted, never in the clear', async () => {
      const user = await registerAndActivate(h);
      const setup = await signIn(user.client, user.email, user.password);
      const raw = await h.api.deps.models.Account.findById(user.customerId).lean();
      expect(raw!.totpSecretEnc).to.match(/^v1:/).and.not.contain(secretOf(setup));
      expect(raw!.passwordHash).to.match(/^scrypt\$/);
    });

    it('signs out: the session is destroyed server-side', async () => {
      const user = await fullySignedIn(h);
      const id = cookieOf(user.client)!;
      await user.client.submit(await user.client.open('/console/dashboard'), '/console/sign-out', {});
      const replay = new FormClient(h.base);
      replay.cookies.set('lc_console', id);
      expect((await replay.get('/console/dashboard')).status).to.equal(303);
    });
  });

  describe('onboarding rules', () => {
    it('refuses a tampered registration link, an expired one, and one whose subscription is already registered', async () => {
      const client = new FormClient(h.base);
      const sub = h.subscribe('starter');
      // Flip a character inside the signed payload (the token's last base64url character can be padding bits only).
      const at = sub.url.indexOf('token=') + 'token='.length + 4;
      const tampered = sub.url.slice(0, at) + (sub.url[at] === 'A' ? 'B' : 'A') + sub.url.slice(at + 1);
      expect((await client.get(tampered)).status).to.equal(400);
      const signer = new HmacRegistrationSigner(h.config.APP_SECRET!);
      const stale = registrationUrl(h.base, signer.sign(newLocalSubscription('starter'), -1000));
      const expired = await client.get(stale);
      expect(expired.status).to.equal(410);
      expect(expired.html).to.contain('This registration link has expired.');

      const form = await client.open(sub.url);
      const token = decodeEntities(/name="token" value="([^"]+)"/.exec(form.html)![1]!);
      const email = `once-${Date.now()}@example.com`;
      await client.submit(form, '/console/register', { token, firstName: 'O', lastName: 'N', email, company: 'C', website: 'https://c.example.com' });
      const account = (await h.api.deps.accounts.getByEmail(email))!;
      expect(account.marketplace).to.deep.include({ subscriptionId: sub.subscriptionId, accountId: sub.marketplaceAccountId });
      expect(account.status).to.equal('pending');
      const reused = await new FormClient(h.base).get(sub.url);
      expect(reused.status).to.equal(409);
      expect(reused.html).to.contain('already registered').and.contain('/console/verify/resend');
    });

    it('finding 3: registration answers alike for a known and a new address; the known address gets a mail instead of a second account', async () => {
      const known = await registerAndActivate(h);
      const attempt = async (email: string) => {
        const client = new FormClient(h.base);
        const sub = h.subscribe('starter');
        const form = await client.open(sub.url);
        const token = decodeEntities(/name="token" value="([^"]+)"/.exec(form.html)![1]!);
        const fields = { token, firstName: 'Eve', lastName: 'Probe', email, company: 'C', website: 'https://c.example.com' };
        const answer = await client.submit(form, '/console/register', fields, false);
        const page = await client.open(answer.location ?? '/');
        const reopened = await new FormClient(h.base).get(sub.url);
        return { status: answer.status, location: answer.location, page: page.html.replaceAll(email, 'EMAIL'), reopened: reopened.status };
      };
      const fresh = await attempt(`new-${Date.now()}@example.com`);
      const existing = await attempt(known.email);
      expect(existing).to.deep.equal({ ...fresh, page: existing.page });
      expect(fresh).to.include({ status: 303, location: '/console/register/sent', reopened: 409 });
      // The pages differ only in their per-session CSRF token.
      const strip = (html: string) => html.replace(/name="_csrf" value="[^"]+"/g, '').replace(/<meta name="csrf-token" content="[^"]+"/g, '');
      expect(strip(existing.page)).to.equal(strip(fresh.page));
      const mail = await h.waitForMail(known.email, /already exists/);
      expect(mail.links.some((l) => l.includes('/console/sign-in'))).to.equal(true);
      expect(await h.api.deps.models.Account.countDocuments({ email: known.email })).to.equal(1);
    });

    it('validates the registration fields on the server too', async () => {
      const client = new FormClient(h.base);
      const form = await client.open(h.subscribe('standard').url);
      const token = decodeEntities(/name="token" value="([^"]+)"/.exec(form.html)![1]!);
      const res = await client.submit(form, '/console/register', {
        token,
        firstName: 'A',
        lastName: 'B',
        email: 'a@example.com',
        company: 'C',
        website: 'http://c.example.com',
      });
      expect(res.status).to.equal(400);
      expect(textOf(res.html, 'website-error')).to.contain('https://example.com');
      expect(await h.api.deps.accounts.getByEmail('a@example.com')).to.equal(null);
    });

    it('answers an expired verification link with a page to send a new one, and sends it', async () => {
      const client = new FormClient(h.base);
      const form = await client.open(h.subscribe('starter').url);
      const token = decodeEntities(/name="token" value="([^"]+)"/.exec(form.html)![1]!);
      const email = `late-${Date.now()}@example.com`;
      await client.submit(form, '/console/register', { token, firstName: 'Late', lastName: 'Comer', email, company: 'C', website: 'https://c.example.com' });
      const account = (await h.api.deps.accounts.getByEmail(email))!;
      const dayAgo = new VerificationTokens(h.config.APP_SECRET!, h.api.deps.redis, h.config.QUEUE_PREFIX, () => Date.now() - VERIFICATION_TTL_MS - 60_000);
      const expired = await client.open(`/console/verify?token=${encodeURIComponent(dayAgo.issue(account._id, email))}`);
      expect(expired.status).to.equal(410);
      expect(expired.html).to.contain('This link has expired').and.contain('action="/console/verify/resend"').and.contain(`value="${email}"`);
      const sent = await client.submit(expired, '/console/verify/resend', { email });
      expect(sent.status).to.equal(200);
      const mails = await h.waitForMail(email, /Confirm/);
      expect(mails.links[0]).to.contain('/console/verify?token=');
    });

    it('refuses a weak password and keeps the account pending', async () => {
      const client = new FormClient(h.base);
      const form = await client.open(h.subscribe('starter').url);
      const token = decodeEntities(/name="token" value="([^"]+)"/.exec(form.html)![1]!);
      const email = `weak-${Date.now()}@example.com`;
      await client.submit(form, '/console/register', { token, firstName: 'W', lastName: 'P', email, company: 'C', website: 'https://c.example.com' });
      const mail = await h.waitForMail(email, /Confirm/);
      const pwPage = await client.open(mail.links[0]!);
      const res = await client.submit(pwPage, '/console/activate', { password: 'password1', confirm: 'password1' }, false);
      expect(res.status).to.equal(400);
      expect(res.html).to.contain('upper-case letter').and.contain('symbol');
      expect((await h.api.deps.accounts.getByEmail(email))!.status).to.equal('pending');
    });

    it('shows the keys once: they are in the activation response and nowhere afterwards', async () => {
      const user = await registerAndActivate(h);
      const again = await user.client.open('/console/activate');
      expect(again.html).to.not.contain(user.primaryKey);
      expect(again.url).to.match(/sign-in$/);
      // A reload of the keys page finds them gone and says so, instead of showing or issuing them again.
      const reload = await user.client.open('/console/activate/keys');
      expect(reload.status).to.equal(200);
      expect(reload.html).to.contain('id="already-shown"').and.not.contain(user.primaryKey);
    });
  });

  describe('recovery', () => {
    it('ends every signed-in session of the account when the password is reset by e-mail', async () => {
      const user = await fullySignedIn(h);
      expect((await user.client.get('/console/dashboard')).status).to.equal(200);
      const other = new FormClient(h.base);
      const sent = await other.submit(await other.open('/console/forgot-password'), '/console/forgot-password', { email: user.email });
      expect(sent.url).to.match(/forgot-password\/sent$/);
      const mail = await h.waitForMail(user.email, /Reset your/);
      const form = await other.open(mail.links.find((l) => l.includes('reset-password'))!);
      const done = await other.submit(form, '/console/reset-password', {
        token: decodeEntities(/name="token" value="([^"]+)"/.exec(form.html)![1]!),
        password: 'Brand#New5pass',
        confirm: 'Brand#New5pass',
      });
      expect(done.url).to.match(/sign-in$/);
      expect((await user.client.get('/console/dashboard')).location).to.equal('/console/sign-in');
    });

    it('limits reset requests per address (3 an hour) with the same answer for unknown addresses', async () => {
      const client = new FormClient(h.base);
      const unknown = `nobody-${Date.now()}@example.com`;
      for (let i = 0; i < 3; i++) {
        const res = await client.submit(await client.open('/console/forgot-password'), '/console/forgot-password', { email: unknown });
        expect(res.url).to.match(/forgot-password\/sent$/);
      }
      const fourth = await client.submit(await client.open('/console/forgot-password'), '/console/forgot-password', { email: unknown }, false);
      expect(fourth.status).to.equal(429);
      expect(Number(fourth.headers.get('retry-after'))).to.be.greaterThan(3000); // the one-hour window, started at the first request
    });
  });

  describe('dashboard actions', () => {
    it('answers 404 not_found when withdrawing a scheduled plan change that does not exist', async () => {
      const user = await fullySignedIn(h);
      const plan = await user.client.open('/console/plan');
      const res = await user.client.submit(plan, '/console/plan/scheduled/withdraw', {}, false);
      expect(res.status).to.equal(404);
      expect(res.html).to.contain('data-error-code="not_found"');
    });

    it('schedules a downgrade the marketplace confirmed for the month end; withdrawing it waits for the marketplace too', async () => {
      const user = await fullySignedIn(h);
      const plan = await user.client.open('/console/plan');
      const pending = await user.client.submit(plan, '/console/plan/change', { plan: 'free' });
      expect(pending.html).to.contain('id="pending-change"');
      expect((await h.entitle(await subscriptionOf(h, user.customerId), 'free')).status).to.equal(200);
      const scheduled = await user.client.open('/console/plan');
      expect(scheduled.html).to.contain('id="scheduled-change"').and.contain('Free (evaluation)').and.not.contain('id="pending-change"');
      expect((await h.api.deps.accounts.get(user.customerId))!.plan).to.equal('starter');
      const asked = await user.client.submit(scheduled, '/console/plan/scheduled/withdraw', {});
      expect(asked.html).to.contain('id="scheduled-change"').and.contain('data-kind="withdraw_scheduled"');
      expect((await h.entitle(await subscriptionOf(h, user.customerId), 'starter')).body).to.include({ status: 'applied', plan: 'starter' });
      expect((await user.client.open('/console/plan')).html).to.not.contain('id="scheduled-change"');
    });

    it('upgrades once the marketplace confirms: /v1/usage reports the new plan and limit at once', async () => {
      const user = await fullySignedIn(h);
      await user.client.submit(await user.client.open('/console/plan'), '/console/plan/change', { plan: 'business' });
      expect((await h.entitle(await subscriptionOf(h, user.customerId), 'business')).status).to.equal(200);
      const usage = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': user.primaryKey } });
      expect(usage.body.data).to.include({ plan: 'business', monthly_limit: 30_000 });
    });

    it('keeps the hard cap locked on for the free plan', async () => {
      const user = await fullySignedIn(h, 'free');
      const plan = await user.client.open('/console/plan');
      expect(plan.html).to.match(/id="hard-cap-switch"[^>]*disabled/);
      const res = await user.client.submit(plan, '/console/hard-cap', { on: 'off' }, false);
      expect(res.status).to.equal(400);
      const usage = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': user.primaryKey } });
      expect(usage.body.data.hard_cap_enabled).to.equal(true);
    });
  });
});

describe('Console behind TLS (SECURE_COOKIES=true, no local mailbox)', () => {
  let h: ConsoleHarness;
  before(async () => {
    h = await startConsole('console-tls', { SECURE_COOKIES: 'true', MAILBOX_DIR: '' });
  });
  after(async () => h?.stop());

  it('names the cookie __Host- and marks it Secure, HttpOnly and SameSite', async () => {
    const res = await fetch(`${h.base}/console/sign-in`);
    const cookie = res.headers.getSetCookie()[0]!;
    expect(cookie)
      .to.match(/^__Host-lc_console=/)
      .and.contain('Secure')
      .and.contain('HttpOnly')
      .and.contain('SameSite=Lax')
      .and.contain('Path=/');
    expect(res.headers.get('content-security-policy')).to.contain('upgrade-insecure-requests');
    expect(res.headers.get('strict-transport-security')).to.contain('max-age=31536000');
  });

  it('has no local mailbox page', async () => {
    expect((await fetch(`${h.base}/console/dev/mailbox`)).status).to.equal(404);
  });
});
