// Issue 29, finding 2: one recovery code let 4 of 5 concurrent sign-ins in on the local document store
// (FerretDB 1.24 on SQLite loses concurrent updates to one document). Every one-time code — recovery codes,
// password reset links, verification links, TOTP time steps — is spent by one atomic step: of 20 concurrent
// uses exactly one succeeds, on the real FerretDB the tests run against.
import { expect } from 'chai';
import { generate } from 'otplib';
import { ConsoleCredentials } from '../../../shared/accounts/console-credentials';
import { hashRecoveryCode, spendRecoveryCode, unspentRecoveryCodes } from '../../../api/console/auth/recovery-codes';
import { FormClient, registerAndActivate, secretOf, signIn, startConsole, type ConsoleHarness } from '../console/harness';

const CONCURRENT = 20;

describe('One-time codes are spent once (issue 29, finding 2)', function () {
  this.timeout(300_000);
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole('one-time-codes');
  });
  after(async () => h?.stop());

  /** An activated account with two-factor on; returns its recovery codes and TOTP secret. */
  async function withTwoFactor() {
    const user = await registerAndActivate(h);
    const setup = await signIn(user.client, user.email, user.password);
    const secret = secretOf(setup);
    const shown = await user.client.submit(setup, '/console/two-factor/setup', { code: await generate({ secret }) });
    const codes = [...shown.html.matchAll(/<code>([a-z0-9]{5}-[a-z0-9]{5})<\/code>/g)].map((m) => m[1]!);
    expect(codes).to.have.length(10);
    return { ...user, codes, secret };
  }

  it('one recovery code used by 20 concurrent sign-ins lets exactly one session in', async () => {
    const user = await withTwoFactor();
    // 20 browsers, each past the password step, all at the code step at once.
    const clients: { client: FormClient; page: Awaited<ReturnType<typeof signIn>> }[] = [];
    for (let i = 0; i < CONCURRENT; i++) {
      const client = new FormClient(h.base);
      clients.push({ client, page: await signIn(client, user.email, user.password) });
    }
    const answers = await Promise.all(
      clients.map(({ client, page }) => client.submit(page, '/console/sign-in/two-factor', { code: '', recoveryCode: user.codes[0]! }, false)),
    );
    const admitted = answers.filter((a) => a.status === 303 && a.location === '/console/dashboard');
    expect(admitted, answers.map((a) => a.status).join(',')).to.have.length(1);
    const account = (await h.api.deps.accounts.get(user.customerId))!;
    expect(await unspentRecoveryCodes(h.api.deps.redis, h.config.QUEUE_PREFIX, account), 'codes left').to.equal(9);
  });

  it('20 concurrent spends of one recovery code (no lockout in the way) succeed exactly once, and 20 of different codes each once', async () => {
    const user = await withTwoFactor();
    const d = {
      redis: h.api.deps.redis,
      prefix: h.config.QUEUE_PREFIX,
      accounts: h.api.deps.accounts,
      credentials: new ConsoleCredentials(h.api.deps.models, h.api.deps.clock),
    };
    const same = await Promise.all(Array.from({ length: CONCURRENT }, () => spendRecoveryCode(d, user.customerId, hashRecoveryCode(user.codes[1]!))));
    expect(same.filter(Boolean)).to.have.length(1);
    // The other nine codes spent concurrently, each twice: each works once, and a lost update of the
    // document cannot bring a spent code back into use.
    const rest = user.codes.slice(2);
    const mixed = await Promise.all([...rest, ...rest].map((c) => spendRecoveryCode(d, user.customerId, hashRecoveryCode(c))));
    expect(mixed.filter(Boolean)).to.have.length(rest.length);
    const again = await Promise.all(user.codes.slice(1).map((c) => spendRecoveryCode(d, user.customerId, hashRecoveryCode(c))));
    expect(again.filter(Boolean)).to.have.length(0);
    expect(await unspentRecoveryCodes(d.redis, d.prefix, (await h.api.deps.accounts.get(user.customerId))!), 'codes left').to.equal(1);
  });

  it('one TOTP code submitted by 20 concurrent sign-ins lets exactly one session in', async () => {
    const user = await withTwoFactor();
    await user.client.submit(await user.client.open('/console/dashboard'), '/console/sign-out', {});
    const clients: { client: FormClient; page: Awaited<ReturnType<typeof signIn>> }[] = [];
    for (let i = 0; i < CONCURRENT; i++) {
      const client = new FormClient(h.base);
      clients.push({ client, page: await signIn(client, user.email, user.password) });
    }
    // The next step's code: the setup step's own code is already spent.
    const code = await generate({ secret: user.secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    const answers = await Promise.all(clients.map(({ client, page }) => client.submit(page, '/console/sign-in/two-factor', { code }, false)));
    expect(answers.filter((a) => a.status === 303 && a.location === '/console/dashboard')).to.have.length(1);
  });

  it('one password reset link used by 20 concurrent submits changes the password once', async () => {
    const user = await withTwoFactor();
    const other = new FormClient(h.base);
    await other.submit(await other.open('/console/forgot-password'), '/console/forgot-password', { email: user.email });
    const mail = await h.waitForMail(user.email, /password/i);
    const link = mail.links.find((l) => l.includes('/console/reset-password'))!;
    const form = await other.open(link);
    const token = new URL(link).searchParams.get('token')!;
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        other.submit(form, '/console/reset-password', { token, password: `New#Passw0rd${i}`, confirm: `New#Passw0rd${i}` }, false),
      ),
    );
    expect(answers.filter((a) => a.status === 303)).to.have.length(1);
    expect(answers.filter((a) => a.status === 410)).to.have.length(CONCURRENT - 1);
  });

  it('one verification link used by 20 concurrent activations activates the account once', async () => {
    const client = new FormClient(h.base);
    const email = `verify-race-${Date.now()}@example.com`;
    const form = await client.open(h.subscribe('starter').url);
    const token = /name="token" value="([^"]+)"/.exec(form.html)![1]!.replace(/&amp;/g, '&');
    await client.submit(form, '/console/register', { token, firstName: 'V', lastName: 'R', email, company: 'C', website: 'https://c.example.com' });
    const mail = await h.waitForMail(email, /Confirm/);
    const pwPage = await client.open(mail.links[0]!);
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, () => client.submit(pwPage, '/console/activate', { password: 'Sturdy#Passw0rd', confirm: 'Sturdy#Passw0rd' }, false)),
    );
    expect(answers.filter((a) => a.status === 303 && a.location === '/console/activate/keys')).to.have.length(1);
    expect(answers.filter((a) => a.status === 410)).to.have.length(CONCURRENT - 1);
  });
});
