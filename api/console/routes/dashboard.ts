// Owns the signed-in dashboard: usage (chart, CSV, per key), keys (regenerate with confirmation,
// shown once after a redirect), plan changes and the hard cap (each confirmed first), emotion API
// tokens and usage, and the activity list. Every state change is POST → 303 → GET. Regenerate, token creation,
// hard cap off, plan changes and cancelling need a recent proof of identity (step-up.ts); plan changes, cancelling
// and withdrawing a scheduled change are requests the marketplace confirms (docs/billing.md).
import { Router, type Request } from 'express';
import { InvalidRequestError, NotFoundError } from '../../../shared/errors';
import type { Account } from '../../../shared/accounts/account-service';
import type { KeySlot } from '../../../shared/accounts/api-keys';
import { MAX_LIVE_TOKENS_PER_ACCOUNT } from '../../../shared/accounts/emotion-tokens';
import { isPlanId, PLANS, type PlanId } from '../../../shared/billing/plans';
import { monthAfter, monthOf } from '../../../shared/billing/month';
import { requireStage } from '../http';
import {
  activityPage,
  alreadyShownPage,
  emotionPage,
  hardCapOffConfirmPage,
  keyRevealedPage,
  keysPage,
  overviewPage,
  planChangeConfirmPage,
  planPage,
  regenerateConfirmPage,
  revokeConfirmPage,
  tokenRevealedPage,
  type KeyView,
  type PlanState,
  type TokenView,
} from '../views/dashboard';
import type { PendingPlanChange } from '../views/plan-pending';
import { appContext, signedInAccount, baseUrl, emotionBaseUrl, formField, redirectToReveal, redirectWithFlash, sendPage, type ConsoleDeps } from '../context';
import { dailyCsv, usageByKey, usageByToken, usageOf } from '../usage';
import { requireRecentProof } from '../step-up';
import { unspentRecoveryCodes } from '../recovery-codes';

function slotOf(value: string | undefined): KeySlot {
  if (value === 'primary' || value === 'secondary') return value;
  throw new NotFoundError('No such key');
}

/** The console request waiting for the marketplace, as the plan page shows it. */
function pendingRequestOf(a: Account): PendingPlanChange | null {
  const p = a.pendingPlanChange;
  if (!p) return null;
  const requestedAt = p.requestedAt ?? null;
  if (p.kind === 'cancel' || p.kind === 'withdraw_scheduled') return { kind: p.kind, requestedAt };
  return p.plan && isPlanId(p.plan) ? { kind: 'plan', plan: p.plan, requestedAt } : null;
}

export function dashboardRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');

  const account = (req: Request) => signedInAccount(d, req);

  const usage = (a: Account) => usageOf(d.accounts, d.ledger, d.clock, a);

  function planState(a: Account): PlanState {
    const view = d.accounts.planView(a);
    const s = a.scheduledChange;
    return {
      plan: view.plan,
      monthlyLimit: view.monthlyLimit,
      hardCap: view.hardCap,
      status: a.status,
      scheduled: s?.effectiveMonth ? { plan: (s.plan as PlanId | null) ?? null, cancel: !!s.cancel, effectiveMonth: s.effectiveMonth } : null,
      pending: pendingRequestOf(a),
    };
  }

  async function keyViews(a: Account, month: string): Promise<KeyView[]> {
    const keys = await d.apiKeys.keyPrefixes(a._id);
    const byKey = await usageByKey(
      d.models,
      a._id,
      month,
      keys.map((k) => ({ id: k.id, since: k.rotatedAt })),
    );
    return keys.map((k) => ({
      id: k.id,
      slot: k.slot,
      prefix: k.prefix,
      createdAt: k.rotatedAt,
      lastUsedAt: byKey.get(k.id)?.lastUsedAt ?? null,
      callsThisMonth: byKey.get(k.id)?.calls ?? 0,
    }));
  }

  async function tokenViews(a: Account, month: string): Promise<TokenView[]> {
    const tokens = await d.emotionTokens.list(a._id);
    const byToken = await usageByToken(
      d.models,
      month,
      tokens.map((t) => t._id),
    );
    return tokens.map((t) => {
      const u = byToken.get(t._id);
      return {
        id: t._id,
        name: t.name,
        prefix: t.prefix,
        createdAt: (t as { createdAt?: Date }).createdAt ?? null,
        revokedAt: t.revokedAt ?? null,
        lastUsedAt: u?.lastUsedAt ?? null,
        calls: u?.calls ?? 0,
        audioSeconds: u?.audioSeconds ?? 0,
      };
    });
  }

  r.get('/', auth, (_req, res) => res.redirect(303, '/console/dashboard'));

  r.get('/dashboard', auth, async (req, res) => {
    const a = await account(req);
    const u = await usage(a);
    const [keys, signIns] = await Promise.all([keyViews(a, u.month), d.audit.count(a._id, 'console.sign_in')]);
    sendPage(
      res,
      overviewPage(await appContext(d, req, res, a), {
        usage: u,
        plan: planState(a),
        keys,
        firstName: a.firstName ?? '',
        firstVisit: signIns <= 1,
        recoveryCodesLeft: await unspentRecoveryCodes(d.redis, d.config.QUEUE_PREFIX, a),
        apiBase: baseUrl(d, req),
        usageAlerts: !!a.usageAlerts,
      }),
    );
  });

  /** The daily chart's numbers as CSV (this month; the same series the chart and its table draw). */
  r.get('/usage.csv', auth, async (req, res) => {
    const a = await account(req);
    const u = await usage(a);
    res.setHeader('Content-Disposition', `attachment; filename="usage-${u.month}.csv"`);
    res.type('text/csv; charset=utf-8').send(dailyCsv(u.month, u.daily));
  });

  r.get('/keys', auth, async (req, res) => {
    const a = await account(req);
    const month = monthOf(d.clock());
    sendPage(res, keysPage(await appContext(d, req, res, a), { keys: await keyViews(a, month), month }));
  });

  r.get('/keys/:slot/regenerate', auth, async (req, res) => {
    const a = await account(req);
    const slot = slotOf(req.params.slot as string);
    const key = (await d.apiKeys.keyPrefixes(a._id)).find((k) => k.slot === slot);
    if (!key) throw new NotFoundError('No such key');
    sendPage(res, regenerateConfirmPage(await appContext(d, req, res, a), { slot, prefix: key.prefix }));
  });

  r.post('/keys/:slot/regenerate', auth, requireRecentProof(d, { what: 'regenerate this key', nav: 'keys' }), async (req, res) => {
    const a = await account(req);
    const slot = slotOf(req.params.slot as string);
    // regenerate() audits and replaces the stored hash: the old key answers 401 from now on.
    const key = await d.apiKeys.regenerate(a._id, slot);
    await redirectToReveal(d, req, res, `/console/keys/${slot}/new`, { kind: 'api-key', slot, key });
  });

  r.get('/keys/:slot/new', auth, async (req, res) => {
    const a = await account(req);
    const slot = slotOf(req.params.slot as string);
    const reveal = await d.reveals.take(req.consoleSession?.id, 'api-key');
    const ctx = await appContext(d, req, res, a);
    if (!reveal || reveal.slot !== slot) {
      return sendPage(
        res,
        alreadyShownPage(ctx, {
          nav: 'keys',
          what: 'This key',
          back: { href: '/console/keys', label: 'Back to API keys' },
          again: 'Lost it? Regenerate the key again from the API keys page.',
        }),
      );
    }
    sendPage(res, keyRevealedPage(ctx, { slot, key: reveal.key }));
  });

  r.get('/plan', auth, async (req, res) => {
    const a = await account(req);
    sendPage(res, planPage(await appContext(d, req, res, a), { plan: planState(a), usage: await usage(a) }));
  });

  function targetPlan(value: string, current: PlanId): PlanId {
    if (!isPlanId(value)) throw new InvalidRequestError('Choose one of the listed plans.');
    if (value === 'enterprise') throw new InvalidRequestError('Enterprise plans are arranged by contract; contact sales.');
    if (value === current) throw new InvalidRequestError('You are on this plan already.');
    return value;
  }

  r.get('/plan/change', auth, async (req, res) => {
    const a = await account(req);
    const state = planState(a);
    const to = targetPlan(typeof req.query.plan === 'string' ? req.query.plan : '', state.plan);
    const up = PLANS[to].rank > PLANS[state.plan].rank;
    const effectiveMonth = up ? null : monthAfter(monthOf(d.clock()));
    sendPage(res, planChangeConfirmPage(await appContext(d, req, res, a), { from: state, to, usage: await usage(a), effectiveMonth }));
  });

  // The console only asks: the marketplace owns the subscription, and its entitlement event applies the change
  // (shared/marketplace/entitlements.ts). Until then the plan page shows it as pending.
  r.post('/plan/change', auth, requireRecentProof(d, { what: 'change your plan', nav: 'plan' }), async (req, res) => {
    const a = await account(req);
    const plan = targetPlan(formField(req, 'plan'), a.plan);
    await d.accounts.requestPlanChange(a._id, plan);
    await redirectWithFlash(d, req, res, '/console/plan#pending-change', {
      kind: 'info',
      text: `Your change to the ${PLANS[plan].name} plan is pending: it applies when the marketplace confirms it.`,
    });
  });

  r.post('/plan/pending/withdraw', auth, async (req, res) => {
    const a = await account(req);
    // NotFoundError (404 not_found) when nothing is pending: the error page says so.
    await d.accounts.withdrawPlanChangeRequest(a._id);
    await redirectWithFlash(d, req, res, '/console/plan', { kind: 'success', text: 'The plan change request is withdrawn. Your current plan continues.' });
  });

  // A cancellation and withdrawing a scheduled change are requests too: the marketplace's event applies them
  // (unsubscribe.pending; an entitlement for the plan in effect). Cancelling is a plan change: it needs a proof.
  r.post('/plan/cancel', auth, requireRecentProof(d, { what: 'cancel your subscription', nav: 'plan' }), async (req, res) => {
    const a = await account(req);
    await d.accounts.requestCancellation(a._id);
    await redirectWithFlash(d, req, res, '/console/plan#pending-change', {
      kind: 'info',
      text: 'Your cancellation is pending: it is scheduled for the end of the month when the marketplace confirms it.',
    });
  });

  r.post('/plan/scheduled/withdraw', auth, async (req, res) => {
    const a = await account(req);
    // NotFoundError (404 not_found) when there is nothing scheduled: the error page says so.
    await d.accounts.requestScheduledChangeWithdrawal(a._id);
    await redirectWithFlash(d, req, res, '/console/plan#pending-change', {
      kind: 'info',
      text: 'Withdrawing the scheduled change is pending: it stays scheduled until the marketplace confirms your current plan continues.',
    });
  });

  r.get('/hard-cap/off', auth, async (req, res) => {
    const a = await account(req);
    const state = planState(a);
    if (state.plan === 'free') throw new InvalidRequestError('The free plan always has the hard cap on.');
    if (!state.hardCap) return res.redirect(303, '/console/plan');
    sendPage(res, hardCapOffConfirmPage(await appContext(d, req, res, a), { plan: state, usage: await usage(a) }));
  });

  // ON is safe and immediate; OFF can cost money, so it needs a recent proof of identity.
  const hardCapOff = requireRecentProof(d, { what: 'switch the hard cap off', nav: 'plan', when: (req) => formField(req, 'on') === 'off' });
  r.post('/hard-cap', auth, hardCapOff, async (req, res) => {
    const a = await account(req);
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

  r.get('/emotion', auth, async (req, res) => {
    const a = await account(req);
    const month = monthOf(d.clock());
    sendPage(res, emotionPage(await appContext(d, req, res, a), { tokens: await tokenViews(a, month), month, apiBase: emotionBaseUrl(d, req) }));
  });

  r.post('/emotion/tokens', auth, requireRecentProof(d, { what: 'create an emotion API token', nav: 'emotion' }), async (req, res) => {
    const a = await account(req);
    const name = formField(req, 'name').trim().slice(0, 80);
    const month = monthOf(d.clock());
    const again = async (error: string) =>
      sendPage(
        res,
        emotionPage(await appContext(d, req, res, a), { tokens: await tokenViews(a, month), month, apiBase: emotionBaseUrl(d, req), name, nameError: error }),
        400,
      );
    if (!name) return again('Give the token a name.');
    // Names are unique per account (revoked tokens included), so the list and the activity log stay unambiguous.
    const lockKey = `${d.config.QUEUE_PREFIX}:console:token-name:${a._id}`;
    if ((await d.redis.set(lockKey, '1', 'EX', 10, 'NX')) !== 'OK') return again('Another token is being created; try again in a moment.');
    let created;
    try {
      const tokens = await d.emotionTokens.list(a._id);
      if (tokens.some((t) => t.name.toLowerCase() === name.toLowerCase())) return again(`You already have a token named “${name}”. Choose another name.`);
      // Counted under the lock above, so concurrent creations cannot pass the cap together.
      if (tokens.filter((t) => !t.revokedAt).length >= MAX_LIVE_TOKENS_PER_ACCOUNT) {
        return again(`An account can hold at most ${MAX_LIVE_TOKENS_PER_ACCOUNT} active tokens. Revoke one you no longer use, then create the new one.`);
      }
      created = await d.emotionTokens.create(name, a._id);
    } finally {
      await d.redis.del(lockKey);
    }
    await d.audit.record(a._id, 'emotion_token.created', { name, prefix: created.prefix });
    await redirectToReveal(d, req, res, '/console/emotion/tokens/new', { kind: 'emotion-token', name, token: created.token });
  });

  r.get('/emotion/tokens/new', auth, async (req, res) => {
    const a = await account(req);
    const reveal = await d.reveals.take(req.consoleSession?.id, 'emotion-token');
    const ctx = await appContext(d, req, res, a);
    if (!reveal) {
      return sendPage(
        res,
        alreadyShownPage(ctx, {
          nav: 'emotion',
          what: 'This token',
          back: { href: '/console/emotion', label: 'Back to Emotion API' },
          again: 'Lost it? Revoke it and create a new one.',
        }),
      );
    }
    sendPage(res, tokenRevealedPage(ctx, { name: reveal.name, token: reveal.token }));
  });

  async function ownToken(a: Account, id: string): Promise<TokenView> {
    const token = (await tokenViews(a, monthOf(d.clock()))).find((t) => t.id === id && !t.revokedAt);
    if (!token) throw new NotFoundError('There is no active token with this id on your account.');
    return token;
  }

  r.get('/emotion/tokens/:id/revoke', auth, async (req, res) => {
    const a = await account(req);
    sendPage(res, revokeConfirmPage(await appContext(d, req, res, a), { token: await ownToken(a, req.params.id as string) }));
  });

  r.post('/emotion/tokens/:id/revoke', auth, async (req, res) => {
    const a = await account(req);
    const token = await ownToken(a, req.params.id as string);
    await d.emotionTokens.revoke(token.id, a._id);
    await d.audit.record(a._id, 'emotion_token.revoked', { name: token.name, prefix: token.prefix });
    await redirectWithFlash(d, req, res, '/console/emotion', { kind: 'success', text: `Token “${token.name}” is revoked; it stops working at once.` });
  });

  r.get('/activity', auth, async (req, res) => {
    const a = await account(req);
    sendPage(res, activityPage(await appContext(d, req, res, a), { entries: await d.audit.recent(a._id, 100) }));
  });

  return r;
}
