// Owns the console's usage views beyond the ledger's totals: calls per API key and last use of each
// key (liveness usage events carry keyId), emotion API calls and audio minutes per token, the daily
// CSV (the chart's own numbers) and month-to-date charges. Read-only: events are written by workers.
import type { Models } from '../../shared/db/models';
import type { Account, AccountService } from '../../shared/accounts/account-service';
import type { CreditLedger } from '../../shared/billing/credit-ledger';
import { PLANS } from '../../shared/billing/plans';
import { nextMonthStart, type Clock } from '../../shared/billing/month';

export interface UsageView {
  month: string;
  used: number;
  monthlyLimit: number;
  remaining: number;
  overage: number;
  /** null on the free plan: overage is not available. */
  perCallUsd: number | null;
  overageCostUsd: number | null;
  /** Plan fee + overage calls × price, this month so far. */
  monthToDateUsd: number;
  planFeeUsd: number;
  resetAt: Date;
  daily: Record<string, number>;
}

export interface KeyUsage {
  keyId: string;
  calls: number;
  lastUsedAt: Date | null;
}

export interface TokenUsage {
  tokenId: string;
  calls: number;
  audioSeconds: number;
  lastUsedAt: Date | null;
}

const money = (n: number) => Math.round(n * 100) / 100;

/** The usage numbers exactly as GET /v1/usage computes them, plus the money view. */
export async function usageOf(accounts: AccountService, ledger: CreditLedger, clock: Clock, a: Account): Promise<UsageView> {
  const view = accounts.planView(a);
  const snap = await ledger.snapshot(a._id, view);
  const plan = PLANS[view.plan];
  const perCall = plan.overagePerCallUsd;
  const overageCost = perCall === null ? null : money(snap.overage * perCall);
  return {
    month: snap.month,
    used: snap.used,
    monthlyLimit: snap.monthlyLimit,
    remaining: snap.remaining,
    overage: snap.overage,
    perCallUsd: perCall,
    overageCostUsd: overageCost,
    planFeeUsd: plan.monthlyFeeUsd,
    monthToDateUsd: money(plan.monthlyFeeUsd + (overageCost ?? 0)),
    resetAt: nextMonthStart(clock()),
    daily: snap.daily,
  };
}

/** Every day of the month with its calls: the chart's bars and the CSV's rows. */
export function dailySeries(month: string, daily: Record<string, number>): Array<{ date: string; calls: number }> {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return Array.from({ length: days }, (_, i) => {
    const dd = String(i + 1).padStart(2, '0');
    return { date: `${month}-${dd}`, calls: daily[dd] ?? 0 };
  });
}

export function dailyCsv(month: string, daily: Record<string, number>): string {
  return ['date,calls', ...dailySeries(month, daily).map((r) => `${r.date},${r.calls}`)].join('\r\n') + '\r\n';
}

/**
 * Billable liveness calls this month per key slot id, and the last call made with the slot's current
 * key (since it was created or regenerated; the id stays with the slot).
 */
export async function usageByKey(
  models: Models,
  customerId: string,
  month: string,
  keys: Array<{ id: string; since: Date | null }>,
): Promise<Map<string, KeyUsage>> {
  const keyIds = keys.map((k) => k.id);
  const events = await models.UsageEvent.find({ service: 'liveness', customerId, month, billable: true }, { keyId: 1 }).lean();
  const out = new Map<string, KeyUsage>(keyIds.map((id) => [id, { keyId: id, calls: 0, lastUsedAt: null }]));
  for (const e of events) {
    const k = e.keyId ? out.get(e.keyId) : undefined;
    if (k) k.calls++;
  }
  await Promise.all(
    keys.map(async ({ id, since }) => {
      const last = await models.UsageEvent.findOne({ service: 'liveness', keyId: id, ...(since ? { at: { $gte: since } } : {}) }, { at: 1 })
        .sort({ at: -1 })
        .lean();
      out.get(id)!.lastUsedAt = last?.at ?? null;
    }),
  );
  return out;
}

/** Emotion API calls and audio seconds this month per token, and each token's last call. */
export async function usageByToken(models: Models, month: string, tokenIds: string[]): Promise<Map<string, TokenUsage>> {
  const out = new Map<string, TokenUsage>(tokenIds.map((id) => [id, { tokenId: id, calls: 0, audioSeconds: 0, lastUsedAt: null }]));
  if (tokenIds.length === 0) return out;
  const events = await models.UsageEvent.find({ service: 'emotion', tokenId: { $in: tokenIds }, month }, { tokenId: 1, verdict: 1 }).lean();
  for (const e of events) {
    const t = e.tokenId ? out.get(e.tokenId) : undefined;
    if (!t) continue;
    t.calls++;
    const duration = Number((e.verdict as { duration?: unknown } | null)?.duration);
    if (Number.isFinite(duration) && duration > 0) t.audioSeconds += duration;
  }
  await Promise.all(
    tokenIds.map(async (id) => {
      const last = await models.UsageEvent.findOne({ service: 'emotion', tokenId: id }, { at: 1 }).sort({ at: -1 }).lean();
      out.get(id)!.lastUsedAt = last?.at ?? null;
    }),
  );
  return out;
}
