// Owns the Security page: changing the password (current password + a second factor; every other
// session ends), replacing the authenticator app (after step-up; a new secret confirmed by a code from it,
// then every other session ends and new recovery codes are shown once), regenerating the ten recovery codes
// (with a TOTP code; shown once after a redirect) and the usage alert e-mail opt-in.
import { Router, type Request } from 'express';
import { TooManyRequestsError } from '../../../shared/errors';
import { authenticatorReplacedMail, passwordChangedMail } from '../mail/templates';
import type { Account } from '../../../shared/accounts/account-service';
import { RULES } from '../auth/attempts';
import { adoptSession, requireStage } from '../http';
import { hashPassword, verifyPassword } from '../auth/passwords';
import { passwordProblems } from '../validation';
import { hashRecoveryCode, isRecoveryCodeShape, newRecoveryCodes } from '../auth/recovery-codes';
import { alreadyShownPage } from '../views/already-shown';
import { recoveryCodesAppPage, securityPage } from '../views/security';
import { appContext, signedInAccount, formField, redirectToReveal, redirectWithFlash, sendPage, type ConsoleDeps } from '../context';
import { checkSecondFactor } from './sign-in';
import { recentlyProven, requireRecentProof } from '../auth/step-up';
import { replaceAuthenticatorPage } from '../views/authenticator';

export function securityRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');

  const account = (req: Request) => signedInAccount(d, req);

  async function page(req: Request, res: Parameters<typeof sendPage>[0], a: Account, error?: { form: 'password' | 'codes'; text: string }, status = 200) {
    const ctx = await appContext(d, req, res, a);
    sendPage(
      res,
      securityPage(ctx, {
        recoveryCodesLeft: await d.recoveryCodes.unspent(a),
        usageAlerts: !!a.usageAlerts,
        password: await passwordSet(a),
        error,
      }),
      status,
    );
  }

  /** When the password was last set: a change or reset stamps the account; the first one was chosen at activation. */
  async function passwordSet(a: Account): Promise<{ at: Date; how: 'changed' | 'activation' } | null> {
    if (a.passwordChangedAt) return { at: a.passwordChangedAt, how: 'changed' };
    const activated = await d.audit.latest(a._id, 'console.activated');
    return activated ? { at: activated.at, how: 'activation' } : null;
  }

  r.get('/security', auth, async (req, res) => page(req, res, await account(req)));

  r.post('/security/password', auth, async (req, res) => {
    const a = await account(req);
    try {
      await d.attempts.take(RULES.passwordChange, a._id);
    } catch (err) {
      if (!(err instanceof TooManyRequestsError)) throw err;
      res.setHeader('Retry-After', String(err.retryAfterSeconds));
      return page(req, res, a, { form: 'password', text: err.message }, 429);
    }
    if (!(await verifyPassword(formField(req, 'current'), a.passwordHash))) {
      return page(req, res, a, { form: 'password', text: 'The current password is not correct.' }, 400);
    }
    await d.attempts.succeeded(RULES.passwordChange, a._id);
    const password = formField(req, 'password');
    const problems = passwordProblems(password);
    if (password !== formField(req, 'confirm')) problems.push('The same password typed twice');
    if (problems.length > 0) return page(req, res, a, { form: 'password', text: `The new password needs: ${problems.join(', ').toLowerCase()}.` }, 400);
    const code = formField(req, 'code').trim();
    const factor = await checkSecondFactor(d, a, isRecoveryCodeShape(code) ? { recoveryCode: code } : { code });
    if (!factor.ok) {
      if (factor.retryAfter) res.setHeader('Retry-After', String(factor.retryAfter));
      return page(req, res, a, { form: 'password', text: factor.error }, factor.status);
    }
    await d.attempts.reset(RULES.passwordChange, a._id);
    await d.credentials.setPassword(a._id, await hashPassword(password), 'changed');
    // Every other session ends; this one moves to a new id and a new start, so it lives on.
    await d.sessions.endAllSessionsOf(a._id);
    const session = await d.sessions.rotate(req.consoleSession!, { provenAt: d.clock().getTime() }, true);
    adoptSession(req, res, d.cookie, session);
    await d.mailer.send(a.email, passwordChangedMail({ firstName: a.firstName || 'there', support: d.config.SUPPORT_EMAIL })).catch(() => undefined);
    await redirectWithFlash(d, req, res, '/console/security', { kind: 'success', text: 'Your password is changed. Every other session was signed out.' });
  });

  // Replacing the authenticator app: a stolen session must not be able to move two-factor to its own phone, so
  // starting, seeing the new secret and confirming it all need a proof of identity from the last 10 minutes.
  // The new secret waits in the server-side session; the account keeps its secret until a code from the new
  // one confirms it.
  const replaceProof = requireRecentProof(d, { what: 'replace your authenticator app', nav: 'security' });

  r.post('/security/authenticator', auth, replaceProof, async (req, res) => {
    const a = await account(req);
    const session = req.consoleSession!;
    session.data.authenticatorReplacement = { sealed: d.totp.sealSecret(d.totp.newSecret(), a._id), startedAt: d.clock().getTime() };
    await d.sessions.save(session);
    await d.audit.record(a._id, 'console.authenticator_replacement_started', null);
    res.redirect(303, '/console/security/authenticator');
  });

  /** The replacement this session started, while its proof of identity is recent; else null. */
  function replacementOf(req: Request): string | null {
    const session = req.consoleSession!;
    return session.data.authenticatorReplacement && recentlyProven(d, session) ? session.data.authenticatorReplacement.sealed : null;
  }

  async function replacementPage(req: Request, res: Parameters<typeof sendPage>[0], a: Account, sealed: string, error?: string, status = 200) {
    const secret = d.totp.openSecret(sealed, a._id);
    const qrSvg = await d.totp.qrSvg(d.totp.otpauthUri(secret, a.email));
    sendPage(res, replaceAuthenticatorPage(await appContext(d, req, res, a), { secret, qrSvg, error }), status);
  }

  const startAgain = (req: Request, res: Parameters<typeof sendPage>[0]) =>
    redirectWithFlash(d, req, res, '/console/security#authenticator', {
      kind: 'info',
      text: 'Start replacing the authenticator app again: the new key is shown only within 10 minutes of confirming it is you.',
    });

  r.get('/security/authenticator', auth, async (req, res) => {
    const sealed = replacementOf(req);
    if (!sealed) return startAgain(req, res);
    await replacementPage(req, res, await account(req), sealed);
  });

  r.post('/security/authenticator/confirm', auth, replaceProof, async (req, res) => {
    const a = await account(req);
    const sealed = replacementOf(req);
    if (!sealed || !a.totpSecretEnc) return startAgain(req, res);
    const factor = await checkSecondFactor(d, a, { code: formField(req, 'code'), newSecret: sealed });
    if (!factor.ok) {
      if (factor.retryAfter) res.setHeader('Retry-After', String(factor.retryAfter));
      return replacementPage(req, res, a, sealed, factor.error, factor.status);
    }
    const codes = newRecoveryCodes();
    if (!(await d.credentials.replaceTotpSecret(a._id, a.totpSecretEnc, sealed, codes.map(hashRecoveryCode)))) return startAgain(req, res);
    await d.recoveryCodes.forgetSpent(a._id);
    // Every other session ends; this one moves to a new id (the code just given is a fresh proof).
    await d.sessions.endAllSessionsOf(a._id);
    const session = await d.sessions.rotate(req.consoleSession!, { provenAt: d.clock().getTime(), authenticatorReplacement: undefined }, true);
    adoptSession(req, res, d.cookie, session);
    await d.mailer.send(a.email, authenticatorReplacedMail({ firstName: a.firstName || 'there', support: d.config.SUPPORT_EMAIL })).catch(() => undefined);
    await redirectToReveal(d, req, res, '/console/security/recovery-codes', { kind: 'recovery-codes', codes, next: '/console/security' });
  });

  r.post('/security/recovery-codes', auth, async (req, res) => {
    const a = await account(req);
    const factor = await checkSecondFactor(d, a, { code: formField(req, 'code') });
    if (!factor.ok) {
      if (factor.retryAfter) res.setHeader('Retry-After', String(factor.retryAfter));
      return page(req, res, a, { form: 'codes', text: factor.error }, factor.status);
    }
    const codes = newRecoveryCodes();
    await d.credentials.replaceRecoveryCodes(a._id, codes.map(hashRecoveryCode));
    await d.recoveryCodes.forgetSpent(a._id);
    await redirectToReveal(d, req, res, '/console/security/recovery-codes', { kind: 'recovery-codes', codes, next: '/console/security' });
  });

  r.get('/security/recovery-codes', auth, async (req, res) => {
    const a = await account(req);
    const reveal = await d.reveals.take(req.consoleSession?.id, 'recovery-codes');
    const ctx = await appContext(d, req, res, a);
    if (!reveal) {
      return sendPage(
        res,
        alreadyShownPage(ctx, {
          nav: 'security',
          what: 'This set of recovery codes',
          back: { href: '/console/security', label: 'Back to Security' },
          again: 'Lost them? Make new ones; that voids the old set.',
        }),
      );
    }
    sendPage(res, recoveryCodesAppPage(ctx, { codes: reveal.codes }));
  });

  r.post('/security/alerts', auth, async (req, res) => {
    const a = await account(req);
    await d.attempts.take(RULES.settingsChange, a._id);
    const on = formField(req, 'on') === 'on';
    await d.accounts.setUsageAlerts(a._id, on);
    await redirectWithFlash(d, req, res, '/console/security', {
      kind: 'success',
      text: on ? 'Usage alerts are on: we e-mail you at 80 % and 100 % of your monthly limit.' : 'Usage alerts are off.',
    });
  });

  return r;
}
