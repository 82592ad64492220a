// Issue 29, finding 4: regenerating a key, creating an emotion token, switching the hard cap off and changing
// the plan needed no fresh proof of identity: a stolen session cookie was enough. Each now asks for the
// password or a TOTP code unless one was given in the last 10 minutes (signing in is one); so do cancelling
// and replacing the authenticator app (the "TOTP reset"), whose new key is not shown without one.
import { expect } from 'chai';
import { STEP_UP_WINDOW_MS } from '../../../api/console/auth/step-up';
import { TotpService } from '../../../api/console/auth/totp';
import { fullySignedIn, startConsole, type ConsoleHarness, type Onboarded, type Page, type SignedIn } from '../console/harness';

describe('Step-up for sensitive console actions (issue 29, finding 4)', function () {
  this.timeout(240_000);
  let h: ConsoleHarness;
  /** The console's clock runs this far ahead of the wall clock: "later" without waiting. */
  let ahead = 0;

  before(async () => {
    h = await startConsole('step-up', {}, () => new Date(Date.now() + ahead));
  });
  after(async () => h?.stop());
  beforeEach(() => (ahead = 0));

  /** Signed in, then 11 minutes pass: the sign-in no longer counts as a recent proof. */
  async function staleSession(): Promise<SignedIn> {
    const user = await fullySignedIn(h);
    ahead += STEP_UP_WINDOW_MS + 60_000;
    return user;
  }

  const ACTIONS: Array<{ name: string; from: string; post: string; fields: Record<string, string>; done: (u: Onboarded) => Promise<boolean> }> = [
    {
      name: 'regenerating a key',
      from: '/console/keys/primary/regenerate',
      post: '/console/keys/primary/regenerate',
      fields: {},
      done: async (u) => (await h.api.deps.models.Audit.countDocuments({ customerId: u.customerId, action: 'key.regenerated' })) > 0,
    },
    {
      name: 'creating an emotion token',
      from: '/console/emotion',
      post: '/console/emotion/tokens',
      fields: { name: 'stolen-cookie' },
      done: async (u) => (await h.api.deps.models.EmotionToken.countDocuments({ customerId: u.customerId })) > 0,
    },
    {
      name: 'switching the hard cap off',
      from: '/console/plan',
      post: '/console/hard-cap',
      fields: { on: 'off' },
      done: async (u) => (await h.api.deps.accounts.get(u.customerId))!.hardCap === false,
    },
    {
      name: 'changing the plan',
      from: '/console/plan',
      post: '/console/plan/change',
      fields: { plan: 'business' },
      done: async (u) => !!(await h.api.deps.accounts.get(u.customerId))!.pendingPlanChange,
    },
    {
      name: 'cancelling the subscription',
      from: '/console/plan',
      post: '/console/plan/cancel',
      fields: {},
      done: async (u) => (await h.api.deps.accounts.get(u.customerId))!.pendingPlanChange?.kind === 'cancel',
    },
    {
      name: 'replacing the authenticator app',
      from: '/console/security',
      post: '/console/security/authenticator',
      fields: {},
      done: async (u) => (await h.api.deps.models.Audit.countDocuments({ customerId: u.customerId, action: 'console.authenticator_replacement_started' })) > 0,
    },
  ];

  for (const action of ACTIONS) {
    it(`${action.name} without a recent proof asks for one and does nothing; the password then completes it`, async () => {
      const user = await staleSession();
      if (action.name === 'switching the hard cap off') await h.api.deps.accounts.setHardCap(user.customerId, true);
      const prompt = await user.client.submit(await user.client.open(action.from), action.post, action.fields, false);
      expect(prompt.status).to.equal(403);
      expect(prompt.html).to.contain('id="step-up"').and.contain(`action="${action.post}"`);
      expect(await action.done(user), 'nothing done yet').to.equal(false);
      const wrong = await user.client.submit(prompt, action.post, { ...hiddenFields(prompt), stepUpPassword: 'Wrong#Passw0rd' }, false);
      expect(wrong.status).to.equal(400);
      expect(wrong.html).to.contain('id="step-up-error"');
      expect(await action.done(user), 'a wrong password does nothing').to.equal(false);
      const proven = await user.client.submit(wrong, action.post, { ...hiddenFields(wrong), stepUpPassword: user.password }, false);
      expect(proven.status).to.equal(303);
      expect(await action.done(user)).to.equal(true);
    });
  }

  it('a TOTP code is a proof too, and one proof covers the next 10 minutes of sensitive actions', async () => {
    const user = await staleSession();
    const secret = await totpSecretOf(user);
    const prompt = await user.client.submit(await user.client.open('/console/emotion'), '/console/emotion/tokens', { name: 'first' }, false);
    expect(prompt.status).to.equal(403);
    // The earliest step the server accepts that sign-up and sign-in have not spent (a fixed now+1 was spent
    // whenever both came within one step).
    const code = await user.totp.laterCode(secret);
    const proven = await user.client.submit(prompt, '/console/emotion/tokens', { ...hiddenFields(prompt), stepUpCode: code }, false);
    expect(proven.status).to.equal(303);
    const again = await user.client.submit(await user.client.open('/console/keys/secondary/regenerate'), '/console/keys/secondary/regenerate', {}, false);
    expect(again.status, 'no second prompt within the window').to.equal(303);
  });

  it('the new authenticator key is shown only while the proof is recent; past it the page sends the customer to start again', async () => {
    const user = await fullySignedIn(h);
    const started = await user.client.submit(await user.client.open('/console/security'), '/console/security/authenticator', {});
    expect(started.url).to.match(/\/console\/security\/authenticator$/);
    expect(started.html).to.contain('data-secret=');
    ahead += STEP_UP_WINDOW_MS + 60_000;
    const later = await user.client.open('/console/security/authenticator');
    expect(later.url).to.match(/\/console\/security#authenticator$/);
    expect(later.html).to.not.contain('data-secret=');
    expect(later.html).to.contain('Start replacing the authenticator app again');
    const confirm = await user.client.submit(later, '/console/security/authenticator/confirm', { code: '123456' }, false);
    expect(confirm.status, 'confirming asks for a proof too').to.equal(403);
    expect(confirm.html).to.contain('id="step-up"');
  });

  it('switching the hard cap ON needs no proof (it can only lower charges)', async () => {
    const user = await staleSession();
    await h.api.deps.accounts.setHardCap(user.customerId, false);
    const on = await user.client.submit(await user.client.open('/console/plan'), '/console/hard-cap', { on: 'on' }, false);
    expect(on.status).to.equal(303);
    expect((await h.api.deps.accounts.get(user.customerId))!.hardCap).to.equal(true);
  });

  function hiddenFields(page: Page): Record<string, string> {
    const form = /<form method="post" action="[^"]*" class="stack-form">([\s\S]*?)<\/form>/.exec(page.html)![1]!;
    return Object.fromEntries(
      [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].filter((m) => m[1] !== '_csrf').map((m) => [m[1]!, m[2]!]),
    );
  }

  async function totpSecretOf(user: Onboarded): Promise<string> {
    const account = (await h.api.deps.accounts.get(user.customerId))!;
    return new TotpService(h.config.APP_SECRET!, h.api.deps.redis, h.config.QUEUE_PREFIX).openSecret(account.totpSecretEnc!, account._id);
  }
});
