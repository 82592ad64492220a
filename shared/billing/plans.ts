// Owns the plan table of the liveness spec (monthly calls, fees and overage prices; one source of truth), an
// account's effective plan terms (PlanView: its limit and hard cap as billed), and the proration of a plan change's fee.

export const PLAN_IDS = ['free', 'starter', 'standard', 'professional', 'business', 'enterprise'] as const;
export type PlanId = (typeof PLAN_IDS)[number];

/** The effective billing view of an account at a moment (AccountService.planView). */
export interface PlanView {
  plan: PlanId;
  monthlyLimit: number;
  hardCap: boolean;
}

export interface Plan {
  id: PlanId;
  name: string;
  monthlyCalls: number;
  monthlyFeeUsd: number;
  /** null: overage not available (the hard cap is always on). */
  overagePerCallUsd: number | null;
  rank: number;
}

export const PLANS: Record<PlanId, Plan> = {
  free: { id: 'free', name: 'Free (evaluation)', monthlyCalls: 50, monthlyFeeUsd: 0, overagePerCallUsd: null, rank: 0 },
  starter: { id: 'starter', name: 'Starter', monthlyCalls: 1_000, monthlyFeeUsd: 180, overagePerCallUsd: 0.18, rank: 1 },
  standard: { id: 'standard', name: 'Standard', monthlyCalls: 5_000, monthlyFeeUsd: 750, overagePerCallUsd: 0.15, rank: 2 },
  professional: { id: 'professional', name: 'Professional', monthlyCalls: 10_000, monthlyFeeUsd: 1_200, overagePerCallUsd: 0.12, rank: 3 },
  business: { id: 'business', name: 'Business', monthlyCalls: 30_000, monthlyFeeUsd: 2_400, overagePerCallUsd: 0.08, rank: 4 },
  // Enterprise: 100,000 or more by contract; the account's monthlyLimit overrides this floor.
  enterprise: { id: 'enterprise', name: 'Enterprise', monthlyCalls: 100_000, monthlyFeeUsd: 5_000, overagePerCallUsd: 0.05, rank: 5 },
};

export function isPlanId(value: string): value is PlanId {
  return (PLAN_IDS as readonly string[]).includes(value);
}

/** The monthly credit count of an account: the plan's, or the enterprise contract's. */
export function monthlyLimitOf(plan: PlanId, contractLimit?: number | null): number {
  if (plan === 'enterprise' && contractLimit && contractLimit > 0) return contractLimit;
  return PLANS[plan].monthlyCalls;
}

/** The free plan has no overage: its hard cap is always on whatever the stored flag says. */
export function effectiveHardCap(plan: PlanId, hardCapFlag: boolean): boolean {
  return plan === 'free' ? true : hardCapFlag;
}

/**
 * The plan-fee difference a change owes for the rest of its effective UTC month, in US cents (negative: the
 * month costs less). Prorated by whole UTC days, the day the change takes effect included: an upgrade on
 * the 16th of a 30-day month owes 15/30 of (new fee − old fee); a downgrade takes effect on the 1st and so
 * changes the whole month's fee. Enterprise fees are by contract: the public floor is used.
 */
export function proratedFeeDifferenceCents(from: PlanId, to: PlanId, effectiveAt: Date): number {
  const daysInMonth = new Date(Date.UTC(effectiveAt.getUTCFullYear(), effectiveAt.getUTCMonth() + 1, 0)).getUTCDate();
  const daysLeft = daysInMonth - effectiveAt.getUTCDate() + 1;
  return Math.round(((PLANS[to].monthlyFeeUsd - PLANS[from].monthlyFeeUsd) * 100 * daysLeft) / daysInMonth);
}
