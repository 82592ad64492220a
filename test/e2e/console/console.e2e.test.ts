// The console in a real browser (Debian's chromium via playwright-core), through the whole customer
// path: marketplace link → registration → verification mail → password → keys shown once → sign in →
// TOTP setup with recovery codes → dashboard → keys, plan, hard cap, usage (driven through the API
// with a real worker), usage alerts, CSV, emotion tokens → security (password change, recovery codes)
// → forgot password by e-mail. Every page is checked at 1280 px and 390 px: screenshots under
// test-artifacts/console/, no sideways scroll on the phone, and no serious or critical axe-core finding.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import sharp from 'sharp';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { generate } from 'otplib';
import { launchChromium, SCREENSHOTS_DIR } from '../../support/browser';
import { http } from '../../support/http';
import { quietLog } from '../../support/config';
import { portrait } from '../../support/images';
import { startLivenessWorker } from '../../../workers/liveness/worker';
import type { RunningWorker } from '../../../workers/runtime/worker-process';
import { startConsole, type ConsoleHarness } from '../../integration/console/harness';
import { listMessages } from '../../../shared/mail/mailbox';

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const DESKTOP = { width: 1280, height: 860 };
const run = promisify(execFile);
const PHONE = { width: 390, height: 844 };

describe('Console in a real browser: from the marketplace link to the dashboard', function () {
  this.timeout(300_000);
  let h: ConsoleHarness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let worker: RunningWorker | null = null;
  const browserErrors: string[] = [];
  const email = `owner-${randomUUID().slice(0, 8)}@acme-robotics.example.com`;
  let password = 'Sturdy#Passw0rd';
  let primaryKey = '';
  let secondaryKey = '';
  let verificationLink = '';
  let totpSecret = '';
  let recoveryCodes: string[] = [];
  let shot = 0;

  /** A code of a later 30-second step: inside the allowed drift and never a replay of an earlier one. */
  // The server accepts a code once per 30 s step, and only a step later than the last one used (replay
  // guard), one step of drift either way. A fast run can come back within the same step: wait for the clock
  // to move on instead of sending a code the server must refuse.
  let lastStepUsed = 0;
  const laterCode = async () => {
    while (Math.floor(Date.now() / 30_000) + 1 <= lastStepUsed) await new Promise((r) => setTimeout(r, 250));
    const step = Math.floor(Date.now() / 30_000) + 1;
    lastStepUsed = step;
    return generate({ secret: totpSecret, epoch: step * 30 });
  };

  /**
   * The page as it is now, at desktop and phone width: a screenshot of each, the phone's document no
   * wider than its viewport, and no serious or critical axe-core violation at either width.
   */
  async function checkPage(name: string): Promise<void> {
    shot++;
    const base = path.join(SCREENSHOTS_DIR, `${String(shot).padStart(2, '0')}-${name}`);
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      await page.screenshot({ path: `${base}-${viewport.width}.png`, fullPage: true });
      const widths = await page.evaluate<{ doc: number; view: number }>('({ doc: document.documentElement.scrollWidth, view: window.innerWidth })');
      expect(widths.doc, `${name} at ${viewport.width} px scrolls sideways`).to.be.at.most(widths.view);
      if (!(await page.evaluate("'axe' in window"))) await page.evaluate(AXE_SOURCE);
      const found = await page.evaluate<Array<{ id: string; impact: string; nodes: string[] }>>(
        'axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")) })))',
      );
      const violations = found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.join(', ')}`);
      expect(violations, `${name} at ${viewport.width} px`).to.deep.equal([]);
    }
    await page.setViewportSize(DESKTOP);
  }

  const ruleMet = async (rule: string) => ((await page.getAttribute(`li[data-rule=${rule}]`, 'class')) ?? '').includes('ok');
  const mainText = async () => (await page.textContent('main')) ?? '';

  before(async () => {
    fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
    for (const f of fs.readdirSync(SCREENSHOTS_DIR)) if (f.endsWith('.png')) fs.rmSync(path.join(SCREENSHOTS_DIR, f));
    // The alert scheduler runs every 5 minutes in production; 300 ms lets the test see its pass.
    h = await startConsole('console-e2e', { USAGE_ALERT_INTERVAL_MS: '300', SUPPORT_EMAIL: 'help@liveness.example.com' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    // 4xx answers to a wrong code are intended and Chromium logs them as "Failed to load resource".
    page.on('console', (m) => m.type() === 'error' && !/status of 4\d\d/.test(m.text()) && browserErrors.push(m.text()));
    page.on('pageerror', (e) => browserErrors.push(e.message));
  });

  after(async () => {
    await browser?.close();
    await worker?.stop();
    await h?.stop();
  });

  it('opens the registration page from a marketplace link with the marketplace IDs filled in', async () => {
    const sub = h.subscribe('starter');
    const res = await page.goto(sub.url);
    expect(res?.status()).to.equal(200);
    expect(res?.headers()['content-security-policy'])
      .to.match(/default-src 'self'/)
      .and.not.match(/unsafe-inline/);
    expect(await page.textContent('#marketplace-account-id')).to.equal(sub.marketplaceAccountId);
    expect(await page.textContent('#subscription-id')).to.equal(sub.subscriptionId);
    expect(await page.textContent('.steps [aria-current=step]')).to.contain('Your details');
    await checkPage('registration');
  });

  it('validates the fields inline before sending', async () => {
    await page.fill('#website', 'http://acme');
    await page.locator('#website').blur();
    await page.fill('#email', 'not-an-email');
    await page.locator('#email').blur();
    expect(await page.textContent('#website-error')).to.contain('example.com');
    expect(await page.textContent('#email-error')).to.contain('name@company.com');
    await page.click('button[type=submit]');
    expect(page.url()).to.contain('/console/register?token='); // the script kept the invalid form here
    await checkPage('registration-inline-errors');
  });

  it('registers with a bare domain as the website (https:// is added) and sends a 24-hour link', async () => {
    await page.fill('#firstName', 'Ada');
    await page.fill('#lastName', 'Lovelace');
    await page.fill('#email', email);
    await page.fill('#company', 'Acme Robotics');
    await page.fill('#website', 'acme-robotics.example.com');
    await Promise.all([page.waitForURL('**/console/register/sent'), page.click('button[type=submit]')]);
    expect(await page.textContent('#sent-to')).to.equal(email);
    expect((await h.api.deps.accounts.getByEmail(email))!.website).to.equal('https://acme-robotics.example.com');
    await checkPage('check-inbox');
    const mail = await h.waitForMail(email, /Confirm your e-mail/);
    expect(mail.text).to.contain('24 hours');
    verificationLink = mail.links.find((l) => l.includes('/console/verify?token='))!;
    expect(verificationLink).to.be.a('string');
  });

  it('shows the message in the local-mode mailbox page too', async () => {
    await page.goto(`${h.base}/console/dev/mailbox`);
    expect(await page.textContent('main')).to.contain('Confirm your e-mail address');
    await checkPage('local-mailbox');
  });

  it('gives live feedback on the password rule, and says what is missing when a weak one is submitted', async () => {
    await page.goto(verificationLink);
    expect(page.url()).to.match(/\/console\/activate$/);
    await page.fill('#password', 'weakpass');
    expect(await ruleMet('lower')).to.equal(true);
    expect(await ruleMet('upper')).to.equal(false);
    await page.fill('#confirm', 'weakpass');
    await page.click('button[type=submit]');
    expect(page.url()).to.match(/\/console\/activate$/);
    expect(await page.textContent('#password-error'))
      .to.contain('upper-case letter')
      .and.contain('symbol');
    await checkPage('password-feedback');
    await page.fill('#password', password);
    for (const rule of ['length', 'upper', 'lower', 'digit', 'symbol']) expect(await ruleMet(rule), rule).to.equal(true);
    await page.fill('#confirm', password);
  });

  it('activates the account and shows both keys once; a reload says "already shown"', async () => {
    await Promise.all([page.waitForURL('**/console/activate/keys'), page.click('button[type=submit]')]);
    primaryKey = (await page.textContent('#primary-key'))!.trim();
    secondaryKey = (await page.textContent('#secondary-key'))!.trim();
    expect(primaryKey).to.match(/^lc_[A-Za-z0-9_-]{40,}$/);
    expect(secondaryKey)
      .to.match(/^lc_[A-Za-z0-9_-]{40,}$/)
      .and.not.equal(primaryKey);
    expect(await page.isVisible('button[data-copy="primary-key"]')).to.equal(true);
    expect(await page.isDisabled('#saved-continue')).to.equal(true);
    await checkPage('keys-shown-once');
    await page.reload();
    expect(await page.isVisible('#already-shown')).to.equal(true);
    expect(await page.content()).to.not.contain(primaryKey);
    await checkPage('keys-already-shown');
    const usage = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': primaryKey } });
    expect(usage.status).to.equal(200);
  });

  it('refuses the verification link a second time with a page that leads on', async () => {
    const again = await context.newPage();
    await again.goto(verificationLink);
    expect(await again.textContent('h1')).to.match(/already (used|active)/i);
    expect(await again.isVisible('main a[href="/console/sign-in"]')).to.equal(true);
    await again.close();
  });

  it('signs in with e-mail and password, then requires TOTP setup with a QR code and the secret', async () => {
    await page.goto(`${h.base}/console/sign-in`);
    await checkPage('sign-in');
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/console/two-factor/setup'), page.click('button[type=submit]')]);
    expect(await page.isVisible('.qr svg')).to.equal(true);
    await checkPage('totp-setup');
  });

  it('rejects a wrong code; the right one shows ten recovery codes once, then the first-visit dashboard', async () => {
    totpSecret = (await page.getAttribute('#totp-secret', 'data-secret'))!;
    await page.fill('#code', '000000' === (await generate({ secret: totpSecret })) ? '111111' : '000000');
    await page.click('button[type=submit]');
    expect(await page.textContent('#code-error')).to.contain('not valid');
    lastStepUsed = Math.floor(Date.now() / 30_000);
    await page.fill('#code', await generate({ secret: totpSecret }));
    await Promise.all([page.waitForURL('**/console/two-factor/recovery-codes'), page.click('button[type=submit]')]);
    recoveryCodes = await page.$$eval('#recovery-codes code', (els) => els.map((e) => e.textContent!.trim()));
    expect(recoveryCodes).to.have.length(10);
    expect(new Set(recoveryCodes).size).to.equal(10);
    const stored = (await h.api.deps.accounts.getByEmail(email))!.recoveryCodeHashes;
    expect(stored).to.have.length(10);
    for (const code of recoveryCodes) expect(stored.join(' ')).to.not.contain(code.replace('-', ''));
    await checkPage('recovery-codes-once');
    await page.reload();
    expect(await page.isVisible('#already-shown')).to.equal(true);
    expect(await page.content()).to.not.contain(recoveryCodes[0]!);
    await page.goto(`${h.base}/console/dashboard`);
    expect(await page.textContent('h1')).to.equal('Welcome, Ada');
    expect(await page.textContent('#plan-name')).to.equal('Starter');
    expect(await page.textContent('#recovery-left')).to.equal('10');
    expect(await mainText()).to.not.contain(primaryKey);
    // The quickstart builds the body in a file (any photo size) and names the key by its prefix.
    expect(await page.textContent('#qs-curl'))
      .to.contain(`X-API-Key: ${primaryKey.slice(0, 9)}…`)
      .and.contain('--data-binary @body.json');
    await checkPage('dashboard');
    const welcome = await h.waitForMail(email, /Welcome/);
    expect(welcome.text).to.contain('/console/dashboard');
  });

  it('regenerates a key after a confirmation step; a reload of the new-key page does not regenerate again', async () => {
    await page.click('nav >> text=API keys');
    expect(await page.textContent('[data-key-prefix=primary]')).to.equal(`${primaryKey.slice(0, 9)}…`);
    expect(await page.textContent('[data-key-last-used=primary]')).to.equal('never');
    expect(await page.content()).to.not.contain(primaryKey);
    await checkPage('keys');
    await page.click('#key-primary >> text=Regenerate');
    await checkPage('regenerate-confirm');
    await Promise.all([page.waitForURL('**/console/keys/primary/new'), page.click('button.btn-danger')]);
    const newKey = (await page.textContent('#new-key'))!.trim();
    expect(newKey).to.match(/^lc_/).and.not.equal(primaryKey);
    await checkPage('new-key-once');

    // The browser's reload of the page after the POST: a GET that finds the key gone, and the key still works.
    await page.reload();
    expect(await page.isVisible('#already-shown')).to.equal(true);
    expect(await page.content()).to.not.contain(newKey);
    await checkPage('new-key-already-shown');
    const audits = await h.api.deps.models.Audit.countDocuments({ action: 'key.regenerated' });
    expect(audits).to.equal(1);

    const old = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': primaryKey } });
    expect(old.status).to.equal(401);
    expect(old.body.error.code).to.equal('invalid_api_key');
    const fresh = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': newKey } });
    expect(fresh.status).to.equal(200);
    primaryKey = newKey;
  });

  it('confirms a plan change with the new price, the effect on this month and when it applies', async () => {
    await page.click('nav >> text=Plan & billing');
    await checkPage('plan');
    await page.click('tr[data-plan=standard] >> text=Upgrade…');
    expect(page.url()).to.contain('/console/plan/change?plan=standard');
    const text = await mainText();
    expect(text).to.contain('immediately').and.contain('$750 a month').and.contain('5,000 calls').and.contain("This month's credits");
    expect((await h.api.deps.accounts.getByEmail(email))!.plan).to.equal('starter'); // nothing happened yet
    await checkPage('plan-upgrade-confirm');
    // The console only asks; the marketplace's signed entitlement event applies the change (docs/billing.md).
    await Promise.all([page.waitForURL('**/console/plan#pending-change'), page.click('#confirm-plan')]);
    expect(await page.textContent('#pending-change'))
      .to.contain('Pending')
      .and.contain('Standard');
    expect((await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': secondaryKey } })).body.data).to.include({ plan: 'starter' });
    await checkPage('plan-pending');
    const account = (await h.api.deps.accounts.getByEmail(email))!;
    expect((await h.entitle(account.marketplace!.subscriptionId!, 'standard')).body.status).to.equal('applied');
    await page.goto(`${h.base}/console/plan`);
    expect(await page.isVisible('#pending-change')).to.equal(false);
    const usage = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': secondaryKey } });
    expect(usage.body.data).to.include({ plan: 'standard', monthly_limit: 5_000 });

    await page.click('tr[data-plan=starter] >> text=Downgrade…');
    const down = await mainText();
    expect(down)
      .to.match(/When: 1 [A-Z][a-z]+ \d{4}, 00:00 UTC/)
      .and.not.match(/1 \d{4}-\d{2}/);
    await checkPage('plan-downgrade-confirm');
    await page.click('text=Keep Standard');
    expect(page.url()).to.match(/\/console\/plan$/);
    expect(await page.isVisible('#scheduled-change')).to.equal(false);
  });

  it('switches the hard cap on at once, and off only after a confirmation that shows the overage price', async () => {
    expect(await page.getAttribute('#hard-cap-switch', 'aria-checked')).to.equal('false');
    await page.click('#hard-cap-switch');
    await page.waitForSelector('#hard-cap-switch[aria-checked="true"]');
    expect((await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': secondaryKey } })).body.data.hard_cap_enabled).to.equal(true);
    await checkPage('plan-hard-cap-on');
    await page.click('#hard-cap-switch');
    expect(page.url()).to.contain('/console/hard-cap/off');
    expect(await mainText()).to.contain('$0.15 per call');
    expect((await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': secondaryKey } })).body.data.hard_cap_enabled).to.equal(true);
    await checkPage('hard-cap-off-confirm');
    await Promise.all([page.waitForURL('**/console/plan'), page.click('button:has-text("Switch off")')]);
    expect((await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': secondaryKey } })).body.data.hard_cap_enabled).to.equal(false);
    await page.click('#hard-cap-switch');
    await page.waitForSelector('#hard-cap-switch[aria-checked="true"]');
  });

  it('turns usage alerts on under Security', async () => {
    await page.click('a:has-text("Security")');
    await checkPage('security');
    await Promise.all([page.waitForURL('**/console/security'), page.click('#alerts-toggle')]);
    expect(await page.textContent('#alerts-state')).to.equal('on');
  });

  it('mails a usage alert at 80 % when calls made through the API reach it, and counts calls per key', async () => {
    // An operator gives the account a 10-call enterprise contract (as `admin` would), so 80 % is 8 calls.
    const { accounts } = h.api.deps;
    const account = (await accounts.getByEmail(email))!;
    await accounts.changePlan(account._id, 'enterprise');
    await accounts.setMonthlyLimit(account._id, 10);
    worker = await startLivenessWorker({ config: h.config, log: quietLog, dbName: h.dbName });
    const image = (await portrait()).toString('base64');
    const keys = [primaryKey, primaryKey, primaryKey, primaryKey, primaryKey, secondaryKey, secondaryKey, secondaryKey];
    for (const key of keys) {
      const res = await http(h.api.port, '/v1/check/liveness', { method: 'POST', headers: { 'x-api-key': key }, json: { image, image_format: 'jpeg' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    const usage = await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': primaryKey } });
    expect(usage.body.data.total_calls).to.equal(8);
    const alert = await h.waitForMail(email, /80 % of this month's calls used/, 20_000);
    expect(alert.text).to.contain('8 of 10 included calls');
    await new Promise((r) => setTimeout(r, 1000)); // several scheduler passes: still one 80 % message
    expect(listMessages(h.mail.dir).filter((m) => m.to.includes(email) && /80 %/.test(m.subject))).to.have.length(1);

    await page.click('nav >> text=Overview');
    expect(await page.textContent('h1')).to.equal('Welcome, Ada'); // still the first signed-in visit
    expect(await page.textContent('#usage-calls')).to.equal('8');
    expect(await page.textContent('[data-key-calls=primary]')).to.equal('5 calls');
    expect(await page.textContent('[data-key-calls=secondary]')).to.equal('3 calls');
    await checkPage('dashboard-with-usage');
    await page.click('nav >> text=API keys');
    expect(await page.textContent('[data-key-last-used=primary]')).to.match(/UTC$/);
  });

  it("exports the daily usage as CSV with exactly the chart's numbers", async () => {
    await page.click('nav >> text=Overview');
    const chart = await page.$$eval('svg.chart-wide rect[data-day]', (bars) =>
      bars.map((b) => `${b.getAttribute('data-day')},${b.getAttribute('data-calls')}`),
    );
    const table = await page.$$eval('#daily-table tbody tr', (rows) =>
      rows.map((r) => `${r.querySelector('th')!.textContent},${r.querySelector('td')!.textContent}`),
    );
    const href = (await page.getAttribute('#csv-link', 'href'))!;
    const csv = await page.request.get(`${h.base}${href}`);
    expect(csv.headers()['content-type']).to.contain('text/csv');
    const lines = (await csv.text()).trim().split(/\r\n/);
    expect(lines[0]).to.equal('date,calls');
    expect(lines.slice(1)).to.deep.equal(chart);
    expect(table).to.deep.equal(chart);
    expect(lines.slice(1).reduce((a, l) => a + Number(l.split(',')[1]), 0)).to.equal(8);
  });

  it("runs the quickstart's commands verbatim (key filled in) with a photo over 100 KB", async () => {
    await page.click('nav >> text=Overview');
    const build = (await page.textContent('#qs-body'))!.trim();
    const call = (await page.textContent('#qs-curl'))!.trim().replace(`${primaryKey.slice(0, 9)}…`, primaryKey);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-quickstart-'));
    try {
      const photo = await sharp(await portrait())
        .resize(1600, 1200)
        .jpeg({ quality: 95 })
        .toBuffer();
      expect(photo.length).to.be.greaterThan(100 * 1024);
      fs.writeFileSync(path.join(dir, 'selfie.jpg'), photo);
      // Asynchronous: the API under test runs in this process and must keep answering while curl waits.
      await run('bash', ['-c', build], { cwd: dir });
      const answer = JSON.parse((await run('bash', ['-c', call], { cwd: dir, encoding: 'utf8' })).stdout) as { data?: { isFakeLikelihood?: number } };
      expect(answer.data?.isFakeLikelihood, JSON.stringify(answer)).to.be.a('number');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('creates an emotion API token shown once; a reload does not create a second; names are unique; revoke asks first', async () => {
    await page.click('nav >> text=Emotion API');
    expect(await page.textContent('#emotion-calls')).to.equal('0');
    await page.fill('#token-name', 'call-center-prod');
    await Promise.all([page.waitForURL('**/console/emotion/tokens/new'), page.click('button:has-text("Create token")')]);
    const token = (await page.textContent('#new-token'))!.trim();
    expect(token.length).to.be.greaterThan(30);
    await checkPage('emotion-token-once');
    await page.reload();
    expect(await page.isVisible('#already-shown')).to.equal(true);
    expect(await page.content()).to.not.contain(token);
    await page.goto(`${h.base}/console/emotion`);
    expect(await page.$$('tr[data-token-id]')).to.have.length(1);
    await page.fill('#token-name', 'call-center-prod');
    await page.click('button:has-text("Create token")');
    expect(await page.textContent('#token-name-error')).to.contain('already have a token named');
    expect(await page.$$('tr[data-token-id]')).to.have.length(1);
    await checkPage('emotion-tokens');
    await page.click('text=Revoke…');
    expect(await page.textContent('h1')).to.equal('Revoke the token “call-center-prod”?');
    await checkPage('revoke-confirm');
    await Promise.all([page.waitForURL('**/console/emotion'), page.click('button.btn-danger')]);
    expect(await page.textContent('.alert-success')).to.contain('Token “call-center-prod” is revoked');
    expect(await mainText()).to.contain('Revoked');
  });

  it('changes the password with the current password and a TOTP code', async () => {
    await page.click('a:has-text("Security")');
    const newPassword = 'Another#Passw0rd2';
    await page.fill('#current', password);
    await page.fill('#password', newPassword);
    await page.fill('#confirm', newPassword);
    await page.fill('#sec-code', await laterCode());
    await Promise.all([page.waitForURL('**/console/security'), page.click('button:has-text("Change password")')]);
    expect(await page.textContent('.alert-success')).to.contain('password is changed');
    password = newPassword;
    await page.click('nav >> text=Activity');
    const actions = await page.$$eval('#audit-list li', (lis) => lis.map((li) => li.getAttribute('data-action')));
    expect(actions).to.include.members([
      'console.sign_in',
      'key.regenerated',
      'hard_cap.on',
      'hard_cap.off',
      'plan.upgraded',
      'console.password_changed',
      'emotion_token.revoked',
    ]);
    await checkPage('activity');
  });

  it('signs in with the new password and a recovery code, which is then spent', async () => {
    await Promise.all([page.waitForURL('**/console/sign-in'), page.click('button:has-text("Sign out")')]);
    await page.goto(`${h.base}/console/dashboard`);
    expect(page.url()).to.match(/\/console\/sign-in$/);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/console/sign-in/two-factor'), page.click('button[type=submit]')]);
    await page.click('text=Lost your phone? Use a recovery code');
    await checkPage('totp-challenge');
    await page.fill('#recovery-code', recoveryCodes[0]!);
    await Promise.all([page.waitForURL('**/console/dashboard'), page.click('button:has-text("Sign in with a recovery code")')]);
    expect(await page.textContent('#recovery-left')).to.equal('9');
    expect(await page.textContent('h1')).to.equal('Welcome back, Ada');

    await Promise.all([page.waitForURL('**/console/sign-in'), page.click('button:has-text("Sign out")')]);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/console/sign-in/two-factor'), page.click('button[type=submit]')]);
    await page.click('text=Lost your phone? Use a recovery code');
    await page.fill('#recovery-code', recoveryCodes[0]!);
    await page.click('button:has-text("Sign in with a recovery code")');
    expect(await page.textContent('.alert-error, .error-text')).to.contain('not valid or was already used');
    expect(page.url()).to.match(/two-factor$/);
  });

  it('resets a forgotten password through the e-mailed link (once), with the same answer for unknown addresses', async () => {
    await page.click('button:has-text("Use another account")');
    await page.click('#forgot-link');
    await checkPage('forgot-password');
    await page.fill('#email', `nobody-${randomUUID().slice(0, 6)}@example.com`);
    await Promise.all([page.waitForURL('**/console/forgot-password/sent'), page.click('button[type=submit]')]);
    const unknownAnswer = (await page.textContent('main'))!.replace(/nobody-\S+@example\.com/, 'ADDRESS');
    await page.goto(`${h.base}/console/forgot-password`);
    await page.fill('#email', email);
    await Promise.all([page.waitForURL('**/console/forgot-password/sent'), page.click('button[type=submit]')]);
    expect((await page.textContent('main'))!.replace(email, 'ADDRESS')).to.equal(unknownAnswer);
    await checkPage('forgot-password-sent');
    const mail = await h.waitForMail(email, /Reset your/);
    expect(mail.text).to.contain('60 minutes');
    const link = mail.links.find((l) => l.includes('/console/reset-password?token='))!;
    await page.goto(link);
    await checkPage('reset-password');
    const resetTo = 'Third#Passw0rd3';
    await page.fill('#password', resetTo);
    await page.fill('#confirm', resetTo);
    await Promise.all([page.waitForURL('**/console/sign-in'), page.click('button[type=submit]')]);
    expect(await page.textContent('.alert-success')).to.contain('every session was signed out');
    password = resetTo;
    await page.goto(link);
    expect(await page.textContent('h1')).to.equal('This reset link was already used');
    await checkPage('reset-link-used');

    await page.goto(`${h.base}/console/sign-in`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/console/sign-in/two-factor'), page.click('button[type=submit]')]);
    await page.fill('#code', await laterCode());
    await Promise.all([page.waitForURL('**/console/dashboard'), page.click('button[type=submit]')]);
  });

  it('raised no script or CSP errors in the browser', () => {
    expect(browserErrors).to.deep.equal([]);
  });
});
