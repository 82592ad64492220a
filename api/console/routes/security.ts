// Owns the Security page: changing the password (current password + a second factor; every other
// session ends), regenerating the ten recovery codes (with a TOTP code; shown once after a redirect)
// and the usage alert e-mail opt-in.
import { Router, type Request } from 'express';
import { TooManyRequestsError } from '../../../shared/errors';
import { passwordChangedMail } from '../mail/templates';
import type { Account } from '../../../shared/accounts/account-service';
import { RULES } from '../attempts';
import { adoptSession, requireStage } from '../http';
import { hashPassword, passwordProblems, verifyPassword } from '../passwords';
import { forgetSpentRecoveryCodes, hashRecoveryCode, isRecoveryCodeShape, newRecoveryCodes, unspentRecoveryCodes } from '../recovery-codes';
import { alreadyShownPage, recoveryCodesAppPage, securityPage } from '../views/dashboard';
import { appContext, signedInAccount, formField, redirectToReveal, redirectWithFlash, sendPage, type ConsoleDeps } from '../context';
import { checkSecondFactor } from './sign-in';

export function securityRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');

  const account = (req: Request) => signedInAccount(d, req);

  async function page(req: Request, res: Parameters<typeof sendPage>[0], a: Account, error?: { form: 'password' | 'codes'; text: string }, status = 200) {
    const ctx = await appContext(d, req, res, a);
    sendPage(
      res,
      securityPage(ctx, {
        recoveryCodesLeft: await unspentRecoveryCodes(d.redis, d.config.QUEUE_PREFIX, a),
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

  r.post('/security/recovery-codes', auth, async (req, res) => {
    const a = await account(req);
    const factor = await checkSecondFactor(d, a, { code: formField(req, 'code') });
    if (!factor.ok) {
      if (factor.retryAfter) res.setHeader('Retry-After', String(factor.retryAfter));
      return page(req, res, a, { form: 'codes', text: factor.error }, factor.status);
    }
    const codes = newRecoveryCodes();
    await d.credentials.replaceRecoveryCodes(a._id, codes.map(hashRecoveryCode));
    await forgetSpentRecoveryCodes(d.redis, d.config.QUEUE_PREFIX, a._id);
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
    const on = formField(req, 'on') === 'on';
    await d.accounts.setUsageAlerts(a._id, on);
    await redirectWithFlash(d, req, res, '/console/security', {
      kind: 'success',
      text: on ? 'Usage alerts are on: we e-mail you at 80 % and 100 % of your monthly limit.' : 'Usage alerts are off.',
    });
  });

  return r;
}
