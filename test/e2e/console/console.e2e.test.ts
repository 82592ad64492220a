// The console in a real browser (Debian's chromium via playwright-core), through the whole customer
// path: marketplace link → registration → verification mail → password → keys shown once → sign in →
// TOTP setup → dashboard → regenerate a key → hard cap → usage. Screenshots of every page go to
// test-artifacts/console/ for people to judge the product by.
import { expect } from 'chai';
import { settleReserved } from '../../support/billing';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { generate } from 'otplib';
import { projectRoot } from '../../../shared/paths';
import { http } from '../../support/http';
import { startConsole, type ConsoleHarness } from '../../integration/console/harness';

const SHOTS = path.join(projectRoot, 'test-artifacts', 'console');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

describe('Console in a real browser: from the marketplace link to the dashboard', function () {
  this.timeout(180_000);
  let h: ConsoleHarness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const browserErrors: string[] = [];
  const email = `owner-${randomUUID().slice(0, 8)}@acme-robotics.example.com`;
  const password = 'Sturdy#Passw0rd';
  let primaryKey = '';
  let secondaryKey = '';
  let verificationLink = '';
  let totpSecret = '';
  let shot = 0;

  async function screenshot(name: string): Promise<void> {
    shot++;
    await page.screenshot({ path: path.join(SHOTS, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  }

  const ruleMet = async (rule: string) => ((await page.getAttribute(`li[data-rule=${rule}]`, 'class')) ?? '').includes('ok');

  before(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    for (const f of fs.readdirSync(SHOTS)) if (f.endsWith('.png')) fs.rmSync(path.join(SHOTS, f));
    h = await startConsole('console-e2e');
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    // 4xx answers to a wrong code are intended and Chromium logs them as "Failed to load resource".
    page.on('console', (m) => m.type() === 'error' && !/status of 4\d\d/.test(m.text()) && browserErrors.push(m.text()));
    page.on('pageerror', (e) => browserErrors.push(e.message));
  });

  after(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('opens the registration page from a marketplace link with the marketplace IDs filled in', async () => {
    const sub = h.subscribe('starter');
    const res = await page.goto(sub.url);
    expect(res?.status()).to.equal(200);
    expect(res?.headers()['content-security-policy']).to.match(/default-src 'self'/).and.not.match(/unsafe-inline/);
    await expect(await page.textContent('#marketplace-account-id')).to.equal(sub.marketplaceAccountId);
    expect(await page.textContent('#subscription-id')).to.equal(sub.subscriptionId);
    await screenshot('registration');
  });

  it('validates the fields inline before sending', async () => {
    await page.fill('#website', 'http://acme');
    await page.locator('#website').blur();
    await page.fill('#email', 'not-an-email');
    await page.locator('#email').blur();
    expect(await page.textContent('#website-error')).to.contain('https://example.com');
    expect(await page.textContent('#email-error')).to.contain('name@company.com');
    await page.click('button[type=submit]');
    expect(page.url()).to.contain('/console/register?token='); // the script kept the invalid form here
    await screenshot('registration-inline-errors');
  });

  it('registers and sends a verification e-mail with a 24-hour link', async () => {
    await page.fill('#firstName', 'Ada');
    await page.fill('#lastName', 'Lovelace');
    await page.fill('#email', email);
    await page.fill('#company', 'Acme Robotics');
    await page.fill('#website', 'https://acme-robotics.example.com');
    await Promise.all([page.waitForURL('**/console/register/sent'), page.click('button[type=submit]')]);
    expect(await page.textContent('#sent-to')).to.equal(email);
    await screenshot('check-inbox');
    const mail = await h.waitForMail(email, /Confirm your e-mail/);
    expect(mail.text).to.contain('24 hours');
    verificationLink = mail.links.find((l) => l.includes('/console/verify?token='))!;
    expect(verificationLink).to.be.a('string');
  });

  it('shows the message in the local-mode mailbox page too', async () => {
    await page.goto(`${h.base}/console/dev/mailbox`);
    expect(await page.textContent('main')).to.contain('Confirm your e-mail address');
    await screenshot('local-mailbox');
  });

  it('opens the link to the password page, which gives live feedback on the password rule', async () => {
    await page.goto(verificationLink);
    expect(page.url()).to.match(/\/console\/activate$/);
    await page.fill('#password', 'weakpass');
    expect(await ruleMet('lower')).to.equal(true);
    expect(await ruleMet('upper')).to.equal(false);
    await screenshot('password-feedback');
    await page.fill('#password', password);
    for (const rule of ['length', 'upper', 'lower', 'digit', 'symbol']) {
      expect(await ruleMet(rule), rule).to.equal(true);
    }
    await page.fill('#confirm', password);
  });

  it('activates the account and shows both keys in full exactly once, with copy buttons', async () => {
    await Promise.all([page.waitForSelector('#primary-key'), page.click('button[type=submit]')]);
    primaryKey = (await page.textContent('#primary-key'))!.trim();
    secondaryKey = (await page.textContent('#secondary-key'))!.trim();
    expect(primaryKey).to.match(/^lc_[A-Za-z0-9_-]{40,}$/);
    expect(secondaryKey).to.match(/^lc_[A-Za-z0-9_-]{40,}$/).and.not.equal(primaryKey);
    expect(await page.isVisible('button[data-copy="primary-key"]')).to.equal(true);
    expect(await page.isDisabled('#saved-continue')).to.equal(true);
    await screenshot('keys-shown-once');
    await page.check('input[name=saved]');
    await Promise.all([page.waitForURL('**/console/sign-in'), page.click('#saved-continue')]);
    const usage = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': primaryKey } });
    expect(usage.status).to.equal(200);
  });

  it('refuses the verification link a second time with a page that leads on', async () => {
    const again = await context.newPage();
    await again.goto(verificationLink);
    expect(await again.textContent('h1')).to.match(/already (used|active)/i);
    expect(await again.isVisible('a[href="/console/sign-in"]')).to.equal(true);
    await again.close();
  });

  it('signs in with e-mail and password, then requires TOTP setup with a QR code and the secret', async () => {
    await screenshot('sign-in');
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/console/two-factor/setup'), page.click('button[type=submit]')]);
    expect(await page.isVisible('.qr svg')).to.equal(true);
    await screenshot('totp-setup');
  });

  it('rejects a wrong code and opens the dashboard with the right one; a welcome e-mail follows', async () => {
    const secret = (await page.getAttribute('#totp-secret', 'data-secret'))!;
    totpSecret = secret;
    await page.fill('#code', '000000' === (await generate({ secret })) ? '111111' : '000000');
    await page.click('button[type=submit]');
    expect(await page.textContent('#code-error')).to.contain('not valid');
    await page.fill('#code', await generate({ secret }));
    await Promise.all([page.waitForURL('**/console/dashboard'), page.click('button[type=submit]')]);
    expect(await page.textContent('h1')).to.contain('Welcome back, Ada');
    expect(await page.textContent('#plan-name')).to.equal('Starter');
    expect(await page.textContent('main')).to.not.contain(primaryKey);
    await screenshot('dashboard');
    const welcome = await h.waitForMail(email, /Welcome/);
    expect(welcome.text).to.contain('/console/dashboard');
  });

  it('lists keys by prefix only and regenerates one after a confirmation step; the old key gets 401 at once', async () => {
    await page.click('nav >> text=API keys');
    expect(await page.textContent('[data-key-prefix=primary]')).to.equal(`${primaryKey.slice(0, 9)}…`);
    expect(await page.content()).to.not.contain(primaryKey);
    await screenshot('keys');
    await page.click('#key-primary >> text=Regenerate');
    await screenshot('regenerate-confirm');
    await Promise.all([page.waitForSelector('#new-key'), page.click('button.btn-danger')]);
    const newKey = (await page.textContent('#new-key'))!.trim();
    expect(newKey).to.match(/^lc_/).and.not.equal(primaryKey);
    await screenshot('new-key-once');

    const old = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': primaryKey } });
    expect(old.status).to.equal(401);
    expect(old.body.error.code).to.equal('invalid_api_key');
    const fresh = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': newKey } });
    expect(fresh.status).to.equal(200);
    primaryKey = newKey;
  });

  it('switches the hard cap on, which the API reports at once', async () => {
    await page.click('nav >> text=Plan & billing');
    expect(await page.getAttribute('#hard-cap-switch', 'aria-checked')).to.equal('false');
    await screenshot('plan');
    await page.click('#hard-cap-switch');
    await page.waitForSelector('#hard-cap-switch[aria-checked="true"]');
    const usage = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': secondaryKey } });
    expect(usage.body.data.hard_cap_enabled).to.equal(true);
    await screenshot('plan-hard-cap-on');
  });

  it('shows calls made with the key in this month\'s usage: the same numbers as GET /v1/usage', async () => {
    // Three billed calls, recorded the way the liveness worker records them (reserve, then settle).
    const { accounts, ledger } = h.api.deps;
    const account = (await accounts.getByEmail(email))!;
    for (let i = 0; i < 3; i++) {
      const plan = accounts.planView(account);
      const requestId = randomUUID();
      const reservation = await ledger.reserve(account._id, plan, requestId);
      if (!reservation.ok) throw new Error('reservation refused');
      await settleReserved(ledger, h.api.deps.config.QUEUE_PREFIX, { customerId: account._id, month: reservation.month, at: reservation.at, requestId, plan });
    }
    const usage = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': primaryKey } });
    expect(usage.body.data.total_calls).to.equal(3);
    await page.click('nav >> text=Overview');
    expect(await page.textContent('#usage-calls')).to.equal(String(usage.body.data.total_calls));
    expect(await page.textContent('#usage-remaining')).to.equal(usage.body.data.remaining_calls.toLocaleString('en-US'));
    expect(await page.textContent('#usage-overage')).to.equal(String(usage.body.data.over_limit_calls));
    expect(await page.textContent('#hard-cap-state')).to.equal('ON');
    await screenshot('dashboard-with-usage');
  });

  it('creates an emotion API token shown once, and revokes it', async () => {
    await page.click('nav >> text=Emotion API');
    await page.fill('#token-name', 'call-center-prod');
    await Promise.all([page.waitForSelector('#new-token'), page.click('button:has-text("Create token")')]);
    const token = (await page.textContent('#new-token'))!.trim();
    expect(token.length).to.be.greaterThan(30);
    await screenshot('emotion-token-once');
    await page.click('text=I have saved it');
    expect(await page.content()).to.not.contain(token);
    await page.click('button:has-text("Revoke")');
    expect(await page.textContent('main')).to.contain('Revoked');
    await screenshot('emotion-tokens');
  });

  it('lists sign-ins, key regenerations and plan changes in the activity list', async () => {
    await page.click('nav >> text=Activity');
    const actions = await page.$$eval('#audit-list li', (lis) => lis.map((li) => li.getAttribute('data-action')));
    expect(actions).to.include.members(['console.sign_in', 'key.regenerated', 'hard_cap.on']);
    await screenshot('activity');
  });

  it('signs out, and later sign-ins ask for the code every time', async () => {
    await Promise.all([page.waitForURL('**/console/sign-in'), page.click('button:has-text("Sign out")')]);
    await page.goto(`${h.base}/console/dashboard`);
    expect(page.url()).to.match(/\/console\/sign-in$/);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/console/sign-in/two-factor'), page.click('button[type=submit]')]);
    await screenshot('totp-challenge');
    // A code of the next 30-second step: within the allowed drift, and not a replay of the setup code.
    await page.fill('#code', await generate({ secret: totpSecret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await Promise.all([page.waitForURL('**/console/dashboard'), page.click('button[type=submit]')]);
  });

  it('looks right on a phone-sized screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${h.base}/console/dashboard`);
    await screenshot('mobile-dashboard');
    await page.click('button:has-text("Sign out")');
    await page.goto(h.subscribe('free').url);
    await screenshot('mobile-registration');
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('raised no script or CSP errors in the browser', () => {
    expect(browserErrors).to.deep.equal([]);
  });
});
