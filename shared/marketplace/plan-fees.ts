// Owns the plan-fee metering records (dimension `plan_fee_cents`, docs/billing.md "Plans, fees and metering"):
// one per plan change, keyed `<customerId>:fee:<change id>` so writing it again is harmless, and the voiding of
// the record of a scheduled downgrade that will not happen. Both are idempotent, so a marketplace event that
// stopped half way completes them on its retry (shared/marketplace/apply-entitlement.ts).
import type { Models } from '../db/models';
import { hourOf } from '../billing/month';
import { proratedFeeDifferenceCents, type PlanId } from '../billing/plans';

/** What a fee record is computed from: the account before the change. */
export interface FeeSubject {
  customerId: string;
  subscriptionId: string | null;
  previousPlan: PlanId;
}

/** The plan-fee metering record of one change (idempotent by change id), for the marketplace metering job. */
export async function recordPlanFee(models: Models, subject: FeeSubject, plan: PlanId, effectiveAt: Date, changeId: string): Promise<void> {
  await models.MeteringRecord.updateOne(
    { _id: `${subject.customerId}:fee:${changeId}` },
    {
      $set: {
        customerId: subject.customerId,
        subscriptionId: subject.subscriptionId,
        hour: hourOf(effectiveAt),
        dimension: 'plan_fee_cents',
        quantity: proratedFeeDifferenceCents(subject.previousPlan, plan, effectiveAt),
        plan,
        previousPlan: subject.previousPlan,
        effectiveAt,
      },
      $setOnInsert: { reportedAt: null },
    },
    { upsert: true },
  );
}

/**
 * Voids the fee record of the scheduled downgrade `changeId` that will not happen (withdrawn or replaced):
 * deleted while unreported, else answered by a reversing record, so the metered fees always match the changes
 * made. Harmless to repeat.
 */
export async function voidScheduledFee(models: Models, customerId: string, changeId: string | null | undefined): Promise<void> {
  if (!changeId) return;
  const id = `${customerId}:fee:${changeId}`;
  const removed = await models.MeteringRecord.deleteOne({ _id: id, reportedAt: null });
  if (removed.deletedCount === 1) return;
  const reported = await models.MeteringRecord.findById(id).lean();
  if (!reported) return;
  const { _id: _reportedId, reportedAt: _reportedAt, ...record } = reported;
  await models.MeteringRecord.updateOne(
    { _id: `${id}:void` },
    { $set: { ...record, quantity: -record.quantity, plan: record.previousPlan, previousPlan: record.plan }, $setOnInsert: { reportedAt: null } },
    { upsert: true },
  );
}
