// Owns the signed-in dashboard: usage, keys (regenerate with confirmation, shown once), plan changes,
// the hard cap, emotion API tokens and the activity list. Numbers come from the same services as /v1.
import { Router, type Request } from 'express';
import { InvalidRequestError, NotFoundError } from '../../../shared/errors';
import type { Account, KeySlot } from '../../../shared/accounts/account-service';
import { isPlanId, PLANS, type PlanId } from '../../../shared/billing/plans';
import { nextMonthStart, monthOf } from '../../../shared/billing/month';
import { customerIdOf, requireStage, SessionRequiredError } from '../http';
import {
  activityPage,
  emotionPage,
  keyRevealedPage,
  keysPage,
  overviewPage,
  planPage,
  regenerateConfirmPage,
  tokenRevealedPage,
  type PlanState,
  type UsageView,
} from '../views/dashboard';
import { appContext, formField, redirectWithFlash, sendPage, type ConsoleDeps } from '../context';

function slotOf(value: string | undefined): KeySlot {
  if (value === 'primary' || value === 'secondary') return value;
  throw new NotFoundError('No such key');
}

export function dashboardRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');

  async function account(req: Request): Promise<Account> {
    const a = await d.accounts.current(customerIdOf(req));
    if (!a) throw new SessionRequiredError('This account no longer exists.');
    return a;
  }

  /** The usage numbers exactly as GET /v1/usage computes them, plus the money view of the overage. */
  async function usageOf(a: Account): Promise<UsageView> {
    const view = d.accounts.planView(a);
    const snap = await d.ledger.snapshot(a._id, view);
    const perCall = PLANS[view.plan].overagePerCallUsd;
    return {
      month: snap.month,
      used: snap.used,
      monthlyLimit: snap.monthlyLimit,
      remaining: snap.remaining,
      overage: snap.overage,
      perCallUsd: perCall,
      overageCostUsd: perCall === null ? null : Math.round(snap.overage * perCall * 100) / 100,
      resetAt: nextMonthStart(d.clock()),
      daily: snap.daily,
    };
  }

  function planState(a: Account): PlanState {
    const view = d.accounts.planView(a);
    const s = a.scheduledChange;
    return {
      plan: view.plan,
      monthlyLimit: view.monthlyLimit,
      hardCap: view.hardCap,
      status: a.status,
      scheduled: s?.effectiveMonth ? { plan: (s.plan as PlanId | null) ?? null, cancel: !!s.cancel, effectiveMonth: s.effectiveMonth } : null,
    };
  }

  r.get('/', auth, (_req, res) => res.redirect(303, '/console/dashboard'));

  r.get('/dashboard', auth, async (req, res) => {
    const a = await account(req);
    const [usage, keys] = await Promise.all([usageOf(a), d.accounts.keyPrefixes(a._id)]);
    sendPage(res, overviewPage(await appContext(d, req, res, a), { usage, plan: planState(a), keys, firstName: a.firstName ?? '' }));
  });

  r.get('/keys', auth, async (req, res) => {
    const a = await account(req);
    sendPage(res, keysPage(await appContext(d, req, res, a), { keys: await d.accounts.keyPrefixes(a._id) }));
  });

  r.get('/keys/:slot/regenerate', auth, async (req, res) => {
    const a = await account(req);
    const slot = slotOf(req.params.slot as string);
    const key = (await d.accounts.keyPrefixes(a._id)).find((k) => k.slot === slot);
    if (!key) throw new NotFoundError('No such key');
    sendPage(res, regenerateConfirmPage(await appContext(d, req, res, a), { slot, prefix: key.prefix }));
  });

  r.post('/keys/:slot/regenerate', auth, async (req, res) => {
    const a = await account(req);
    const slot = slotOf(req.params.slot as string);
    // regenerate() audits and replaces the stored hash: the old key answers 401 from now on.
    const key = await d.accounts.regenerate(a._id, slot);
    sendPage(res, keyRevealedPage(await appContext(d, req, res, a), { slot, key }));
  });

  r.get('/plan', auth, async (req, res) => {
    const a = await account(req);
    sendPage(res, planPage(await appContext(d, req, res, a), { plan: planState(a), usage: await usageOf(a) }));
  });

  r.post('/plan/change', auth, async (req, res) => {
    const a = await account(req);
    const plan = formField(req, 'plan');
    if (!isPlanId(plan)) throw new InvalidRequestError('Choose one of the listed plans.');
    if (plan === 'enterprise') throw new InvalidRequestError('Enterprise plans are arranged by contract; contact sales.');
    const { effective } = await d.accounts.changePlan(a._id, plan);
    const text =
      effective === 'now'
        ? `You are now on the ${PLANS[plan].name} plan. The new limit applies immediately.`
        : `Your plan changes to ${PLANS[plan].name} on 1 ${effective} (00:00 UTC). Until then nothing changes.`;
    await redirectWithFlash(d, req, res, '/console/plan', { kind: 'success', text });
  });

  r.post('/plan/cancel', auth, async (req, res) => {
    const a = await account(req);
    const { effective } = await d.accounts.scheduleCancellation(a._id);
    await redirectWithFlash(d, req, res, '/console/plan', {
      kind: 'info',
      text: `Your subscription ends at the end of ${monthOf(d.clock())} (on ${effective}-01, 00:00 UTC). You can withdraw this until then.`,
    });
  });

  r.post('/plan/scheduled/withdraw', auth, async (req, res) => {
    const a = await account(req);
    // NotFoundError (404 not_found) when there is nothing scheduled: the error page says so.
    await d.accounts.cancelScheduledChange(a._id);
    await redirectWithFlash(d, req, res, '/console/plan', { kind: 'success', text: 'The scheduled change is withdrawn. Your current plan continues.' });
  });

  r.post('/hard-cap', auth, async (req, res) => {
    const a = await account(req);
    const on = formField(req, 'on');
    if (on !== 'on' && on !== 'off') throw new InvalidRequestError('The hard cap is either on or off.');
    await d.accounts.setHardCap(a._id, on === 'on');
    await redirectWithFlash(d, req, res, '/console/plan', {
      kind: 'success',
      text: on === 'on' ? 'Hard cap is ON: detection stops at your monthly limit and nothing beyond your plan is billed.' : 'Hard cap is OFF: calls past your limit continue and are billed as overage.',
    });
  });

  r.get('/emotion', auth, async (req, res) => {
    const a = await account(req);
    const tokens = await d.emotionTokens.list(a._id);
    sendPage(
      res,
      emotionPage(await appContext(d, req, res, a), {
        tokens: tokens.map((t) => ({ id: t._id, name: t.name, prefix: t.prefix, createdAt: (t as { createdAt?: Date }).createdAt ?? null, revokedAt: t.revokedAt ?? null })),
      }),
    );
  });

  r.post('/emotion/tokens', auth, async (req, res) => {
    const a = await account(req);
    const name = formField(req, 'name').trim().slice(0, 80);
    if (!name) throw new InvalidRequestError('Give the token a name.');
    const created = await d.emotionTokens.create(name, a._id);
    await d.accounts.audit(a._id, 'emotion_token.created', { name, prefix: created.prefix });
    sendPage(res, tokenRevealedPage(await appContext(d, req, res, a), { name, token: created.token }));
  });

  r.post('/emotion/tokens/:id/revoke', auth, async (req, res) => {
    const a = await account(req);
    const id = req.params.id as string;
    const token = (await d.emotionTokens.list(a._id)).find((t) => t._id === id);
    await d.emotionTokens.revoke(id, a._id);
    await d.accounts.audit(a._id, 'emotion_token.revoked', { name: token?.name, prefix: token?.prefix });
    await redirectWithFlash(d, req, res, '/console/emotion', { kind: 'success', text: `Token ${token?.name ?? ''} is revoked; it stops working at once.` });
  });

  r.get('/activity', auth, async (req, res) => {
    const a = await account(req);
    const entries = await d.models.Audit.find({ customerId: a._id }).sort({ at: -1 }).limit(100).lean();
    sendPage(
      res,
      activityPage(await appContext(d, req, res, a), {
        entries: entries.map((e) => ({ action: e.action, detail: (e.detail as Record<string, unknown> | null) ?? null, at: e.at })),
      }),
    );
  });

  return r;
}
