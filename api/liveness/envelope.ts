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

export const UNKNOWN: QuotaView = { customerId: null, remaining: null, overLimit: null };

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

/** A 200 answer: the caller's credits (as the call left them) in the metadata and the quota headers. */
export function sendSuccess(res: Response, clock: Clock, data: unknown, q: QuotaView = UNKNOWN): void {
  setQuotaHeaders(res, q, clock);
  res.status(200).json({ metadata: metadata(clock, 'success', q), data });
}

/** An error that knows the caller's credits (e.g. quota_exceeded: none left). */
export interface CarriesQuota {
  readonly quota: QuotaView;
}

function carriedQuota(err: AppError): QuotaView | null {
  const q = (err as Partial<CarriesQuota>).quota;
  return q && typeof q === 'object' ? q : null;
}

/**
 * The error envelope. Its credits: those the error carries, else `lookUp` (the caller's snapshot, best effort and
 * bounded by the request's deadline), else unknown.
 */
export function renderError(clock: Clock, lookUp: (req: Request) => Promise<QuotaView> = async () => UNKNOWN) {
  return async (err: AppError, req: Request, res: Response) => {
    const q = carriedQuota(err) ?? (await lookUp(req).catch(() => UNKNOWN));
    setQuotaHeaders(res, q, clock);
    return { metadata: metadata(clock, 'error', q), error: { code: err.code, message: err.message } };
  };
}
