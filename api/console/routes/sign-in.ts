// Owns signing in and out: e-mail + password, then the mandatory TOTP step (setup on first sign-in,
// a code every later time). Sessions rotate at both steps; failures count towards lockouts.
import { Router, type Request, type Response } from 'express';
import { TooManyRequestsError } from '../../../shared/errors';
import { welcomeMail } from '../../../shared/mail/templates';
import type { Account } from '../../../shared/accounts/account-service';
import { RULES } from '../attempts';
import { adoptSession, requireStage } from '../http';
import { verifyPassword } from '../passwords';
import { signInPage, totpChallengePage, totpSetupPage } from '../views/sign-in';
import { baseUrl, clientIp, formField, pageContext, sendPage, type ConsoleDeps } from '../context';

const WRONG_CREDENTIALS = 'The e-mail address or password is incorrect.';

export function signInRoutes(d: ConsoleDeps): Router {
  const r = Router();

  r.get('/sign-in', async (req, res) => {
    const stage = req.consoleSession?.data.stage;
    if (stage === 'authenticated') return res.redirect(303, '/console/dashboard');
    if (stage === 'password') return res.redirect(303, '/console/sign-in/two-factor');
    sendPage(res, signInPage(await pageContext(d, req, res), {}));
  });

  r.post('/sign-in', async (req, res) => {
    const ctx = await pageContext(d, req, res);
    const email = formField(req, 'email').trim().toLowerCase();
    const password = formField(req, 'password');
    const ip = clientIp(req);
    try {
      await d.attempts.assertOpen(RULES.signInAddress, ip);
      if (email) await d.attempts.assertOpen(RULES.signInAccount, email);
    } catch (err) {
      if (!(err instanceof TooManyRequestsError)) throw err;
      res.setHeader('Retry-After', String(err.retryAfterSeconds));
      return sendPage(res, signInPage(ctx, { email, error: err.message }), 429);
    }
    const account = email && password ? await d.accounts.getByEmail(email) : null;
    const passwordOk = await verifyPassword(password, account?.passwordHash);
    if (!account || !passwordOk || account.status === 'pending') {
      await d.attempts.fail(RULES.signInAddress, ip);
      if (email) await d.attempts.fail(RULES.signInAccount, email);
      if (account) await d.accounts.audit(account._id, 'console.sign_in_failed', { ip });
      return sendPage(res, signInPage(ctx, { email, error: WRONG_CREDENTIALS }), 401);
    }
    await d.attempts.reset(RULES.signInAccount, email);
    // A suspended or cancelled account holds no console session (its sessions end on their next request too).
    if (account.status !== 'active') {
      const text = account.status === 'suspended' ? 'This account is suspended; contact support.' : 'This subscription has ended.';
      return sendPage(res, signInPage(ctx, { email, error: text }), 403);
    }
    // New id at sign-in (an id fixed before sign-in is worthless after it) and a new absolute lifetime.
    const session = await d.sessions.rotate(req.consoleSession!, { stage: 'password', customerId: account._id }, true);
    adoptSession(req, res, d.cookie, session);
    res.redirect(303, account.totpEnabled ? '/console/sign-in/two-factor' : '/console/two-factor/setup');
  });

  async function passwordStageAccount(req: Request): Promise<Account | null> {
    return d.accounts.current(req.consoleSession!.data.customerId!);
  }

  /** Shared by setup and challenge: lockout, code check, then the authenticated session. */
  async function acceptCode(req: Request, res: Response, account: Account, secret: string): Promise<'ok' | { error: string; status: number }> {
    try {
      await d.attempts.assertOpen(RULES.totp, account._id);
    } catch (err) {
      if (!(err instanceof TooManyRequestsError)) throw err;
      res.setHeader('Retry-After', String(err.retryAfterSeconds));
      return { error: err.message, status: 429 };
    }
    if (!(await d.totp.check(account._id, secret, formField(req, 'code')))) {
      const failures = await d.attempts.fail(RULES.totp, account._id);
      const left = RULES.totp.maxFailures - failures;
      return {
        error: left > 0 ? `That code is not valid. Check the time on your phone and try the current code (${left} ${left === 1 ? 'try' : 'tries'} left).` : RULES.totp.message,
        status: left > 0 ? 400 : 429,
      };
    }
    await d.attempts.reset(RULES.totp, account._id);
    const session = await d.sessions.rotate(req.consoleSession!, { stage: 'authenticated' });
    adoptSession(req, res, d.cookie, session);
    await d.accounts.audit(account._id, 'console.sign_in', { ip: clientIp(req) });
    return 'ok';
  }

  r.get('/two-factor/setup', requireStage('password'), async (req, res) => {
    const account = await passwordStageAccount(req);
    if (!account) return res.redirect(303, '/console/sign-in');
    if (account.totpEnabled) return res.redirect(303, '/console/sign-in/two-factor');
    // Keep one pending secret across reloads, so a code scanned a moment ago still matches.
    let secret: string;
    if (account.totpSecretEnc) {
      secret = d.totp.openSecret(account.totpSecretEnc, account._id);
    } else {
      secret = d.totp.newSecret();
      await d.models.Account.updateOne({ _id: account._id, totpEnabled: false }, { $set: { totpSecretEnc: d.totp.sealSecret(secret, account._id) } });
    }
    const qrSvg = await d.totp.qrSvg(d.totp.otpauthUri(secret, account.email));
    sendPage(res, totpSetupPage(await pageContext(d, req, res), { email: account.email, secret, qrSvg }));
  });

  r.post('/two-factor/setup', requireStage('password'), async (req, res) => {
    const account = await passwordStageAccount(req);
    if (!account?.totpSecretEnc) return res.redirect(303, '/console/two-factor/setup');
    if (account.totpEnabled) return res.redirect(303, '/console/sign-in/two-factor');
    const secret = d.totp.openSecret(account.totpSecretEnc, account._id);
    const outcome = await acceptCode(req, res, account, secret);
    if (outcome !== 'ok') {
      const qrSvg = await d.totp.qrSvg(d.totp.otpauthUri(secret, account.email));
      return sendPage(res, totpSetupPage(await pageContext(d, req, res), { email: account.email, secret, qrSvg, error: outcome.error }), outcome.status);
    }
    await d.models.Account.updateOne({ _id: account._id }, { $set: { totpEnabled: true } });
    await d.accounts.audit(account._id, 'console.two_factor_enabled', null);
    await sendWelcome(req, account);
    req.consoleSession!.data.flash = { kind: 'success', text: 'Two-factor sign-in is on. Welcome to your dashboard.' };
    await d.sessions.save(req.consoleSession!);
    res.redirect(303, '/console/dashboard');
  });

  /** Once per account (the welcomeSentAt guard is one atomic update); a mail failure does not block sign-in. */
  async function sendWelcome(req: Request, account: Account): Promise<void> {
    const claimed = await d.models.Account.updateOne({ _id: account._id, welcomeSentAt: null }, { $set: { welcomeSentAt: d.clock() } });
    if (claimed.modifiedCount === 0) return;
    try {
      await d.mailer.send(
        account.email,
        welcomeMail({
          firstName: account.firstName || 'there',
          dashboardUrl: `${baseUrl(d, req)}/console/dashboard`,
          docsHint: 'Call POST /v1/check/liveness with your key in the X-API-Key header; GET /v1/usage shows your month so far.',
        }),
      );
    } catch {
      // Let a later sign-in try again rather than never sending it.
      await d.models.Account.updateOne({ _id: account._id }, { $set: { welcomeSentAt: null } });
    }
  }

  r.get('/sign-in/two-factor', requireStage('password'), async (req, res) => {
    const account = await passwordStageAccount(req);
    if (!account) return res.redirect(303, '/console/sign-in');
    if (!account.totpEnabled) return res.redirect(303, '/console/two-factor/setup');
    sendPage(res, totpChallengePage(await pageContext(d, req, res), { email: account.email }));
  });

  r.post('/sign-in/two-factor', requireStage('password'), async (req, res) => {
    const account = await passwordStageAccount(req);
    if (!account?.totpEnabled || !account.totpSecretEnc) return res.redirect(303, '/console/sign-in');
    const outcome = await acceptCode(req, res, account, d.totp.openSecret(account.totpSecretEnc, account._id));
    if (outcome !== 'ok') return sendPage(res, totpChallengePage(await pageContext(d, req, res), { email: account.email, error: outcome.error }), outcome.status);
    if (!account.welcomeSentAt) await sendWelcome(req, account);
    res.redirect(303, '/console/dashboard');
  });

  r.post('/sign-out', async (req, res) => {
    if (req.consoleSession) await d.sessions.destroy(req.consoleSession.id);
    // The fresh anonymous session's cookie replaces the old one (and carries the "signed out" note).
    const fresh = await d.sessions.create({ flash: { kind: 'info', text: 'You have signed out.' } });
    adoptSession(req, res, d.cookie, fresh);
    res.redirect(303, '/console/sign-in');
  });

  return r;
}
