// The console in a real browser (Debian's chromium via playwright-core), through the whole customer
// path: marketplace link → registration → verification mail → password → keys shown once → sign in →
// TOTP setup with recovery codes → dashboard → keys, plan, hard cap, usage (driven through the API
// with a real worker), usage alerts, CSV, emotion tokens → security (password change, recovery codes, replacing
// the authenticator app) → forgot password by e-mail, with issue 29's findings 7–14 checked by name where they show. Every page is
// checked at 1280 px and 390 px (checkBothWidths): screenshots under test-artifacts/console/, no sideways
// scroll, the top navigation on one row at 1280 px, and no serious or critical axe-core finding.
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
import { TotpSteps } from '../../support/totp';
import { checkBothWidths, DESKTOP, launchChromium, PHONE, SCREENSHOTS_DIR } from '../../support/browser';
import { contractFetch } from '../../support/openapi';
import { createLivenessClient } from '../../../clients/typescript/src';
import { quietLog } from '../../support/config';
import { portrait } from '../../../dev/harness/sample-images';
import { startLivenessWorker } from '../../../workers/liveness/worker';
import type { RunningWorker } from '../../../workers/runtime/worker-process';
import { startConsole, type ConsoleHarness } from '../../integration/console/harness';
import { listMessages } from '../../../shared/mail/mailbox';
import { ANALYSIS_PATH } from '../../../shared/contracts/http/emotion';

const run = promisify(execFile);

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
  let registrationLink = '';
  let totpSecret = '';
  let recoveryCodes: string[] = [];
  let shot = 0;

  /** The liveness API as a customer calls it with the keys the console showed: the typed client (clients/typescript). */
  const liveness = (apiKey: string) => createLivenessClient({ baseUrl: `http://127.0.0.1:${h.api.port}`, apiKey, fetch: contractFetch });

  /** The account's TOTP codes, each of a step the server accepts and has not seen (test/support/totp.ts). */
  const steps = new TotpSteps();
  const laterCode = (secret = totpSecret) => steps.laterCode(secret);

  /** The page as it is now at 1280 and 390 px (see checkBothWidths), its screenshots numbered in walk order. */
  async function checkPage(name: string, p: Page = page): Promise<void> {
    shot++;
    await checkBothWidths(p, `${String(shot).padStart(2, '0')}-${name}`);
  }

  /** `fn` evaluated with the page at phone width (then back at desktop width). */
  async function atPhone<T>(fn: () => Promise<T>): Promise<T> {
    await page.setViewportSize(PHONE);
    try {
      return await fn();
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  }

  /** Whether the page's card footer offers a "Sign in" link (it must not once past the password). */
  const footerSignIn = () => page.isVisible('.auth-foot a[href="/console/sign-in"]');

  /** The recovery codes' download button saves exactly the codes shown, one a line. */
  async function downloadedCodes(): Promise<string[]> {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#codes-download')]);
    expect(download.suggestedFilename()).to.equal('liveness-api-recovery-codes.txt');
    const text = fs.readFileSync(await download.path(), 'utf8');
    return text.split('\n').filter((l) => /^[a-z0-9]{5}-[a-z0-9]{5}$/i.test(l.trim()));
  }

  const ruleMet = async (rule: string) => ((await page.getAttribute(`li[data-rule=${rule}]`, 'class')) ?? '').includes('ok');
  const mainText = async () => (await page.textContent('main')) ?? '';

  before(async () => {
    fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
    // Only this walk's numbered screenshots: the try-it suite keeps its own (try-*) in the same folder.
    for (const f of fs.readdirSync(SCREENSHOTS_DIR)) if (/^\d\d-.*\.png$/.test(f)) fs.rmSync(path.join(SCREENSHOTS_DIR, f));
    // The alert scheduler runs every 5 minutes in production; 300 ms lets the test see its pass.
    // The emotion front-end is not started here: its public address is set as a deployment would set it.
    h = await startConsole('console-e2e', {
      USAGE_ALERT_INTERVAL_MS: '300',
      SUPPORT_EMAIL: 'help@liveness.example.com',
      EMOTION_PUBLIC_BASE_URL: 'https://emotion.acme-liveness.example.com/',
    });
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
    registrationLink = sub.url;
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

  it('lists the marketplace IDs label above value on a phone, the subscription ID on at most two lines', async () => {
    const layout = await atPhone(() =>
      page.evaluate<{ columns: string; lines: number }>(`(() => {
        const dd = document.getElementById('subscription-id');
        const style = getComputedStyle(dd);
        return { columns: getComputedStyle(dd.parentElement).gridTemplateColumns, lines: Math.round(dd.getBoundingClientRect().height / parseFloat(style.lineHeight)) };
      })()`),
    );
    expect(layout.columns.split(' '), 'one column: the phone rule applies').to.have.length(1);
    expect(layout.lines).to.be.at.most(2);
  });

  it('answers a registration link that is not valid with a page that leads on', async () => {
    const other = await context.newPage();
    const res = await other.goto(`${h.base}/console/register?token=not-a-token`);
    expect(res?.status()).to.be.within(400, 499);
    expect(await other.textContent('h1')).to.contain('not valid');
    await checkPage('registration-link-invalid', other);
    await other.goto(`${h.base}/console/no-such-page`);
    await checkPage('not-found', other);
    await other.close();
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
    const usage = await liveness(primaryKey).getUsage();
    expect(usage.error, usage.error?.message).to.equal(undefined);
  });

  it('refuses the verification link a second time with a page that leads on', async () => {
    const again = await context.newPage();
    await again.goto(verificationLink);
    expect(await again.textContent('h1')).to.match(/already (used|active)/i);
    expect(await again.isVisible('main a[href="/console/sign-in"]')).to.equal(true);
    await checkPage('verification-link-used', again);
    await again.goto(registrationLink);
    expect(await again.textContent('h1')).to.equal('This subscription is already registered.');
    await checkPage('registration-link-used', again);
    await again.goto(`${h.base}/console/verify/resend`);
    await checkPage('verification-resend', again);
    await again.fill('#email', email);
    await again.click('button[type=submit]');
    await again.waitForSelector('h1:has-text("Check your inbox")');
    await checkPage('verification-resend-sent', again);
    await again.close();
  });

  it('signs in with e-mail and password, then requires TOTP setup with a QR code and the secret', async () => {
    await page.goto(`${h.base}/console/sign-in`);
    await checkPage('sign-in');
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/console/two-factor/setup'), page.click('button[type=submit]')]);
    expect(await page.isVisible('.qr svg')).to.equal(true);
    // The manual key wraps between its groups of four on a phone, never inside one.
    const groups = await atPhone(() => page.$$eval('#totp-secret .group', (els) => els.map((e) => e.getClientRects().length)));
    expect(groups.length).to.be.greaterThan(4);
    expect(groups.every((n) => n === 1)).to.equal(true);
    expect(await footerSignIn()).to.equal(false);
    await checkPage('totp-setup');
  });

  it('rejects a wrong code; the right one shows ten recovery codes once, then the first-visit dashboard', async () => {
    totpSecret = (await page.getAttribute('#totp-secret', 'data-secret'))!;
    await page.fill('#code', '000000' === (await generate({ secret: totpSecret })) ? '111111' : '000000');
    await page.click('button[type=submit]');
    expect(await page.textContent('#code-error')).to.contain('not valid');
    await checkPage('totp-setup-wrong-code');
    await page.fill('#code', await laterCode());
    await Promise.all([page.waitForURL('**/console/two-factor/recovery-codes'), page.click('button[type=submit]')]);
    recoveryCodes = await page.$$eval('#recovery-codes code', (els) => els.map((e) => e.textContent!.trim()));
    expect(recoveryCodes).to.have.length(10);
    expect(new Set(recoveryCodes).size).to.equal(10);
    const stored = (await h.api.deps.accounts.getByEmail(email))!.recoveryCodeHashes;
    expect(stored).to.have.length(10);
    for (const code of recoveryCodes) expect(stored.join(' ')).to.not.contain(code.replace('-', ''));
    expect(await downloadedCodes()).to.deep.equal(recoveryCodes);
    expect(await page.isVisible('#codes-print')).to.equal(true);
    expect(await footerSignIn()).to.equal(false);
    await checkPage('recovery-codes-once');
    // What the Print button prints: the codes without the page's buttons and footer.
    await page.emulateMedia({ media: 'print' });
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, `${String(shot).padStart(2, '0')}-recovery-codes-print.png`), fullPage: true });
    expect(await page.isVisible('#recovery-codes')).to.equal(true);
    expect(await page.isVisible('#codes-continue')).to.equal(false);
    expect(await page.isVisible('.auth-foot')).to.equal(false);
    await page.emulateMedia({ media: 'screen' });
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
    expect(await page.textContent('#qs-body'), 'portable base64 (macOS has no -w0)')
      .to.contain("base64 < selfie.jpg | tr -d '\\n'")
      .and.not.contain('-w0');
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

    const old = await liveness(primaryKey).getUsage();
    expect(old.error).to.include({ status: 401, code: 'invalid_api_key' });
    const fresh = await liveness(newKey).getUsage();
    expect(fresh.error, fresh.error?.message).to.equal(undefined);
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
    expect((await liveness(secondaryKey).getUsage()).data?.data).to.include({ plan: 'starter' });
    await checkPage('plan-pending');
    const account = (await h.api.deps.accounts.getByEmail(email))!;
    expect((await h.entitle(account.marketplace!.subscriptionId!, 'standard')).body.status).to.equal('applied');
    await page.goto(`${h.base}/console/plan`);
    expect(await page.isVisible('#pending-change')).to.equal(false);
    const usage = await liveness(secondaryKey).getUsage();
    expect(usage.data?.data).to.include({ plan: 'standard', monthly_limit: 5_000 });

    await page.click('tr[data-plan=starter] >> text=Downgrade…');
    const down = await mainText();
    expect(down)
      .to.match(/When: 1 [A-Z][a-z]{2} \d{4}, 00:00 UTC/)
      .and.not.match(/1 \d{4}-\d{2}/);
    await checkPage('plan-downgrade-confirm');
    await page.click('text=Keep Standard');
    expect(page.url()).to.match(/\/console\/plan$/);
    expect(await page.isVisible('#scheduled-change')).to.equal(false);
  });

  it('shows a scheduled downgrade below the sticky top bar, with its Withdraw button in reach', async () => {
    await page.click('tr[data-plan=starter] >> text=Downgrade…');
    await Promise.all([page.waitForURL('**/console/plan#pending-change'), page.click('#confirm-plan')]);
    // The marketplace confirms the downgrade; it is then scheduled for the 1st (docs/billing.md).
    const account = (await h.api.deps.accounts.getByEmail(email))!;
    expect((await h.entitle(account.marketplace!.subscriptionId!, 'starter')).body.status).to.equal('applied');
    await page.goto(`${h.base}/console/plan`); // a full load (the hash alone would not reload the page)
    await page.goto(`${h.base}/console/plan#scheduled-change`);
    expect(await page.textContent('#scheduled-change')).to.match(/Scheduled\. Your plan changes to Starter on 1 [A-Z][a-z]{2} \d{4}, 00:00 UTC/);
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      await page.goto(page.url()); // arrives at the notice as the redirect did, at this width
      // Nothing covers the notice: the top bar ends above it, and the Withdraw button is what a tap there hits.
      const seen = await page.evaluate<{ barBottom: number; noticeTop: number; hit: boolean }>(`(() => {
        const bar = document.querySelector('.topbar').getBoundingClientRect();
        const notice = document.getElementById('scheduled-change').getBoundingClientRect();
        const button = document.querySelector('#scheduled-change button').getBoundingClientRect();
        const hit = document.elementFromPoint(button.left + button.width / 2, button.top + button.height / 2);
        return { barBottom: bar.bottom, noticeTop: notice.top, hit: !!hit && hit.closest('#scheduled-change button') !== null };
      })()`);
      expect(seen.noticeTop, `${viewport.width} px`).to.be.at.least(seen.barBottom);
      expect(seen.hit, `${viewport.width} px: the Withdraw button is not covered`).to.equal(true);
      await page.screenshot({
        path: path.join(SCREENSHOTS_DIR, `${String(shot + 1).padStart(2, '0')}-plan-downgrade-scheduled-at-notice-${viewport.width}.png`),
      });
    }
    await page.setViewportSize(DESKTOP);
    await checkPage('plan-downgrade-scheduled');
    // Withdrawing is a request too: the downgrade stays scheduled until the marketplace confirms Standard continues.
    await Promise.all([page.waitForURL('**/console/plan#pending-change'), page.click('#scheduled-change button')]);
    expect(await page.textContent('#pending-change')).to.contain('withdrawing the scheduled change');
    expect(await page.isVisible('#scheduled-change')).to.equal(true);
    await checkPage('plan-withdrawal-pending');
    expect((await h.entitle(account.marketplace!.subscriptionId!, 'standard')).body.status).to.equal('applied');
    await page.goto(`${h.base}/console/plan`);
    expect(await page.isVisible('#scheduled-change')).to.equal(false);
    expect(await page.isVisible('#pending-change')).to.equal(false);
  });

  it('switches the hard cap on at once, and off only after a confirmation that shows the overage price, as the page says', async () => {
    expect(await page.textContent('.page-head')).to.contain('switching the hard cap off ask you to confirm first; switching the hard cap on applies at once');
    expect(await page.getAttribute('#hard-cap-switch', 'aria-checked')).to.equal('false');
    await page.click('#hard-cap-switch');
    await page.waitForSelector('#hard-cap-switch[aria-checked="true"]');
    expect((await liveness(secondaryKey).getUsage()).data?.data.hard_cap_enabled).to.equal(true);
    await checkPage('plan-hard-cap-on');
    await page.click('#hard-cap-switch');
    expect(page.url()).to.contain('/console/hard-cap/off');
    expect(await mainText()).to.contain('$0.15 per call');
    expect((await liveness(secondaryKey).getUsage()).data?.data.hard_cap_enabled).to.equal(true);
    await checkPage('hard-cap-off-confirm');
    await Promise.all([page.waitForURL('**/console/plan'), page.click('button:has-text("Switch off")')]);
    expect((await liveness(secondaryKey).getUsage()).data?.data.hard_cap_enabled).to.equal(false);
    await page.click('#hard-cap-switch');
    await page.waitForSelector('#hard-cap-switch[aria-checked="true"]');
  });

  it('turns usage alerts on under Security, which says when the password was set', async () => {
    await page.click('a:has-text("Security")');
    expect(await page.textContent('#password-set')).to.match(/^Set at activation, \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC\./);
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
      const res = await liveness(key).checkLiveness({ image, image_format: 'jpeg' });
      expect(res.error, res.error?.message).to.equal(undefined);
    }
    const usage = await liveness(primaryKey).getUsage();
    expect(usage.data?.data.total_calls).to.equal(8);
    const alert = await h.waitForMail(email, /80 % of this month's calls used/, 20_000);
    expect(alert.text)
      .to.match(/8 of 10 included calls for [A-Z][a-z]+ \d{4} /)
      .and.not.match(/\d{4}-\d\d-\d\d/); // the console's one date style, in mails too
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
      rows.map((r) => `${r.querySelector('th time')!.getAttribute('datetime')},${r.querySelector('td')!.textContent}`),
    );
    // Shown in the console's one date style ("5 Nov 2026"); the machine-readable date stays in the markup.
    const shown = await page.$$eval('#daily-table tbody th', (ths) => ths.map((t) => t.textContent!.trim()));
    for (const d of shown) expect(d).to.match(/^\d{1,2} [A-Z][a-z]{2} \d{4}$/);
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
    // How to call it: the address (EMOTION_PUBLIC_BASE_URL, its trailing slash dropped), the Bearer header, a curl line.
    expect(await page.textContent('#emotion-endpoint')).to.equal(`POST https://emotion.acme-liveness.example.com${ANALYSIS_PATH}`);
    expect(await page.textContent('#emotion-curl'))
      .to.contain('-H "Authorization: Bearer YOUR_TOKEN"')
      .and.contain('-H "Content-Type: audio/wav"')
      .and.contain('--data-binary @speech.wav');
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
    expect(await page.textContent('#password-set')).to.match(/^Last changed \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC\./);
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

  it('makes ten new recovery codes under Security with a TOTP code, shown once, to download or print', async () => {
    await page.click('a:has-text("Security")');
    await page.fill('#rc-code', await laterCode());
    await Promise.all([page.waitForURL('**/console/security/recovery-codes'), page.click('button:has-text("Make ten new codes")')]);
    const fresh = await page.$$eval('#recovery-codes code', (els) => els.map((e) => e.textContent!.trim()));
    expect(fresh).to.have.length(10);
    expect(fresh).to.not.include(recoveryCodes[0]);
    expect(await downloadedCodes()).to.deep.equal(fresh);
    await checkPage('security-recovery-codes-once');
    await page.reload();
    expect(await page.isVisible('#already-shown')).to.equal(true);
    await checkPage('security-recovery-codes-already-shown');
    recoveryCodes = fresh;
  });

  it('replaces the authenticator app under Security: the new key, the old app refused there, a code from the new one, new recovery codes once', async () => {
    await page.click('a:has-text("Security")');
    await Promise.all([page.waitForURL('**/console/security/authenticator'), page.click('#replace-authenticator-start')]);
    if (await page.isVisible('#step-up')) {
      // A slow run: more than 10 minutes since the password change (the last proof), so the prompt comes first.
      await page.fill('#step-up-password', password);
      await Promise.all([page.waitForURL('**/console/security/authenticator'), page.click('#step-up-confirm')]);
    }
    const fresh = (await page.getAttribute('#totp-secret', 'data-secret'))!;
    expect(fresh).to.match(/^[A-Z2-7]+$/);
    expect(fresh).to.not.equal(totpSecret);
    await checkPage('security-replace-authenticator');
    // The current app's code confirms nothing here: only the new app's does.
    await page.fill('#code', await generate({ secret: totpSecret }));
    await Promise.all([page.waitForURL('**/console/security/authenticator/confirm'), page.click('#confirm-authenticator')]);
    expect(await page.textContent('#code-error')).to.contain('not valid for the new app');
    expect(await page.getAttribute('#totp-secret', 'data-secret')).to.equal(fresh);
    await checkPage('security-replace-authenticator-refused');
    await page.fill('#code', await laterCode(fresh));
    await Promise.all([page.waitForURL('**/console/security/recovery-codes'), page.click('#confirm-authenticator')]);
    const codes = await page.$$eval('#recovery-codes code', (els) => els.map((e) => e.textContent!.trim()));
    expect(codes).to.have.length(10);
    expect(codes).to.not.include(recoveryCodes[0]);
    await checkPage('security-authenticator-replaced-codes');
    totpSecret = fresh;
    recoveryCodes = codes;
    expect((await h.waitForMail(email, /authenticator app was replaced/)).text).to.contain('codes from the previous app no longer work');
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
    expect(page.url()).to.match(/two-factor$/);
    // The answer sits under the recovery-code field, which keeps what was typed; the 6-digit field is untouched.
    expect(await page.textContent('#recovery-code-error')).to.contain('not valid or was already used');
    expect(await page.inputValue('#recovery-code')).to.equal(recoveryCodes[0]);
    expect(await page.getAttribute('#recovery-code', 'aria-invalid')).to.equal('true');
    expect(await page.getAttribute('#code', 'aria-invalid')).to.equal('false');
    expect(await page.textContent('#code-error')).to.equal('');
    expect(await footerSignIn()).to.equal(false);
    await checkPage('recovery-code-refused');
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

  it('lists the refused two-factor code and the refused recovery code in Activity', async () => {
    await page.click('nav >> text=Activity');
    const failed = await page.$$eval('#audit-list li[data-action="console.two_factor_failed"]', (lis) => lis.map((li) => li.textContent!));
    expect(failed.some((t) => t.includes('A wrong two-factor code was refused'))).to.equal(true);
    expect(failed.some((t) => t.includes('A recovery code that is not valid or was already used was refused'))).to.equal(true);
    await checkPage('activity-refused-codes');
  });

  it('raised no script or CSP errors in the browser', () => {
    expect(browserErrors).to.deep.equal([]);
  });
});
