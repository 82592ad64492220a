// Owns the liveness API's response envelope: `metadata` + `data`, or `metadata` + `error`.
import type { Request, Response } from 'express';
import type { AppError } from '../../shared/errors';
import { LIVENESS_API_VERSION } from '../../shared/version';
import { nextMonthStart, type Clock } from '../../shared/billing/month';
import type { UsageSnapshot } from '../../shared/billing/credit-ledger';

/** What the envelope says about the caller's credits; null fields when the caller is unknown. */
export interface QuotaView {
  customerId: string | null;
  remaining: number | null;
  overLimit: number | null;
  monthlyLimit?: number;
}

export interface Metadata {
  date: string;
  ver: string;
  customer_id: string | null;
  remaining_calls: number | null;
  over_limit_calls: number | null;
  status: 'success' | 'error';
}

const UNKNOWN: QuotaView = { customerId: null, remaining: null, overLimit: null };

export function metadata(clock: Clock, status: Metadata['status'], q: QuotaView = UNKNOWN): Metadata {
  return {
    date: clock().toISOString(),
    ver: LIVENESS_API_VERSION,
    customer_id: q.customerId,
    remaining_calls: q.remaining === null ? null : Math.max(0, q.remaining),
    over_limit_calls: q.overLimit,
    status,
  };
}

/** Each response's quota, typed and private to these accessors (rather than an untyped `res.locals` entry). */
const quotas = new WeakMap<Response, QuotaView>();

/** The caller's quota as known for this response (set by auth, refreshed after billing). */
export function quotaOf(res: Response): QuotaView {
  return quotas.get(res) ?? UNKNOWN;
}

/** Records what this response will say about the caller's credits (metadata and X-Quota-* headers). */
export function setQuota(res: Response, quota: QuotaView): void {
  quotas.set(res, quota);
}

/** The quota view of a ledger snapshot. */
export function quotaFromSnapshot(customerId: string, usage: UsageSnapshot): QuotaView {
  return { customerId, remaining: usage.remaining, overLimit: usage.overage, monthlyLimit: usage.monthlyLimit };
}

/** Quota headers on every authenticated response: monthly limit, remaining credits, reset at the UTC month end. */
export function setQuotaHeaders(res: Response, q: QuotaView, clock: Clock): void {
  if (q.customerId === null || q.remaining === null) return;
  if (q.monthlyLimit !== undefined) res.setHeader('X-Quota-Limit', String(q.monthlyLimit));
  res.setHeader('X-Quota-Remaining', String(Math.max(0, q.remaining)));
  res.setHeader('X-Quota-Reset', nextMonthStart(clock()).toISOString());
}

export function sendSuccess(res: Response, clock: Clock, data: unknown): void {
  const q = quotaOf(res);
  setQuotaHeaders(res, q, clock);
  res.status(200).json({ metadata: metadata(clock, 'success', q), data });
}

export function renderError(clock: Clock) {
  return (err: AppError, _req: Request, res: Response) => {
    const q = quotaOf(res);
    setQuotaHeaders(res, q, clock);
    return { metadata: metadata(clock, 'error', q), error: { code: err.code, message: err.message } };
  };
}
