// Issue 41, console wording and small screens: at 390 px a long e-mail address ran past its card on the pages
// that name it (check your inbox, the password reset, the two-factor pages). In Debian's chromium, at phone
// width, each of them is walked with an address of 100 characters without a break, and no card is wider inside
// than it is (scrollWidth <= clientWidth); screenshots under test-artifacts/console/small-*.png.
import { expect } from 'chai';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { cardsOverflowing, launchChromium, PHONE, SCREENSHOTS_DIR } from '../../support/browser';
import { TotpSteps } from '../../support/totp';
import { startConsole, type ConsoleHarness } from '../../integration/console/harness';

describe('Console at 390 px: long e-mail addresses stay inside their cards', function () {
  this.timeout(240_000);
  let h: ConsoleHarness;
  let browser: Browser;
  let page: Page;
  // 100 characters, no space or hyphen to break at.
  const email = `ada.lovelace.analytical.engine.${randomUUID().slice(0, 8)}@research.computinghistorysociety.example.com`;
  const password = 'Sturdy#Passw0rd';
  const steps = new TotpSteps();
  let secret = '';

  before(async () => {
    h = await startConsole('small-screens');
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: PHONE })).newPage();
    page.setDefaultTimeout(60_000);
  });
  after(async () => {
    await browser?.close();
    await h?.stop();
  });

  /** The page at 390 px: a screenshot, and no card whose content is wider than the card. */
  async function expectNoCardOverflow(name: string): Promise<void> {
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, `small-${name}-390.png`), fullPage: true });
    expect(await page.textContent('main')).to.contain(email);
    expect(await cardsOverflowing(page), name).to.deep.equal([]);
  }

  it('check your inbox', async () => {
    await page.goto(h.subscribe('starter').url);
    await page.fill('#firstName', 'Ada');
    await page.fill('#lastName', 'Lovelace');
    await page.fill('#email', email);
    await page.fill('#company', 'Analytical Engines');
    await page.fill('#website', 'engines.example.com');
    await Promise.all([page.waitForURL('**/console/register/sent'), page.click('button[type=submit]')]);
    await expectNoCardOverflow('check-inbox');
  });

  it('two-factor setup and the two-factor sign-in', async () => {
    const mail = await h.waitForMail(email, /Confirm/);
    await page.goto(mail.links.find((l) => l.includes('/console/verify?token='))!);
    await page.fill('#password', password);
    await page.fill('#confirm', password);
    await Promise.all([page.waitForURL('**/console/activate/keys'), page.click('button[type=submit]')]);
    await page.goto(`${h.base}/console/sign-in`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/console/two-factor/setup'), page.click('button[type=submit]')]);
    await expectNoCardOverflow('two-factor-setup');
    secret = (await page.getAttribute('#totp-secret', 'data-secret'))!;
    await page.fill('#code', await steps.laterCode(secret));
    await Promise.all([page.waitForURL('**/console/two-factor/recovery-codes'), page.click('button[type=submit]')]);
    await page.goto(`${h.base}/console/dashboard`);
    await Promise.all([page.waitForURL('**/console/sign-in'), page.click('button:has-text("Sign out")')]);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/console/sign-in/two-factor'), page.click('button[type=submit]')]);
    await expectNoCardOverflow('two-factor-sign-in');
  });

  it('password reset: the link sent, and the page that sets the new password', async () => {
    await page.goto(`${h.base}/console/forgot-password`);
    await page.fill('#email', email);
    await Promise.all([page.waitForURL('**/console/forgot-password/sent'), page.click('button[type=submit]')]);
    await expectNoCardOverflow('reset-sent');
    const mail = await h.waitForMail(email, /password/i);
    await page.goto(mail.links.find((l) => l.includes('/console/reset-password'))!);
    await expectNoCardOverflow('reset-password');
  });
});
