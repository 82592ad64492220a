// Owns the Plan & billing routes: the plan page, a plan change (confirmation, then a request the marketplace
// confirms: pending until its signed event, docs/billing.md), withdrawing a pending request, cancelling and
// withdrawing a scheduled change (requests the same way), and the hard cap (ON at once; OFF after a
// confirmation; limited per account with the other settings, RULES.settingsChange). Plan changes, cancelling
// and hard cap OFF need a recent proof of identity (step-up.ts).
import { Router, type RequestHandler } from 'express';
import { InvalidRequestError } from '../../../shared/errors';
import { PLANS } from '../../../shared/billing/plans';
import { monthAfter, monthOf } from '../../../shared/billing/month';
import { requireStage } from '../http';
import { RULES } from '../auth/attempts';
import { appContext, formField, redirectWithFlash, sendPage, signedInAccount, type ConsoleDeps } from '../context';
import type { PageContext } from '../views/layout';
import { usageOf } from '../usage';
import { requireRecentProof } from '../auth/step-up';
import { planState, targetPlan } from '../presenters/plan';
import { hardCapOffConfirmPage, planChangeConfirmPage, planPage } from '../views/plan';

export function planRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');

  r.get('/plan', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    sendPage(res, planPage(await appContext(d, req, res, a), { plan: planState(d.accounts, a), usage: await usageOf(d.accounts, d.ledger, d.clock, a) }));
  });

  r.get('/plan/change', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const state = planState(d.accounts, a);
    const to = targetPlan(typeof req.query.plan === 'string' ? req.query.plan : '', state.plan);
    const up = PLANS[to].rank > PLANS[state.plan].rank;
    const effectiveMonth = up ? null : monthAfter(monthOf(d.clock()));
    sendPage(
      res,
      planChangeConfirmPage(await appContext(d, req, res, a), { from: state, to, usage: await usageOf(d.accounts, d.ledger, d.clock, a), effectiveMonth }),
    );
  });

  // The console only asks: the marketplace owns the subscription, and its entitlement event applies the change
  // (shared/marketplace/entitlements.ts). Until then the plan page shows it as pending.
  r.post('/plan/change', auth, requireRecentProof(d, { what: 'change your plan', nav: 'plan' }), async (req, res) => {
    const a = await signedInAccount(d, req);
    const plan = targetPlan(formField(req, 'plan'), a.plan);
    await d.accounts.requestPlanChange(a._id, plan);
    await redirectWithFlash(d, req, res, '/console/plan#pending-change', {
      kind: 'info',
      text: `Your change to the ${PLANS[plan].name} plan is pending: it applies when the marketplace confirms it.`,
    });
  });

  /** Asks one thing of the account service for the signed-in account, then redirects with what happens next. */
  const ask =
    (request: (customerId: string) => Promise<unknown>, to: string, flash: NonNullable<PageContext['flash']>): RequestHandler =>
    async (req, res) => {
      const a = await signedInAccount(d, req);
      await request(a._id);
      await redirectWithFlash(d, req, res, to, flash);
    };

  // NotFoundError (404 not_found) when nothing is pending: the error page says so.
  r.post(
    '/plan/pending/withdraw',
    auth,
    ask((id) => d.accounts.withdrawPlanChangeRequest(id), '/console/plan', {
      kind: 'success',
      text: 'The plan change request is withdrawn. Your current plan continues.',
    }),
  );

  // A cancellation and withdrawing a scheduled change are requests too: the marketplace's event applies them
  // (unsubscribe.pending; an entitlement for the plan in effect). Cancelling is a plan change: it needs a proof.
  r.post(
    '/plan/cancel',
    auth,
    requireRecentProof(d, { what: 'cancel your subscription', nav: 'plan' }),
    ask((id) => d.accounts.requestCancellation(id), '/console/plan#pending-change', {
      kind: 'info',
      text: 'Your cancellation is pending: it is scheduled for the end of the month when the marketplace confirms it.',
    }),
  );

  // NotFoundError (404 not_found) when there is nothing scheduled: the error page says so.
  r.post(
    '/plan/scheduled/withdraw',
    auth,
    ask((id) => d.accounts.requestScheduledChangeWithdrawal(id), '/console/plan#pending-change', {
      kind: 'info',
      text: 'Withdrawing the scheduled change is pending: it stays scheduled until the marketplace confirms your current plan continues.',
    }),
  );

  r.get('/hard-cap/off', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const state = planState(d.accounts, a);
    if (state.plan === 'free') throw new InvalidRequestError('The free plan always has the hard cap on.');
    if (!state.hardCap) return res.redirect(303, '/console/plan');
    sendPage(res, hardCapOffConfirmPage(await appContext(d, req, res, a), { plan: state, usage: await usageOf(d.accounts, d.ledger, d.clock, a) }));
  });

  // ON is safe and immediate; OFF can cost money, so it needs a recent proof of identity.
  const hardCapOff = requireRecentProof(d, { what: 'switch the hard cap off', nav: 'plan', when: (req) => formField(req, 'on') === 'off' });
  r.post('/hard-cap', auth, hardCapOff, async (req, res) => {
    const a = await signedInAccount(d, req);
    await d.attempts.take(RULES.settingsChange, a._id);
    const on = formField(req, 'on');
    if (on !== 'on' && on !== 'off') throw new InvalidRequestError('The hard cap is either on or off.');
    await d.accounts.setHardCap(a._id, on === 'on');
    const price = PLANS[a.plan].overagePerCallUsd;
    await redirectWithFlash(d, req, res, '/console/plan', {
      kind: 'success',
      text:
        on === 'on'
          ? 'Hard cap is ON: detection stops at your monthly limit and nothing beyond your plan is billed.'
          : `Hard cap is OFF: calls past your limit continue and are billed as overage${price === null ? '' : ` at $${price.toFixed(2)} per call`}.`,
    });
  });

  return r;
}
