// Owns the console's usage views beyond the ledger's totals: calls per API key and last use of each
// key, emotion API calls and audio minutes per token, the daily CSV (the chart's own numbers) and
// month-to-date charges. Read-only, and only through indexes (`_id`; an emotion token's by `owner`): the usage counter documents the drainer keeps
// (shared/billing/usage-counters.ts), never the usage events (a scan on FerretDB, and unbounded). They
// trail the answers by the drainer's batch window (under a second).
import type { Models, UsageCounterDoc } from '../../shared/db/models';
import { counterId, lastUses } from '../../shared/billing/usage-counters';
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

const counterDoc = async (models: Models, id: string) => (await models.UsageCounter.findById(id).lean()) as UsageCounterDoc | null;

/**
 * Billable liveness calls this month per key slot id, and the last call made with the slot's current
 * key (since it was created or regenerated; the id stays with the slot): this customer's month documents.
 */
export async function usageByKey(
  models: Models,
  customerId: string,
  month: string,
  keys: Array<{ id: string; since: Date | null }>,
): Promise<Map<string, KeyUsage>> {
  const [counts, lastAt] = await Promise.all([
    counterDoc(models, counterId('liveness', customerId, month)),
    lastUses(
      models,
      'liveness',
      customerId,
      month,
      keys.map((k) => k.id),
    ),
  ]);
  const calls = (counts?.keys ?? {}) as Record<string, number>;
  return new Map(
    keys.map(({ id, since }) => {
      const at = lastAt[id] ?? null;
      return [id, { keyId: id, calls: calls[id] ?? 0, lastUsedAt: at && (!since || at >= since) ? at : null }];
    }),
  );
}

/**
 * Emotion API calls and audio seconds this month per token, and each token's last call: one read per token of
 * all its month documents (the `owner`/`service` index), whatever the token's age.
 */
export async function usageByToken(models: Models, month: string, tokenIds: string[]): Promise<Map<string, TokenUsage>> {
  const rows = await Promise.all(
    tokenIds.map(async (id): Promise<[string, TokenUsage]> => {
      const docs = await models.UsageCounter.find({ owner: id, service: 'emotion' }, { month: 1, calls: 1, audioSeconds: 1, last: 1 }).lean();
      const now = docs.find((doc) => doc.month === month);
      const lasts = docs.map((doc) => (doc.last as Record<string, Date> | undefined)?.token).filter((at): at is Date => !!at);
      const lastUsedAt = lasts.length === 0 ? null : new Date(Math.max(...lasts.map((at) => new Date(at).getTime())));
      return [id, { tokenId: id, calls: now?.calls ?? 0, audioSeconds: now?.audioSeconds ?? 0, lastUsedAt }];
    }),
  );
  return new Map(rows);
}
