// Owns the onboarding transitions: marketplace link → registration → verification e-mail → password →
// activation (both keys shown once). Each step checks where the visitor really is, so no URL skips one.
// Registration answers alike for a known and a new address (the known address's owner gets a mail instead).
import { Router, type Request } from 'express';
import { InvalidRequestError, TooManyRequestsError } from '../../../shared/errors';
import { alreadyRegisteredMail, verificationMail } from '../mail/templates';
import type { PlanId } from '../../../shared/billing/plans';
import { RULES } from '../auth/attempts';
import { adoptSession, requireStage } from '../http';
import { hashPassword } from '../auth/passwords';
import { VERIFICATION_TTL_MS } from '../links/verification-token';
import { isAddrSpec, passwordProblems, readRegistration, type RegistrationInput } from '../validation';
import {
  checkInboxPage,
  keysAlreadyShownPage,
  keysOncePage,
  passwordPage,
  registerPage,
  registrationLinkProblemPage,
  resendDonePage,
  resendPage,
  verifyProblemPage,
} from '../views/onboarding';
import { baseUrl, formField, pageContext, redirectToReveal, redirectWithFlash, sendPage, type ConsoleDeps } from '../context';
import { clientAddress } from '../../http/client-address';

const EMPTY: RegistrationInput = { firstName: '', lastName: '', email: '', company: '', website: '' };

export function onboardingRoutes(d: ConsoleDeps): Router {
  const r = Router();

  async function sendVerification(req: Request, account: { _id: string; email: string; firstName?: string | null }): Promise<void> {
    const token = d.verification.issue(account._id, account.email);
    const link = `${baseUrl(d, req)}/console/verify?token=${encodeURIComponent(token)}`;
    await d.mailer.send(account.email, verificationMail({ firstName: account.firstName || 'there', link, validHours: VERIFICATION_TTL_MS / 3600_000 }));
  }

  r.get('/register', async (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const ctx = await pageContext(d, req, res);
    const check = d.registration.verify(token);
    if (!check.ok) return sendPage(res, registrationLinkProblemPage(ctx, check.reason), check.reason === 'expired' ? 410 : 400);
    if (await d.subscriptions.taken(check.subscription.subscriptionId)) return sendPage(res, registrationLinkProblemPage(ctx, 'used'), 409);
    sendPage(res, registerPage(ctx, { token, subscription: check.subscription, values: EMPTY, errors: {} }));
  });

  r.post('/register', async (req, res) => {
    const token = formField(req, 'token');
    const ctx = await pageContext(d, req, res);
    const check = d.registration.verify(token);
    if (!check.ok) return sendPage(res, registrationLinkProblemPage(ctx, check.reason), check.reason === 'expired' ? 410 : 400);
    const sub = check.subscription;
    const { input, errors } = readRegistration(req.body as Record<string, unknown>);
    const again = (status: number, formError?: string) =>
      sendPage(res, registerPage(ctx, { token, subscription: sub, values: input, errors, formError }), status);
    if (Object.keys(errors).length > 0) return again(400, 'Please correct the highlighted fields.');

    // Two quick submits of the same form must not create two accounts for one subscription.
    const held = await d.locks.holding(`registering:${sub.subscriptionId}`, 30, async () => {
      if (await d.subscriptions.taken(sub.subscriptionId)) return { used: true as const, account: null };
      try {
        const created = await d.accounts.create({
          ...input,
          plan: sub.plan,
          status: 'pending',
          marketplace: { accountId: sub.marketplaceAccountId, subscriptionId: sub.subscriptionId },
        });
        return { used: false as const, account: created };
      } catch (err) {
        if (!(err instanceof InvalidRequestError)) throw err;
        await d.subscriptions.claim(sub.subscriptionId);
        return { used: false as const, account: null };
      }
    });
    if (!held.held) return again(409, 'This registration is already being processed.');
    if (held.value.used) return sendPage(res, registrationLinkProblemPage(ctx, 'used'), 409);
    const { account } = held.value;
    const session = req.consoleSession!;
    session.data.pendingEmail = input.email;
    try {
      // A known address gets the same answer as a new one (the page must not tell who is a customer); its
      // owner gets a mail saying so instead of a verification link. Both send one mail before answering.
      if (account) {
        await d.audit.record(account._id, 'console.registered', { plan: sub.plan, subscriptionId: sub.subscriptionId });
        await sendVerification(req, account);
      } else {
        await sendAlreadyRegistered(req, input.email);
      }
    } catch (err) {
      req.log.warn({ code: (err as { code?: string }).code }, 'mail not sent at registration');
      session.data.flash = {
        kind: 'error',
        text: 'Your registration is received, but we could not send the confirmation e-mail just now. Use "Send a new link" in a minute.',
      };
    }
    await d.sessions.save(session);
    res.redirect(303, '/console/register/sent');
  });

  async function sendAlreadyRegistered(req: Request, email: string): Promise<void> {
    const owner = await d.accounts.getByEmail(email);
    if (!owner) return;
    const base = baseUrl(d, req);
    await d.mailer.send(
      owner.email,
      alreadyRegisteredMail({
        firstName: owner.firstName || 'there',
        signInUrl: `${base}/console/sign-in`,
        resetUrl: `${base}/console/forgot-password`,
        support: d.config.SUPPORT_EMAIL,
      }),
    );
    await d.audit.record(owner._id, 'console.registration_with_known_address', { ip: clientAddress(req) });
  }

  r.get('/register/sent', async (req, res) => {
    const ctx = await pageContext(d, req, res);
    const email = req.consoleSession?.data.pendingEmail;
    if (!email) return res.redirect(303, '/console/verify/resend');
    sendPage(res, checkInboxPage(ctx, email));
  });

  r.get('/verify', async (req, res) => {
    const ctx = await pageContext(d, req, res);
    const ip = clientAddress(req);
    try {
      await d.attempts.take(RULES.verifyLink, ip);
    } catch (err) {
      if (err instanceof TooManyRequestsError) res.setHeader('Retry-After', String(err.retryAfterSeconds));
      throw err;
    }
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const check = await d.verification.check(token);
    if (!check.ok && check.reason === 'invalid') return sendPage(res, verifyProblemPage(ctx, { reason: 'invalid' }), 400);
    const account = await d.accounts.get(check.customerId);
    if (!account || account.email !== check.email) return sendPage(res, verifyProblemPage(ctx, { reason: 'invalid' }), 400);
    if (!check.ok) {
      // A used link of an activated account: nothing to resend, the way forward is signing in.
      const reason = check.reason === 'used' && account.status !== 'pending' ? 'active' : check.reason;
      return sendPage(res, verifyProblemPage(ctx, { reason, email: check.email }), 410);
    }
    await d.attempts.succeeded(RULES.verifyLink, ip);
    if (account.status !== 'pending') return sendPage(res, verifyProblemPage(ctx, { reason: 'active' }), 410);
    // Opening the link does not use it up (mail scanners prefetch links); setting the password does.
    const session = await d.sessions.rotate(req.consoleSession!, { stage: 'verified', customerId: account._id, verifyNonce: check.nonce });
    adoptSession(req, res, d.cookie, session);
    res.redirect(303, '/console/activate');
  });

  r.get('/verify/resend', async (req, res) => {
    sendPage(res, resendPage(await pageContext(d, req, res), typeof req.query.email === 'string' ? req.query.email : ''));
  });

  r.post('/verify/resend', async (req, res) => {
    const ctx = await pageContext(d, req, res);
    const email = formField(req, 'email').trim().toLowerCase();
    // Not an address we could have registered: nothing to send and nothing to count.
    if (!isAddrSpec(email)) return sendPage(res, resendPage(ctx, email), 400);
    // Every request counts (each may send a mail): per client address first, then per e-mail address.
    await d.attempts.takeAll([
      [RULES.verifyResendByIp, clientAddress(req)],
      [RULES.verifyResend, email],
    ]);
    const account = await d.accounts.getByEmail(email);
    // The same answer whether or not the address is registered: the page must not reveal accounts.
    if (account && account.status === 'pending') await sendVerification(req, account);
    sendPage(res, resendDonePage(ctx, email));
  });

  r.get('/activate', requireStage('verified'), async (req, res) => {
    const account = await d.accounts.get(req.consoleSession!.data.customerId!);
    const ctx = await pageContext(d, req, res);
    if (!account || account.status !== 'pending') return sendPage(res, verifyProblemPage(ctx, { reason: 'active' }), 410);
    sendPage(res, passwordPage(ctx, { email: account.email }));
  });

  r.post('/activate', requireStage('verified'), async (req, res) => {
    const session = req.consoleSession!;
    const customerId = session.data.customerId!;
    const account = await d.accounts.get(customerId);
    const ctx = await pageContext(d, req, res);
    if (!account || account.status !== 'pending') return sendPage(res, verifyProblemPage(ctx, { reason: 'active' }), 410);
    const password = formField(req, 'password');
    const problems = passwordProblems(password);
    if (password !== formField(req, 'confirm')) problems.push('The same password typed twice');
    if (problems.length > 0) return sendPage(res, passwordPage(ctx, { email: account.email, problems }), 400);

    const passwordHash = await hashPassword(password);
    if (!session.data.verifyNonce || !(await d.verification.consume(session.data.verifyNonce))) {
      return sendPage(res, verifyProblemPage(ctx, { reason: 'used', email: account.email }), 410);
    }
    if (!(await d.accounts.activate(customerId, passwordHash))) return sendPage(res, verifyProblemPage(ctx, { reason: 'active' }), 410);
    const keys = await d.apiKeys.issueKeys(customerId);

    // The keys are parked for this (new, anonymous) session only until the next page takes them:
    // a reload of that page says "already shown"; they never reach a log.
    const next = await d.sessions.rotate(session, { stage: 'anonymous', customerId: undefined, verifyNonce: undefined, pendingEmail: undefined });
    adoptSession(req, res, d.cookie, next);
    await redirectToReveal(d, req, res, '/console/activate/keys', { kind: 'activation-keys', ...keys, plan: account.plan });
  });

  r.get('/activate/keys', async (req, res) => {
    const reveal = await d.reveals.take(req.consoleSession?.id, 'activation-keys');
    const ctx = await pageContext(d, req, res);
    if (!reveal) return sendPage(res, keysAlreadyShownPage(ctx));
    sendPage(res, keysOncePage(ctx, { primaryKey: reveal.primaryKey, secondaryKey: reveal.secondaryKey, plan: reveal.plan as PlanId }));
  });

  r.post('/activate/done', async (req, res) => {
    const saved = formField(req, 'saved') === 'yes';
    await redirectWithFlash(d, req, res, '/console/sign-in', {
      kind: 'success',
      text: saved
        ? 'Your account is active. Sign in to set up two-factor sign-in.'
        : 'Your account is active. If you did not save your keys, regenerate them from the dashboard after signing in.',
    });
  });

  return r;
}
