// Owns the plan pages' view model: an account's plan in effect, hard cap, scheduled change and the request
// waiting for the marketplace, as views/plan.ts (and the Overview) draw them; and which plan a change may go to.
import { InvalidRequestError } from '../../../shared/errors';
import type { Account, AccountService } from '../../../shared/accounts/account-service';
import { isPlanId, type PlanId } from '../../../shared/billing/plans';
import type { PendingPlanChange } from '../views/plan-pending';
import type { PlanState } from '../views/plan';

/** The console request waiting for the marketplace, as the plan page shows it. */
function pendingRequestOf(a: Account): PendingPlanChange | null {
  const p = a.pendingPlanChange;
  if (!p) return null;
  const requestedAt = p.requestedAt ?? null;
  if (p.kind === 'cancel' || p.kind === 'withdraw_scheduled') return { kind: p.kind, requestedAt };
  return p.plan && isPlanId(p.plan) ? { kind: 'plan', plan: p.plan, requestedAt } : null;
}

export function planState(accounts: AccountService, a: Account): PlanState {
  const view = accounts.planView(a);
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

/** The plan a change from `current` may ask for, or InvalidRequestError (400) saying why not. */
export function targetPlan(value: string, current: PlanId): PlanId {
  if (!isPlanId(value)) throw new InvalidRequestError('Choose one of the listed plans.');
  if (value === 'enterprise') throw new InvalidRequestError('Enterprise plans are arranged by contract; contact sales.');
  if (value === current) throw new InvalidRequestError('You are on this plan already.');
  return value;
}
