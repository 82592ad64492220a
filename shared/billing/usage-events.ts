// Owns usage events: one document per successful call, keyed by request id (idempotent), never the input.
import type { Models } from '../db/models';
import { isDuplicateKeyError } from '../db/models';
import { hourOf, monthOf } from './month';

export interface UsageEventInput {
  requestId: string;
  service: 'liveness' | 'emotion';
  customerId?: string | null;
  keyId?: string | null;
  tokenId?: string | null;
  plan?: string | null;
  billable: boolean;
  overage: boolean;
  latencyMs: number;
  verdict?: Record<string, unknown> | null;
  at: Date;
  /** The billing month of the reservation (a call that straddles midnight on the 1st bills to its start). */
  month?: string;
}

/** Writes the event; a replay of the same request id is a no-op. Returns false for a replay. */
export async function recordUsageEvent(models: Models, e: UsageEventInput): Promise<boolean> {
  try {
    await models.UsageEvent.create({
      _id: e.requestId,
      service: e.service,
      customerId: e.customerId ?? null,
      keyId: e.keyId ?? null,
      tokenId: e.tokenId ?? null,
      plan: e.plan ?? null,
      month: e.month ?? monthOf(e.at),
      hour: hourOf(e.at),
      billable: e.billable,
      overage: e.overage,
      latencyMs: e.latencyMs,
      verdict: e.verdict ?? null,
      at: e.at,
    });
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

/**
 * Rolls overage events up into one metering record per customer and UTC hour, idempotently
 * (recomputed from events and written with $set), for a marketplace metering job to report.
 */
export async function rollUpOverage(models: Models, hour: string): Promise<number> {
  const events = await models.UsageEvent.find({ overage: true, hour }, { customerId: 1 }).lean();
  const counts = new Map<string, number>();
  for (const ev of events) if (ev.customerId) counts.set(ev.customerId, (counts.get(ev.customerId) ?? 0) + 1);
  for (const [customerId, quantity] of counts) {
    const account = await models.Account.findById(customerId, { marketplace: 1 }).lean();
    await models.MeteringRecord.updateOne(
      { _id: `${customerId}:${hour}` },
      {
        $set: { customerId, hour, quantity, subscriptionId: account?.marketplace?.subscriptionId ?? null },
        $setOnInsert: { dimension: 'overage_calls', reportedAt: null },
      },
      { upsert: true },
    );
  }
  return counts.size;
}
