// Owns monthly credits: reserve before enqueuing, commit on success (by the worker), release on failure.
// One tally document per customer and UTC month; reserve/commit/release are each one atomic update,
// and commit and release are mutually exclusive because both require the reservation to still exist.
import type { Models, TallyDoc } from '../db/models';
import { isDuplicateKeyError } from '../db/models';
import type { PlanView } from '../accounts/account-service';
import { monthOf, type Clock } from './month';

export interface UsageSnapshot {
  month: string;
  used: number;
  overage: number;
  monthlyLimit: number;
  remaining: number;
  /** Committed calls per UTC day of the month ('01'..'31'). */
  daily: Record<string, number>;
}

export type ReserveResult = { ok: true; month: string } | { ok: false; reason: 'quota_exceeded'; month: string };

export interface CommitResult {
  /** False when the reservation was already released (the API gave up) or committed before. */
  committed: boolean;
  overage: boolean;
  snapshot: UsageSnapshot | null;
}

/** A reservation older than this was orphaned by a crashed API process; sweeping releases it. */
export const STALE_RESERVATION_MS = 120_000;

const tallyId = (customerId: string, month: string) => `${customerId}:${month}`;

export class CreditLedger {
  constructor(
    private readonly models: Models,
    private readonly clock: Clock,
  ) {}

  /** Takes one credit for `requestId`, atomically refusing past the limit when the hard cap is on. */
  async reserve(customerId: string, plan: PlanView, requestId: string): Promise<ReserveResult> {
    const month = monthOf(this.clock());
    const _id = tallyId(customerId, month);
    const filter: Record<string, unknown> = { _id };
    if (plan.hardCap) filter.calls = { $lt: plan.monthlyLimit };
    try {
      const doc = await this.models.Tally.findOneAndUpdate(
        filter,
        {
          $inc: { calls: 1 },
          $set: { [`pending.${requestId}`]: this.clock().getTime() },
          $setOnInsert: { customerId, month },
        },
        { upsert: true, new: true, projection: { _id: 1 } },
      ).lean();
      if (doc) return { ok: true, month };
    } catch (err) {
      // The upsert collides with the existing document when the filter's limit test failed.
      if (!isDuplicateKeyError(err)) throw err;
    }
    if (plan.hardCap && (await this.sweepStale(customerId, month)) > 0) return this.reserve(customerId, plan, requestId);
    return { ok: false, reason: 'quota_exceeded', month };
  }

  /** Turns a reservation into a billed call. Decides overage from the committed count. */
  async commit(customerId: string, month: string, requestId: string, plan: PlanView): Promise<CommitResult> {
    const day = this.clock().toISOString().slice(8, 10);
    const doc = await this.models.Tally.findOneAndUpdate(
      { _id: tallyId(customerId, month), [`pending.${requestId}`]: { $exists: true } },
      { $inc: { used: 1, [`daily.${day}`]: 1 }, $unset: { [`pending.${requestId}`]: '' } },
      { new: true },
    ).lean();
    if (!doc) return { committed: false, overage: false, snapshot: null };
    const overage = !plan.hardCap && doc.used > plan.monthlyLimit;
    if (overage) {
      const updated = await this.models.Tally.findOneAndUpdate(
        { _id: doc._id },
        { $inc: { overage: 1 } },
        { new: true },
      ).lean();
      return { committed: true, overage, snapshot: this.toSnapshot(updated ?? doc, plan) };
    }
    return { committed: true, overage, snapshot: this.toSnapshot(doc, plan) };
  }

  /** Returns a reservation's credit; a no-op when the worker already committed it. */
  async release(customerId: string, month: string, requestId: string): Promise<boolean> {
    const doc = await this.models.Tally.findOneAndUpdate(
      { _id: tallyId(customerId, month), [`pending.${requestId}`]: { $exists: true } },
      { $inc: { calls: -1 }, $unset: { [`pending.${requestId}`]: '' } },
      { projection: { _id: 1 } },
    ).lean();
    return doc !== null;
  }

  /** Releases reservations orphaned by a crashed process. Returns how many were released. */
  async sweepStale(customerId: string, month: string): Promise<number> {
    const doc = await this.models.Tally.findById(tallyId(customerId, month), { pending: 1 }).lean();
    const cutoff = this.clock().getTime() - STALE_RESERVATION_MS;
    let released = 0;
    for (const [requestId, at] of Object.entries((doc?.pending ?? {}) as Record<string, number>)) {
      if (at < cutoff && (await this.release(customerId, month, requestId))) released++;
    }
    return released;
  }

  async snapshot(customerId: string, plan: PlanView): Promise<UsageSnapshot> {
    const month = monthOf(this.clock());
    const doc = await this.models.Tally.findById(tallyId(customerId, month)).lean();
    return this.toSnapshot(doc, plan, month);
  }

  private toSnapshot(doc: (TallyDoc & { _id: string }) | null, plan: PlanView, month?: string): UsageSnapshot {
    const used = doc?.used ?? 0;
    return {
      month: doc?.month ?? month ?? monthOf(this.clock()),
      used,
      overage: plan.hardCap && !doc?.overage ? 0 : (doc?.overage ?? 0),
      monthlyLimit: plan.monthlyLimit,
      remaining: Math.max(0, plan.monthlyLimit - used),
      daily: (doc?.daily ?? {}) as Record<string, number>,
    };
  }
}
