// Owns accounts: creation, reading them (by id, e-mail or marketplace subscription, with a scheduled change that
// has come due applied), status (activation with the first console password, suspension, the sweep of
// never-confirmed accounts), plans and the subscription's end (console requests pending until the marketplace
// confirms them; each plan change with its fee record), the hard cap and monthly limit, and the welcome-mail and usage-alert flags; the changes are written to
// the audit log (audit-log.ts). An account change drops its keys' cached authentications (auth-cache.ts). Keys
// are api-keys.ts's, console credentials console-credentials.ts's. Each document's update is atomic on its own; an
// operation that touches several (a plan change: account, fee record, audit entry; the stale pending sweep:
// accounts, their keys and digests) writes them one after another, with no multi-document transaction.
import { randomUUID } from 'node:crypto';
import { InvalidRequestError, NotFoundError } from '../errors';
import type { AccountDoc, Models } from '../db/models';
import { isDuplicateKeyError } from '../db/models';
import { updateVerified } from '../db/verified-update';
import { effectiveHardCap, isPlanId, monthlyLimitOf, PLANS, type PlanId, type PlanView } from '../billing/plans';
import { recordPlanFee, voidScheduledFee } from '../marketplace/plan-fees';
import { hasComeDue, monthAfter, monthOf, nextMonthStart, type Clock } from '../billing/month';
import type { AuthCache } from './auth-cache';
import { CredentialDigests } from './credential-digests';
import { AuditLog } from './audit-log';
import type { Deadline } from '../deadline';

export type Account = AccountDoc & { _id: string };

/** The filter that finds an account by its marketplace subscription id, through the `subscriptionId` index. */
function bySubscription(subscriptionId: string): { subscriptionId: string } {
  return { subscriptionId };
}

/** Marks that every account written before the top-level `subscriptionId` existed has it (backfillSubscriptionIds). */
const SUBSCRIPTION_BACKFILL_MARK = 'backfill:account-subscription-ids:v1';

/**
 * Once per store: copies `marketplace.subscriptionId` to the top-level `subscriptionId` of the accounts written
 * before it existed, then sets a mark (kept with the credential digests' marks) so later start-ups cost one
 * `_id` read. Idempotent: each copy is guarded by the field still being null. `force` runs it past the mark (the
 * operator's `marketplace backfill-subscriptions`, after a rolling upgrade: instances of the earlier release
 * may have registered accounts after the first new one set the mark).
 */
export async function backfillSubscriptionIds(models: Models, force = false): Promise<number> {
  if (!force && (await models.CredentialDigest.exists({ _id: SUBSCRIPTION_BACKFILL_MARK }))) return 0;
  const missing = await models.Account.find({ subscriptionId: null, marketplace: { $ne: null } }, { marketplace: 1 }).lean();
  let copied = 0;
  // One update at a time: FerretDB 1.24 did not answer a bulkWrite of 400 such updates within a minute.
  for (const a of missing) {
    if (!a.marketplace?.subscriptionId) continue;
    const res = await models.Account.updateOne({ _id: a._id, subscriptionId: null }, { $set: { subscriptionId: a.marketplace.subscriptionId } });
    copied += res.modifiedCount;
  }
  await models.CredentialDigest.updateOne(
    { _id: SUBSCRIPTION_BACKFILL_MARK },
    { $setOnInsert: { kind: 'mark', ownerId: '-', customerId: null } },
    { upsert: true },
  ).catch((err: unknown) => {
    if (!isDuplicateKeyError(err)) throw err;
  });
  return copied;
}

export interface CreateAccountInput {
  email: string;
  plan: PlanId;
  company?: string;
  website?: string;
  firstName?: string;
  lastName?: string;
  hardCap?: boolean;
  monthlyLimit?: number | null;
  status?: 'pending' | 'active';
  marketplace?: { accountId: string; subscriptionId: string } | null;
}

/** Who made a plan change, and the entitlement event (or operator change) id it came with. */
export interface ChangeSource {
  by: 'marketplace' | 'operator';
  changeId?: string;
}

/** What a console request pending the marketplace's confirmation asks for (AccountDoc.pendingPlanChange). */
export type PendingRequestKind = 'plan' | 'cancel' | 'withdraw_scheduled';

export class AccountService {
  private readonly digests: CredentialDigests;
  private readonly auditLog: AuditLog;

  /** With the APIs' auth cache, every account change below drops its keys' and tokens' cached authentications (see auth-cache.ts). */
  constructor(
    private readonly models: Models,
    private readonly clock: Clock,
    private readonly cache?: AuthCache<unknown>,
  ) {
    this.digests = new CredentialDigests(models);
    this.auditLog = new AuditLog(models, clock);
  }

  /** Drops cached authentications of this customer's keys after an account change made outside this class. */
  async forgetCachedAuth(customerId: string): Promise<void> {
    await this.accountChanged(customerId);
  }

  /** Drops cached authentications of this customer's API keys and emotion tokens after an account change. */
  private async accountChanged(customerId: string): Promise<void> {
    if (!this.cache) return;
    const [keys, tokens] = await Promise.all([
      this.models.ApiKey.find({ customerId }, { hash: 1 }).lean(),
      this.models.EmotionToken.find({ customerId, revokedAt: null }, { hash: 1 }).lean(),
    ]);
    await this.cache.forget([...keys, ...tokens].map((k) => k.hash));
  }

  /** A new account (its keys are issued by ApiKeyService.issueKeys once it is active). */
  async create(input: CreateAccountInput): Promise<Account> {
    if (!isPlanId(input.plan)) throw new InvalidRequestError(`unknown plan ${JSON.stringify(input.plan)}`);
    const id = randomUUID();
    try {
      await this.models.Account.create({
        _id: id,
        email: input.email,
        company: input.company ?? '',
        website: input.website ?? '',
        firstName: input.firstName ?? '',
        lastName: input.lastName ?? '',
        plan: input.plan,
        monthlyLimit: input.plan === 'enterprise' ? (input.monthlyLimit ?? null) : null,
        // Paid plans default to hard cap OFF (metered overage); the free plan is always capped.
        hardCap: input.plan === 'free' ? true : (input.hardCap ?? false),
        status: input.status ?? 'active',
        marketplace: input.marketplace ?? null,
        subscriptionId: input.marketplace?.subscriptionId ?? null,
      });
    } catch (err) {
      if (isDuplicateKeyError(err)) throw new InvalidRequestError('an account with this e-mail already exists');
      throw err;
    }
    return (await this.get(id))!;
  }

  async get(customerId: string, deadline?: Deadline): Promise<Account | null> {
    const query = this.models.Account.findById(customerId);
    if (deadline) query.maxTimeMS(Math.max(1, deadline.remainingMs()));
    return await query.lean();
  }

  async getByEmail(email: string): Promise<Account | null> {
    return await this.models.Account.findOne({ email: email.toLowerCase().trim() }).lean();
  }

  /** The account with any scheduled change that has come due applied (lazily, atomically). */
  async current(customerId: string, deadline?: Deadline): Promise<Account | null> {
    const account = await this.get(customerId, deadline);
    if (!account?.scheduledChange?.effectiveMonth) return account;
    const change = account.scheduledChange;
    if (!hasComeDue(change.effectiveMonth, this.clock())) return account;
    const update = change.cancel
      ? { $set: { status: 'cancelled', scheduledChange: null } }
      : { $set: { plan: change.plan, hardCap: change.plan === 'free' ? true : account.hardCap, scheduledChange: null } };
    const applied = await this.models.Account.findOneAndUpdate({ _id: customerId, 'scheduledChange.effectiveMonth': change.effectiveMonth }, update, {
      new: true,
    }).lean();
    if (applied) await this.accountChanged(customerId);
    return applied ?? (await this.get(customerId));
  }

  planView(account: Pick<Account, 'plan' | 'monthlyLimit' | 'hardCap'>): PlanView {
    const plan = account.plan;
    return {
      plan,
      monthlyLimit: monthlyLimitOf(plan, account.monthlyLimit),
      hardCap: effectiveHardCap(plan, account.hardCap),
    };
  }

  /**
   * Applies a plan change the marketplace confirmed (or an operator made): upgrades apply now, downgrades wait
   * for the month end (the spec's transitions). Every change is audited with its effective date and writes a
   * plan-fee metering record (prorated, see plans.ts); `changeId` (the entitlement event's id) makes a replay
   * write the same record again rather than a second one. Clears a pending console request.
   */
  async changePlan(customerId: string, plan: PlanId, source: ChangeSource = { by: 'operator' }): Promise<{ effective: string }> {
    const account = await this.current(customerId);
    if (!account) throw new NotFoundError('customer not found');
    if (!isPlanId(plan)) throw new InvalidRequestError(`unknown plan ${JSON.stringify(plan)}`);
    const now = this.clock();
    const changeId = source.changeId ?? randomUUID();
    // A scheduled downgrade this change replaces never happens: its fee record goes too.
    await this.voidScheduledFee(account);
    if (PLANS[plan].rank >= PLANS[account.plan].rank) {
      await this.models.Account.updateOne(
        { _id: customerId },
        { $set: { plan, scheduledChange: null, pendingPlanChange: null, hardCap: plan === 'free' ? true : account.hardCap } },
      );
      await this.accountChanged(customerId);
      await this.recordPlanFee(account, plan, now, changeId);
      await this.auditLog.record(customerId, 'plan.upgraded', { from: account.plan, to: plan, effectiveAt: now.toISOString(), by: source.by, changeId });
      return { effective: 'now' };
    }
    const effectiveMonth = monthAfter(monthOf(now));
    const effectiveAt = nextMonthStart(now);
    await this.models.Account.updateOne(
      { _id: customerId },
      { $set: { scheduledChange: { plan, cancel: false, effectiveMonth, requestedAt: now, changeId }, pendingPlanChange: null } },
    );
    await this.accountChanged(customerId);
    await this.recordPlanFee(account, plan, effectiveAt, changeId);
    await this.auditLog.record(customerId, 'plan.downgrade_scheduled', {
      from: account.plan,
      to: plan,
      effectiveMonth,
      effectiveAt: effectiveAt.toISOString(),
      by: source.by,
      changeId,
    });
    return { effective: effectiveMonth };
  }

  /** The plan-fee record of a change from `account`'s plan (shared/marketplace/plan-fees.ts). */
  private async recordPlanFee(account: Account, plan: PlanId, effectiveAt: Date, changeId: string): Promise<void> {
    const subject = { customerId: account._id, subscriptionId: account.marketplace?.subscriptionId ?? null, previousPlan: account.plan };
    await recordPlanFee(this.models, subject, plan, effectiveAt, changeId);
  }

  /** Voids the fee record of `account`'s scheduled downgrade, which will not happen now. */
  private async voidScheduledFee(account: Account): Promise<void> {
    await voidScheduledFee(this.models, account._id, account.scheduledChange?.changeId);
  }

  /**
   * A plan change chosen in the console: recorded as pending, nothing else changes until the marketplace
   * confirms it (shared/marketplace/entitlements.ts). A new request replaces an earlier one.
   */
  async requestPlanChange(customerId: string, plan: PlanId): Promise<void> {
    const account = await this.current(customerId);
    if (!account) throw new NotFoundError('customer not found');
    await this.setPendingRequest(customerId, { kind: 'plan', plan });
    await this.auditLog.record(customerId, 'plan.change_requested', { from: account.plan, to: plan });
  }

  /**
   * A cancellation chosen in the console: pending until the marketplace confirms it (unsubscribe.pending); the
   * audit entry names the month end it would take effect on.
   */
  async requestCancellation(customerId: string): Promise<{ effective: string }> {
    const account = await this.current(customerId);
    if (!account) throw new NotFoundError('customer not found');
    if (account.status !== 'active' || account.scheduledChange?.cancel) throw new InvalidRequestError('The subscription is already ending.');
    const now = this.clock();
    const effectiveMonth = monthAfter(monthOf(now));
    await this.setPendingRequest(customerId, { kind: 'cancel', plan: null });
    await this.auditLog.record(customerId, 'plan.cancellation_requested', { effectiveMonth, effectiveAt: nextMonthStart(now).toISOString() });
    return { effective: effectiveMonth };
  }

  /**
   * Asks to keep the current plan instead of a scheduled (already confirmed) downgrade or cancellation: pending
   * until the marketplace confirms it (an entitlement event for the plan in effect); 404 when nothing is scheduled.
   */
  async requestScheduledChangeWithdrawal(customerId: string): Promise<void> {
    const account = await this.current(customerId);
    const scheduled = account?.scheduledChange;
    if (!scheduled?.effectiveMonth) throw new NotFoundError('no scheduled plan change');
    await this.setPendingRequest(customerId, { kind: 'withdraw_scheduled', plan: null });
    await this.auditLog.record(customerId, 'plan.scheduled_change_withdrawal_requested', {
      ...(scheduled.cancel ? { cancel: true } : { to: scheduled.plan }),
      effectiveMonth: scheduled.effectiveMonth,
    });
  }

  private async setPendingRequest(customerId: string, request: { kind: PendingRequestKind; plan: PlanId | null }): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { pendingPlanChange: { ...request, requestedAt: this.clock() } } });
  }

  /** Withdraws a pending (unconfirmed) console request of any kind; 404 when there is none. */
  async withdrawPlanChangeRequest(customerId: string): Promise<void> {
    const account = await this.get(customerId);
    const res = await this.models.Account.updateOne({ _id: customerId, pendingPlanChange: { $ne: null } }, { $set: { pendingPlanChange: null } });
    if (res.matchedCount === 0) throw new NotFoundError('no pending plan change');
    await this.auditLog.record(customerId, 'plan.change_request_withdrawn', { kind: account?.pendingPlanChange?.kind ?? 'plan' });
  }

  async getBySubscription(subscriptionId: string): Promise<Account | null> {
    return await this.models.Account.findOne(bySubscription(subscriptionId)).lean();
  }

  /**
   * Schedules the end of the subscription for 00:00 UTC on the 1st of next month (the marketplace confirmed a
   * cancellation, or an operator made one): keys work until then. Replaces a scheduled downgrade (its fee is
   * voided) and settles a pending console request.
   */
  async scheduleCancellation(customerId: string, source: ChangeSource = { by: 'operator' }): Promise<{ effective: string }> {
    const account = await this.get(customerId);
    if (!account) throw new NotFoundError('customer not found');
    await this.voidScheduledFee(account);
    const now = this.clock();
    const effectiveMonth = monthAfter(monthOf(now));
    await this.models.Account.updateOne(
      { _id: customerId },
      { $set: { scheduledChange: { plan: null, cancel: true, effectiveMonth, requestedAt: now, changeId: source.changeId ?? null }, pendingPlanChange: null } },
    );
    await this.accountChanged(customerId);
    await this.auditLog.record(customerId, 'plan.cancellation_scheduled', {
      effectiveMonth,
      effectiveAt: nextMonthStart(now).toISOString(),
      by: source.by,
      ...(source.changeId ? { changeId: source.changeId } : {}),
    });
    return { effective: effectiveMonth };
  }

  /**
   * Withdraws a scheduled downgrade or cancellation, effective now (the marketplace confirmed the subscription
   * continues on the plan in effect, or an operator decided so): its fee record is voided and a pending console
   * request settled; 404 when nothing is scheduled.
   */
  async withdrawScheduledChange(customerId: string, source: ChangeSource = { by: 'operator' }): Promise<void> {
    const account = await this.get(customerId);
    const scheduled = account?.scheduledChange;
    if (!account || !scheduled) throw new NotFoundError('no scheduled plan change');
    await this.voidScheduledFee(account);
    const res = await this.models.Account.updateOne(
      { _id: customerId, scheduledChange: { $ne: null } },
      { $set: { scheduledChange: null, pendingPlanChange: null } },
    );
    if (res.matchedCount === 0) throw new NotFoundError('no scheduled plan change');
    await this.accountChanged(customerId);
    await this.auditLog.record(customerId, 'plan.scheduled_change_withdrawn', {
      ...(scheduled.cancel ? { cancel: true } : { to: scheduled.plan }),
      effectiveAt: this.clock().toISOString(),
      by: source.by,
      ...(source.changeId ? { changeId: source.changeId } : {}),
    });
  }

  /**
   * The subscription has ended (the marketplace's unsubscribe.success): the account is cancelled now, whatever
   * was scheduled or pending. False when it had ended already.
   */
  async endSubscription(customerId: string, source: ChangeSource): Promise<boolean> {
    const res = await this.models.Account.updateOne(
      { _id: customerId, status: { $ne: 'cancelled' } },
      { $set: { status: 'cancelled', scheduledChange: null, pendingPlanChange: null } },
    );
    if (res.modifiedCount === 0) return false;
    await this.accountChanged(customerId);
    await this.auditLog.record(customerId, 'status.cancelled', {
      effectiveAt: this.clock().toISOString(),
      by: source.by,
      ...(source.changeId ? { changeId: source.changeId } : {}),
    });
    return true;
  }

  /** Sets the hard cap; audited (and the keys' cached authentications dropped) only when it changed. */
  async setHardCap(customerId: string, on: boolean): Promise<boolean> {
    const account = await this.current(customerId);
    if (!account) throw new NotFoundError('customer not found');
    if (account.plan === 'free' && !on) throw new InvalidRequestError('the free plan always has the hard cap on');
    const res = await this.models.Account.updateOne({ _id: customerId, hardCap: { $ne: on } }, { $set: { hardCap: on } });
    if (res.modifiedCount === 0) return false;
    await this.accountChanged(customerId);
    await this.auditLog.record(customerId, on ? 'hard_cap.on' : 'hard_cap.off', null);
    return true;
  }

  async setMonthlyLimit(customerId: string, limit: number | null): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { monthlyLimit: limit } });
    await this.accountChanged(customerId);
  }

  async setStatus(customerId: string, status: 'active' | 'suspended' | 'cancelled'): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { status } });
    await this.accountChanged(customerId);
    await this.auditLog.record(customerId, `status.${status}`, null);
  }

  /**
   * Deletes accounts that never confirmed their e-mail within `days` (PENDING_ACCOUNT_DAYS): a sweep, since
   * FerretDB has no TTL indexes. The address and the marketplace subscription become free to register again.
   */
  async deleteStalePending(days: number): Promise<number> {
    const cutoff = new Date(this.clock().getTime() - days * 86_400_000);
    const stale = await this.models.Account.find({ status: 'pending', createdAt: { $lt: cutoff } }, { _id: 1 }).lean();
    if (stale.length === 0) return 0;
    const ids = stale.map((a) => a._id);
    // Re-check the status in the delete itself: an account activated since the read stays.
    const res = await this.models.Account.deleteMany({ _id: { $in: ids }, status: 'pending' });
    await this.models.ApiKey.deleteMany({ customerId: { $in: ids } });
    await this.digests.removeCustomers(ids);
    return res.deletedCount ?? 0;
  }

  /** Console activation: sets the first password of a pending account; false when it was not pending. */
  async activate(customerId: string, passwordHash: string): Promise<boolean> {
    // Read back (shared/db/verified-update.ts): a first password that was lost would leave the account unusable.
    if ((await updateVerified(this.models.Account, { _id: customerId, status: 'pending' }, { passwordHash, status: 'active' })) === 'unmatched') return false;
    await this.accountChanged(customerId);
    await this.auditLog.record(customerId, 'console.activated', null);
    return true;
  }

  /** Claims the one welcome e-mail (atomic); `release` gives the claim back after a failed send. */
  async claimWelcomeMail(customerId: string, release = false): Promise<boolean> {
    const res = release
      ? await this.models.Account.updateOne({ _id: customerId }, { $set: { welcomeSentAt: null } })
      : await this.models.Account.updateOne({ _id: customerId, welcomeSentAt: null }, { $set: { welcomeSentAt: this.clock() } });
    return res.modifiedCount === 1;
  }

  /** Sets the usage alert e-mails; audited only when it changed. */
  async setUsageAlerts(customerId: string, on: boolean): Promise<boolean> {
    const res = await this.models.Account.updateOne({ _id: customerId, usageAlerts: { $ne: on } }, { $set: { usageAlerts: on } });
    if (res.modifiedCount === 0) return false;
    await this.auditLog.record(customerId, on ? 'usage_alerts.on' : 'usage_alerts.off', null);
    return true;
  }

  /** Active accounts that asked for usage alert e-mails. */
  async withUsageAlerts(): Promise<Account[]> {
    return await this.models.Account.find({ usageAlerts: true, status: 'active' }).lean();
  }
}
