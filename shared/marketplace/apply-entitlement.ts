// Owns applying one signed entitlement event (entitlements.ts) to its account, in order and to the end:
//  - Order: the account keeps the newest event applied as `marketplace.lastEvent` (the subscription's high-water
//    mark: id and `occurredAt`). An event no newer than the mark is answered `stale` and changes nothing. A newer
//    one's change and the new mark are one `$set` on the account, guarded by "the mark is still the one read"
//    (a single-document conditional update, the same on FerretDB 1.24 and MongoDB 7): the change was planned
//    from the account as that mark left it.
//  - To the end: the mark also holds what the change leaves to do on other documents (the voided and the new
//    fee record, the audit entry), each idempotent. They are done after the account's update and the mark is
//    then stamped `completedAt`; a delivery of the same event that finds the mark unstamped (the first stopped
//    half way) does them and answers as the first would have.
//  - Once: an event id is claimed in Redis while it is applied and remembered there for EVENT_ID_KEEP_S after,
//    so a redelivery, even of an event since overtaken by a newer one, is answered `already_applied`.
//  - Kept: the account's update is read back (shared/db/verified-update.ts) before anything answers `applied`.
// docs/billing.md "The events" states the answers and the windows.
import type { Redis } from 'ioredis';
import type { Account, AccountService } from '../accounts/account-service';
import { AuditLog } from '../accounts/audit-log';
import type { Clock } from '../billing/month';
import { monthAfter, monthOf, nextMonthStart } from '../billing/month';
import { PLANS, type PlanId } from '../billing/plans';
import type { Models } from '../db/models';
import { updateVerified } from '../db/verified-update';
import { InvalidRequestError, NotFoundError, ServiceUnavailableError } from '../errors';
import type { EntitlementEvent, EntitlementOutcome } from './entitlements';
import { recordPlanFee, voidScheduledFee } from './plan-fees';

/**
 * How long an applied event id is remembered: AWS Marketplace delivers its notifications through an SQS queue,
 * whose messages are kept (and redelivered until deleted) for at most 14 days.
 */
const EVENT_ID_KEEP_S = 14 * 86_400;
/** A claim outlives one application by far; a process that died holding it frees the event after this. */
const CLAIM_S = 30;
/** How long a concurrent delivery of an event being applied waits for that one's outcome. */
const CLAIM_WAIT_MS = 3_000;
const CLAIM_POLL_MS = 25;
const DONE = 'done';
const APPLYING = 'applying';

/** What an applied change still has to do outside the account document. */
interface Effects {
  /** The scheduled downgrade (its change id) whose fee record is voided. */
  voidFeeOf: string | null;
  fee: { plan: PlanId; previousPlan: PlanId; effectiveAt: Date } | null;
  audit: { action: string; detail: Record<string, unknown> } | null;
  /** The account's keys' cached authentications are dropped. */
  accountChanged: boolean;
}

/** `marketplace.lastEvent` on the account. */
interface EventMark {
  id: string;
  at: Date;
  outcome: EntitlementOutcome;
  effects: Effects;
  subscriptionId: string | null;
  completedAt: Date | null;
}

export interface ApplyDeps {
  accounts: AccountService;
  models: Models;
  redis: Redis;
  prefix: string;
  clock: Clock;
}

/** The change `event` makes to `account` as it is now: the account fields to set, what follows, the answer. */
function planChange(account: Account, event: EntitlementEvent, now: Date): { set: Record<string, unknown>; effects: Effects; outcome: EntitlementOutcome } {
  const customerId = account._id;
  const by = { by: 'marketplace', changeId: event.id };
  const none: Effects = { voidFeeOf: null, fee: null, audit: null, accountChanged: false };
  const scheduledFee = account.scheduledChange?.changeId ?? null;
  if (event.type === 'unsubscribe.success') {
    if (account.status === 'cancelled') return { set: {}, effects: none, outcome: { status: 'unchanged', customerId } };
    return {
      set: { status: 'cancelled', scheduledChange: null, pendingPlanChange: null },
      effects: { ...none, accountChanged: true, audit: { action: 'status.cancelled', detail: { effectiveAt: now.toISOString(), ...by } } },
      outcome: { status: 'applied', customerId, subscription: 'ended', effective: 'now' },
    };
  }
  if (account.status === 'cancelled') throw new InvalidRequestError(`subscription ${event.subscriptionId} has ended`);
  const effectiveMonth = monthAfter(monthOf(now));
  const effectiveAt = nextMonthStart(now);
  if (event.type === 'unsubscribe.pending') {
    if (account.scheduledChange?.cancel) return { set: {}, effects: none, outcome: { status: 'unchanged', customerId } };
    return {
      set: { scheduledChange: { plan: null, cancel: true, effectiveMonth, requestedAt: now, changeId: event.id }, pendingPlanChange: null },
      effects: {
        ...none,
        voidFeeOf: scheduledFee,
        accountChanged: true,
        audit: { action: 'plan.cancellation_scheduled', detail: { effectiveMonth, effectiveAt: effectiveAt.toISOString(), ...by } },
      },
      outcome: { status: 'applied', customerId, subscription: 'ending', effective: effectiveMonth },
    };
  }
  const plan = event.plan;
  if (account.plan === plan) {
    const scheduled = account.scheduledChange;
    if (scheduled) {
      // The subscription continues on the plan in effect: a scheduled downgrade or cancellation is withdrawn.
      return {
        set: { scheduledChange: null, pendingPlanChange: null },
        effects: {
          ...none,
          voidFeeOf: scheduledFee,
          accountChanged: true,
          audit: {
            action: 'plan.scheduled_change_withdrawn',
            detail: { ...(scheduled.cancel ? { cancel: true } : { to: scheduled.plan }), effectiveAt: now.toISOString(), ...by },
          },
        },
        outcome: { status: 'applied', customerId, plan, effective: 'now' },
      };
    }
    // A confirmation of the plan in effect: a pending console request for a plan is settled by it.
    const pending = account.pendingPlanChange;
    if (pending && pending.kind !== 'cancel') {
      return {
        set: { pendingPlanChange: null },
        effects: { ...none, audit: { action: 'plan.change_request_withdrawn', detail: { kind: pending.kind ?? 'plan' } } },
        outcome: { status: 'unchanged', customerId, plan },
      };
    }
    return { set: {}, effects: none, outcome: { status: 'unchanged', customerId, plan } };
  }
  const from = account.plan;
  if (PLANS[plan].rank >= PLANS[from].rank) {
    return {
      set: { plan, scheduledChange: null, pendingPlanChange: null, ...(plan === 'free' ? { hardCap: true } : {}) },
      effects: {
        voidFeeOf: scheduledFee,
        fee: { plan, previousPlan: from, effectiveAt: now },
        audit: { action: 'plan.upgraded', detail: { from, to: plan, effectiveAt: now.toISOString(), ...by } },
        accountChanged: true,
      },
      outcome: { status: 'applied', customerId, plan, effective: 'now' },
    };
  }
  return {
    set: { scheduledChange: { plan, cancel: false, effectiveMonth, requestedAt: now, changeId: event.id }, pendingPlanChange: null },
    effects: {
      voidFeeOf: scheduledFee,
      fee: { plan, previousPlan: from, effectiveAt },
      audit: { action: 'plan.downgrade_scheduled', detail: { from, to: plan, effectiveMonth, effectiveAt: effectiveAt.toISOString(), ...by } },
      accountChanged: true,
    },
    outcome: { status: 'applied', customerId, plan, effective: effectiveMonth },
  };
}

/** Does what an applied event's change leaves to do (each step idempotent), then stamps the mark complete. */
async function complete(d: ApplyDeps, customerId: string, mark: EventMark): Promise<void> {
  const { effects } = mark;
  await voidScheduledFee(d.models, customerId, effects.voidFeeOf);
  if (effects.fee) {
    const subject = { customerId, subscriptionId: mark.subscriptionId, previousPlan: effects.fee.previousPlan };
    await recordPlanFee(d.models, subject, effects.fee.plan, new Date(effects.fee.effectiveAt), mark.id);
  }
  if (effects.audit) await new AuditLog(d.models, d.clock).recordOnce(customerId, `marketplace:${mark.id}`, effects.audit.action, effects.audit.detail);
  if (effects.accountChanged) await d.accounts.forgetCachedAuth(customerId);
  // Not unmatched unless a newer event's mark replaced this one, which completes on its own.
  await updateVerified(d.models.Account, { _id: customerId, 'marketplace.lastEvent.id': mark.id }, { 'marketplace.lastEvent.completedAt': d.clock() });
}

/** Claims the event id for this delivery: 'claimed', or 'done' once another delivery applied it. */
async function claim(d: ApplyDeps, key: string): Promise<'claimed' | 'done'> {
  const until = Date.now() + CLAIM_WAIT_MS;
  for (;;) {
    if ((await d.redis.set(key, APPLYING, 'EX', CLAIM_S, 'NX')) === 'OK') return 'claimed';
    const held = await d.redis.get(key);
    // Any other value is an applied event (earlier releases kept the customer id there).
    if (held !== null && held !== APPLYING) return 'done';
    if (Date.now() > until) throw new ServiceUnavailableError('This event is being applied by another delivery; try again shortly.', 2, 'event_in_progress');
    await new Promise((r) => setTimeout(r, CLAIM_POLL_MS));
  }
}

/** Applies one verified event; see the header for the order, completion and once-only rules. */
export async function applyEntitlement(d: ApplyDeps, event: EntitlementEvent): Promise<EntitlementOutcome> {
  const found = await d.accounts.getBySubscription(event.subscriptionId);
  if (!found) throw new NotFoundError(`no account has subscription ${event.subscriptionId}`);
  const customerId = found._id;
  const key = `${d.prefix}:marketplace:event:${event.id}`;
  if ((await claim(d, key)) === 'done') return { status: 'already_applied', customerId };
  const at = new Date(event.occurredAt);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      const account = await d.accounts.current(customerId);
      if (!account) throw new NotFoundError(`no account has subscription ${event.subscriptionId}`);
      const mark = (account.marketplace?.lastEvent ?? null) as EventMark | null;
      if (mark?.id === event.id) {
        // Applied before: completed now if it stopped half way (a redelivery after its id's record expired
        // finds it complete).
        if (mark.completedAt) return await remember(d, key, { status: 'already_applied', customerId });
        await complete(d, customerId, mark);
        return await remember(d, key, mark.outcome);
      }
      if (mark && new Date(mark.at).getTime() >= at.getTime()) {
        await d.redis.del(key);
        return { status: 'stale', customerId };
      }
      const change = planChange(account, event, d.clock());
      const next: EventMark = {
        id: event.id,
        at,
        outcome: change.outcome,
        effects: change.effects,
        subscriptionId: account.marketplace?.subscriptionId ?? null,
        completedAt: null,
      };
      // Guarded by the mark as read (older than this event, checked above): the change was planned from the
      // account as that mark left it, so another event applied since sends this one back to plan again.
      const sameMark = mark ? { 'marketplace.lastEvent.id': mark.id } : { 'marketplace.lastEvent': null };
      const written = await updateVerified(d.models.Account, { _id: customerId, ...sameMark }, { ...change.set, 'marketplace.lastEvent': next });
      // Unmatched: another event moved the mark since the read; decide again (it may now be stale).
      if (written === 'unmatched') continue;
      await complete(d, customerId, next);
      return await remember(d, key, change.outcome);
    }
    throw new ServiceUnavailableError('The subscription changed while this event was applied; try again shortly.', 1, 'event_in_progress');
  } catch (err) {
    // Not applied, or applied half way (the mark says so): a redelivery must be able to go on.
    await d.redis.del(key).catch(() => undefined);
    throw err;
  }
}

/** Remembers the applied event id for EVENT_ID_KEEP_S and answers `outcome`. */
async function remember(d: ApplyDeps, key: string, outcome: EntitlementOutcome): Promise<EntitlementOutcome> {
  await d.redis.set(key, DONE, 'EX', EVENT_ID_KEEP_S);
  return outcome;
}
