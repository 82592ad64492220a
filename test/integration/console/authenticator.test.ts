// Issue 29's "TOTP reset" from the console: Security → "Replace authenticator app" → (step-up, see
// test/integration/security/step-up.test.ts) → a new secret, confirmed only by a code from it. Until then the
// old app keeps working; on confirmation the new one replaces it, every other session ends, ten new recovery
// codes are shown once, and the owner gets a mail.
import { expect } from 'chai';
import { generate } from 'otplib';
import { TotpService } from '../../../api/console/auth/totp';
import { FormClient, fullySignedIn, secretOf, signIn, startConsole, type ConsoleHarness, type Page, type SignedIn } from './harness';

describe('Replacing the authenticator app (POST /console/security/authenticator)', function () {
  this.timeout(240_000);
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole('authenticator');
  });
  after(async () => h?.stop());

  const totp = () => new TotpService(h.config.APP_SECRET!, h.api.deps.redis, h.config.QUEUE_PREFIX);
  const secretNow = async (user: SignedIn) => {
    const account = (await h.api.deps.accounts.get(user.customerId))!;
    return totp().openSecret(account.totpSecretEnc!, account._id);
  };

  async function startReplacing(user: SignedIn): Promise<Page> {
    const page = await user.client.submit(await user.client.open('/console/security'), '/console/security/authenticator', {});
    expect(page.url).to.match(/\/console\/security\/authenticator$/);
    return page;
  }

  /** A second browser signing in with the password and a code from `secret`: the page it ends on. */
  async function signInElsewhere(user: SignedIn, secret: string): Promise<{ client: FormClient; page: Page }> {
    const client = new FormClient(h.base);
    const challenge = await signIn(client, user.email, user.password);
    const page = await client.submit(challenge, '/console/sign-in/two-factor', { code: await user.totp.laterCode(secret) });
    return { client, page };
  }

  it('shows a new secret (QR code and key); a wrong code, even a valid one of the current app, keeps the current app', async () => {
    const user = await fullySignedIn(h);
    const before = await secretNow(user);
    const page = await startReplacing(user);
    const fresh = secretOf(page);
    expect(fresh).to.not.equal(before);
    expect(page.html).to.contain('<svg').and.contain('id="confirm-authenticator"');

    const wrong = await user.client.submit(page, '/console/security/authenticator/confirm', { code: await generate({ secret: before }) }, false);
    expect(wrong.status).to.equal(400);
    expect(wrong.html).to.contain('not valid for the new app');
    expect(secretOf(wrong), 'the same new secret is offered again').to.equal(fresh);
    expect(await secretNow(user)).to.equal(before);
    const failed = await h.api.deps.models.Audit.findOne({ customerId: user.customerId, action: 'console.two_factor_failed' }).lean();
    expect(failed?.detail).to.deep.equal({ kind: 'new_authenticator' });

    const elsewhere = await signInElsewhere(user, before);
    expect(elsewhere.page.url, 'the current app still signs in').to.match(/\/console\/dashboard$/);
  });

  it('a code from the new secret replaces it: other sessions end, ten new recovery codes are shown once, audit entry and mail', async () => {
    const user = await fullySignedIn(h);
    const old = await secretNow(user);
    const other = await signInElsewhere(user, old);
    expect(other.page.url).to.match(/\/console\/dashboard$/);
    const page = await startReplacing(user);
    const fresh = secretOf(page);

    const done = await user.client.submit(page, '/console/security/authenticator/confirm', { code: await user.totp.laterCode(fresh) });
    expect(done.url).to.match(/\/console\/security\/recovery-codes$/);
    const codes = [...done.html.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/gi)].map((m) => m[1]);
    expect(codes).to.have.length(10);
    expect((await user.client.open('/console/security/recovery-codes')).html, 'shown once').to.contain('id="already-shown"');

    expect(await secretNow(user)).to.equal(fresh);
    expect((await user.client.open('/console/dashboard')).url, 'this session lives on').to.match(/\/console\/dashboard$/);
    expect((await other.client.open('/console/dashboard')).url, 'the other session ended').to.match(/\/console\/sign-in$/);
    expect(await h.api.deps.models.Audit.countDocuments({ customerId: user.customerId, action: 'console.authenticator_replaced' })).to.equal(1);
    const mail = await h.waitForMail(user.email, /authenticator app was replaced/);
    expect(mail.text).to.contain('every other signed-in session was ended');

    const oldApp = new FormClient(h.base);
    const challenge = await signIn(oldApp, user.email, user.password);
    const refused = await oldApp.submit(challenge, '/console/sign-in/two-factor', { code: await user.totp.laterCode(old) }, false);
    expect(refused.status, 'the old app no longer signs in').to.equal(400);
  });
});
