// Owns step-up: the sensitive actions (regenerate a key, create an emotion token, switch the hard cap off,
// change the plan or cancel it, replace the authenticator app) need a proof of identity — the password or a TOTP code — given in the last 10 minutes, so
// a stolen session cookie alone is not enough. The proof's time is kept in the server-side session; signing
// in (password + TOTP) is one.
import type { NextFunction, Request, Response } from 'express';
import { TooManyRequestsError } from '../../../shared/errors';
import { RULES } from './attempts';
import { appContext, formField, sendPage, signedInAccount, type ConsoleDeps } from '../context';
import { verifyPassword } from './passwords';
import { checkSecondFactor } from '../routes/sign-in';
import type { Session } from './session';
import type { NavId } from '../views/layout';
import { stepUpPage } from '../views/step-up';

export const STEP_UP_WINDOW_MS = 10 * 60_000;

/** Form fields that are the proof or the CSRF token, never carried into the repeated action. */
const OWN_FIELDS = new Set(['_csrf', 'stepUpPassword', 'stepUpCode']);

/** Records a proof of identity given now (sign-in, password change, the step-up form). */
function markProven(d: ConsoleDeps, session: Session): void {
  session.data.provenAt = d.clock().getTime();
}

/** Whether the session holds a proof of identity given in the last 10 minutes. */
export function recentlyProven(d: ConsoleDeps, session: Session | undefined): boolean {
  const at = session?.data.provenAt;
  return typeof at === 'number' && d.clock().getTime() - at < STEP_UP_WINDOW_MS;
}

/**
 * Guards one action: passes when the session holds a recent proof; otherwise checks the proof sent with the
 * form (password under the password-change lockout, or a code under the TOTP lockout), or answers 403 with
 * the prompt, which posts the same action again. `when`: the action needs it only for some inputs.
 */
export function requireRecentProof(d: ConsoleDeps, o: { what: string; nav: NavId; when?: (req: Request) => boolean }) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const session = req.consoleSession!;
    if ((o.when && !o.when(req)) || recentlyProven(d, session)) return next();
    const account = await signedInAccount(d, req);
    const password = formField(req, 'stepUpPassword');
    const code = formField(req, 'stepUpCode').trim();
    const prompt = async (status: number, error?: string) => {
      const fields = Object.fromEntries(
        Object.entries((req.body ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string' && !OWN_FIELDS.has(e[0])),
      );
      sendPage(
        res,
        stepUpPage(await appContext(d, req, res, account), {
          action: req.originalUrl,
          what: o.what,
          nav: o.nav,
          fields,
          error,
          windowMinutes: STEP_UP_WINDOW_MS / 60_000,
        }),
        status,
      );
    };
    if (!password && !code) return prompt(403);
    if (code) {
      const factor = await checkSecondFactor(d, account, { code });
      if (!factor.ok) {
        if (factor.retryAfter) res.setHeader('Retry-After', String(factor.retryAfter));
        return prompt(factor.status, factor.error);
      }
    } else {
      try {
        await d.attempts.take(RULES.passwordChange, account._id);
      } catch (err) {
        if (!(err instanceof TooManyRequestsError)) throw err;
        res.setHeader('Retry-After', String(err.retryAfterSeconds));
        return prompt(429, err.message);
      }
      if (!(await verifyPassword(password, account.passwordHash))) {
        await d.audit.record(account._id, 'console.step_up_failed', null);
        return prompt(400, 'The password is not correct.');
      }
      await d.attempts.succeeded(RULES.passwordChange, account._id);
    }
    markProven(d, session);
    await d.sessions.save(session);
    await d.audit.record(account._id, 'console.step_up', { with: code ? 'totp' : 'password' });
    next();
  };
}
