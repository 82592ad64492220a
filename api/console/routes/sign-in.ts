// Owns signing in and out: e-mail + password, then the mandatory TOTP step (setup with ten recovery
// codes on first sign-in, a code or a recovery code every later time), and "forgot password" by
// e-mail. Sessions rotate at both steps; failures count towards lockouts.
import { Router, type Request, type Response } from 'express';
import { TooManyRequestsError } from '../../../shared/errors';
import { passwordChangedMail, passwordResetMail, welcomeMail } from '../mail/templates';
import type { Account } from '../../../shared/accounts/account-service';
import { RULES } from '../auth/attempts';
import { adoptSession, requireStage } from '../http';
import { hashPassword, verifyPassword } from '../auth/passwords';
import { passwordProblems } from '../validation';
import { PASSWORD_RESET_TTL_MS } from '../links/password-reset';
import { hashRecoveryCode, newRecoveryCodes } from '../auth/recovery-codes';
import {
  forgotPasswordPage,
  forgotPasswordSentPage,
  recoveryCodesSetupPage,
  recoveryCodesShownPage,
  resetPasswordPage,
  resetProblemPage,
  signInPage,
  totpChallengePage,
  totpSetupPage,
} from '../views/sign-in';
import { baseUrl, formField, pageContext, redirectToReveal, redirectWithFlash, sendPage, type ConsoleDeps } from '../context';
import { clientAddress } from '../../http/client-address';

const WRONG_CREDENTIALS = 'The e-mail address or password is incorrect.';

/**
 * Checks a 6-digit code, or (where allowed) a recovery code, under the TOTP lockout. A refused one is
 * written to the account's Activity (with `ip` where the caller has it), so the owner sees guessing.
 * `newSecret` (sealed): the code is checked against this secret, not yet the account's (replacing the
 * authenticator app), under the same lockout and replay guard.
 */
export async function checkSecondFactor(
  d: ConsoleDeps,
  account: Account,
  input: { code?: string; recoveryCode?: string; ip?: string; newSecret?: string },
): Promise<{ ok: true; usedRecoveryCode: boolean } | { ok: false; error: string; status: number; retryAfter?: number }> {
  let attempts: number;
  try {
    attempts = await d.attempts.take(RULES.totp, account._id);
  } catch (err) {
    if (!(err instanceof TooManyRequestsError)) throw err;
    return { ok: false, error: err.message, status: 429, retryAfter: err.retryAfterSeconds };
  }
  const recovery = input.recoveryCode?.trim();
  let ok = false;
  if (recovery) ok = await d.recoveryCodes.spend(account._id, hashRecoveryCode(recovery));
  else {
    const sealed = input.newSecret ?? account.totpSecretEnc;
    if (sealed) ok = await d.totp.check(account._id, d.totp.openSecret(sealed, account._id), input.code ?? '');
  }
  if (!ok) {
    const kind = recovery ? 'recovery_code' : input.newSecret ? 'new_authenticator' : 'code';
    await d.audit.record(account._id, 'console.two_factor_failed', { kind, ...(input.ip ? { ip: input.ip } : {}) });
    const left = RULES.totp.maxFailures - attempts;
    const what = recovery
      ? 'That recovery code is not valid or was already used.'
      : input.newSecret
        ? 'That code is not valid for the new app. Check it was added from this page and try its current code.'
        : 'That code is not valid. Check the time on your phone and try the current code.';
    return { ok: false, error: left > 0 ? `${what} (${left} ${left === 1 ? 'try' : 'tries'} left)` : RULES.totp.message, status: left > 0 ? 400 : 429 };
  }
  await d.attempts.reset(RULES.totp, account._id);
  // After an APP_SECRET rotation: move this account's TOTP secret to the current key while we hold it.
  const resealed = account.totpSecretEnc && !input.newSecret ? d.totp.resealed(account.totpSecretEnc, account._id) : null;
  if (resealed) await d.credentials.resealTotpSecret(account._id, account.totpSecretEnc!, resealed);
  return { ok: true, usedRecoveryCode: !!recovery };
}

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
    const ip = clientAddress(req);
    // Both attempts are counted before the password is hashed (so concurrent guesses cannot all pass the
    // limits) and given back when it was right.
    try {
      await d.attempts.takeAll(
        email
          ? [
              [RULES.signInAddress, ip],
              [RULES.signInAccount, email],
            ]
          : [[RULES.signInAddress, ip]],
      );
    } catch (err) {
      if (!(err instanceof TooManyRequestsError)) throw err;
      res.setHeader('Retry-After', String(err.retryAfterSeconds));
      return sendPage(res, signInPage(ctx, { email, error: err.message }), 429);
    }
    const account = email && password ? await d.accounts.getByEmail(email) : null;
    const passwordOk = await verifyPassword(password, account?.passwordHash);
    if (!account || !passwordOk || account.status === 'pending') {
      if (account) await d.audit.record(account._id, 'console.sign_in_failed', { ip });
      return sendPage(res, signInPage(ctx, { email, error: WRONG_CREDENTIALS }), 401);
    }
    await d.attempts.succeeded(RULES.signInAddress, ip);
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

  /** The second step passed: the authenticated session (new id and CSRF token). */
  async function authenticate(req: Request, res: Response, account: Account): Promise<void> {
    // Password and code just given: a proof of identity for the sensitive actions (api/console/auth/step-up.ts).
    const session = await d.sessions.rotate(req.consoleSession!, { stage: 'authenticated', provenAt: d.clock().getTime() });
    adoptSession(req, res, d.cookie, session);
    await d.audit.record(account._id, 'console.sign_in', { ip: clientAddress(req) });
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
      await d.credentials.setPendingTotpSecret(account._id, d.totp.sealSecret(secret, account._id));
    }
    const qrSvg = await d.totp.qrSvg(d.totp.otpauthUri(secret, account.email));
    sendPage(res, totpSetupPage(await pageContext(d, req, res), { email: account.email, secret, qrSvg }));
  });

  r.post('/two-factor/setup', requireStage('password'), async (req, res) => {
    const account = await passwordStageAccount(req);
    if (!account?.totpSecretEnc) return res.redirect(303, '/console/two-factor/setup');
    if (account.totpEnabled) return res.redirect(303, '/console/sign-in/two-factor');
    const outcome = await checkSecondFactor(d, account, { code: formField(req, 'code') });
    if (!outcome.ok) {
      if (outcome.retryAfter) res.setHeader('Retry-After', String(outcome.retryAfter));
      const secret = d.totp.openSecret(account.totpSecretEnc, account._id);
      const qrSvg = await d.totp.qrSvg(d.totp.otpauthUri(secret, account.email));
      return sendPage(res, totpSetupPage(await pageContext(d, req, res), { email: account.email, secret, qrSvg, error: outcome.error }), outcome.status);
    }
    await authenticate(req, res, account);
    const codes = newRecoveryCodes();
    await d.credentials.enableTotp(account._id, codes.map(hashRecoveryCode));
    await d.recoveryCodes.forgetSpent(account._id);
    await sendWelcome(req, account);
    // The codes are shown once, on the next page (a reload there says "already shown").
    await redirectToReveal(d, req, res, '/console/two-factor/recovery-codes', { kind: 'recovery-codes', codes, next: '/console/dashboard' });
  });

  r.get('/two-factor/recovery-codes', requireStage('authenticated'), async (req, res) => {
    const reveal = await d.reveals.take(req.consoleSession?.id, 'recovery-codes');
    const ctx = await pageContext(d, req, res);
    sendPage(res, reveal ? recoveryCodesSetupPage(ctx, { codes: reveal.codes }) : recoveryCodesShownPage(ctx));
  });

  /** Once per account (the claim is one atomic update); a mail failure does not block sign-in. */
  async function sendWelcome(req: Request, account: Account): Promise<void> {
    if (!(await d.accounts.claimWelcomeMail(account._id))) return;
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
      await d.accounts.claimWelcomeMail(account._id, true);
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
    const recoveryCode = formField(req, 'recoveryCode');
    const outcome = await checkSecondFactor(d, account, { code: formField(req, 'code'), recoveryCode, ip: clientAddress(req) });
    if (!outcome.ok) {
      if (outcome.retryAfter) res.setHeader('Retry-After', String(outcome.retryAfter));
      // A refused recovery code is answered under the recovery-code field, which keeps what was typed.
      const answer = recoveryCode.trim() ? { recoveryCode, recoveryError: outcome.error } : { error: outcome.error };
      return sendPage(res, totpChallengePage(await pageContext(d, req, res), { email: account.email, ...answer }), outcome.status);
    }
    await authenticate(req, res, account);
    if (!account.welcomeSentAt) await sendWelcome(req, account);
    if (outcome.usedRecoveryCode) {
      const left = await d.recoveryCodes.unspent(account);
      return redirectWithFlash(d, req, res, '/console/dashboard', {
        kind: left <= 2 ? 'error' : 'info',
        text: `You signed in with a recovery code; it cannot be used again. ${left} left.${left <= 2 ? ' Make new ones under Security.' : ''}`,
      });
    }
    res.redirect(303, '/console/dashboard');
  });

  r.post('/sign-out', async (req, res) => {
    if (req.consoleSession) await d.sessions.destroy(req.consoleSession.id);
    // The fresh anonymous session's cookie replaces the old one (and carries the "signed out" note).
    const fresh = await d.sessions.create({ flash: { kind: 'info', text: 'You have signed out.' } });
    adoptSession(req, res, d.cookie, fresh);
    res.redirect(303, '/console/sign-in');
  });

  // ---- Forgot password -------------------------------------------------------------------------

  r.get('/forgot-password', async (req, res) => {
    sendPage(res, forgotPasswordPage(await pageContext(d, req, res), {}));
  });

  r.post('/forgot-password', async (req, res) => {
    const ctx = await pageContext(d, req, res);
    const email = formField(req, 'email').trim().toLowerCase();
    if (!email) return sendPage(res, forgotPasswordPage(ctx, { error: 'Enter your work e-mail address.' }), 400);
    const ip = clientAddress(req);
    // Every request counts, known address or not: the limits must not tell which addresses exist.
    try {
      await d.attempts.takeAll([
        [RULES.resetByIp, ip],
        [RULES.resetByAddress, email],
      ]);
    } catch (err) {
      if (!(err instanceof TooManyRequestsError)) throw err;
      res.setHeader('Retry-After', String(err.retryAfterSeconds));
      return sendPage(res, forgotPasswordPage(ctx, { email, error: err.message }), 429);
    }
    const account = await d.accounts.getByEmail(email);
    if (account && account.status !== 'pending' && account.passwordHash) {
      const link = `${baseUrl(d, req)}/console/reset-password?token=${encodeURIComponent(d.resets.issue(account._id, account.passwordHash))}`;
      const mail = passwordResetMail({
        firstName: account.firstName || 'there',
        link,
        validMinutes: PASSWORD_RESET_TTL_MS / 60_000,
        support: d.config.SUPPORT_EMAIL,
      });
      // Not awaited: the answer (and its timing) is the same whether or not the address has an account.
      void d.mailer.send(account.email, mail).catch(() => req.log.warn('password reset mail not sent'));
      void d.audit.record(account._id, 'console.password_reset_requested', { ip }).catch(() => undefined);
    }
    // Post/Redirect/Get: a reload of the answer does not send another link.
    const session = req.consoleSession!;
    session.data.pendingEmail = email;
    await d.sessions.save(session);
    res.redirect(303, '/console/forgot-password/sent');
  });

  r.get('/forgot-password/sent', async (req, res) => {
    const email = req.consoleSession?.data.pendingEmail;
    if (!email) return res.redirect(303, '/console/forgot-password');
    sendPage(res, forgotPasswordSentPage(await pageContext(d, req, res), email));
  });

  async function resetCheck(token: string) {
    return d.resets.check(token, async (id) => {
      const a = await d.accounts.get(id);
      return a && a.status !== 'pending' ? a.passwordHash : false;
    });
  }

  r.get('/reset-password', async (req, res) => {
    const ctx = await pageContext(d, req, res);
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const check = await resetCheck(token);
    if (!check.ok) return sendPage(res, resetProblemPage(ctx, check.reason), check.reason === 'invalid' ? 400 : 410);
    const account = (await d.accounts.get(check.customerId))!;
    sendPage(res, resetPasswordPage(ctx, { token, email: account.email }));
  });

  r.post('/reset-password', async (req, res) => {
    const ctx = await pageContext(d, req, res);
    const token = formField(req, 'token');
    const check = await resetCheck(token);
    if (!check.ok) return sendPage(res, resetProblemPage(ctx, check.reason), check.reason === 'invalid' ? 400 : 410);
    const account = (await d.accounts.get(check.customerId))!;
    const password = formField(req, 'password');
    const problems = passwordProblems(password);
    if (password !== formField(req, 'confirm')) problems.push('The same password typed twice');
    if (problems.length > 0) return sendPage(res, resetPasswordPage(ctx, { token, email: account.email, problems }), 400);
    const passwordHash = await hashPassword(password);
    if (!(await d.resets.consume(check.nonce))) return sendPage(res, resetProblemPage(ctx, 'used'), 410);
    await d.credentials.setPassword(account._id, passwordHash, 'reset');
    await d.sessions.endAllSessionsOf(account._id);
    await d.attempts.reset(RULES.signInAccount, account.email);
    await d.mailer
      .send(account.email, passwordChangedMail({ firstName: account.firstName || 'there', support: d.config.SUPPORT_EMAIL }))
      .catch(() => undefined);
    await redirectWithFlash(d, req, res, '/console/sign-in', {
      kind: 'success',
      text: 'Your password is changed and every session was signed out. Sign in with the new password.',
    });
  });

  return r;
}
