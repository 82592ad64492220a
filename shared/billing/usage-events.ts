// Owns usage events: one document per successful call, keyed by request id (idempotent), never the input.
// They are written through the outbox (usage-outbox.ts); this module keeps their shape and the overage roll-up.
import type { Models } from '../db/models';

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
