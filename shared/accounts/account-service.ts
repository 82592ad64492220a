// Owns accounts and what the API, the console and the admin CLI do to them: creation and status, the two API
// keys (issue, regenerate, the hot-path authentication behind the Redis key cache), plan changes (pending until
// the marketplace confirms; each with its fee record), the hard cap and monthly limit, the console credentials
// (password hash, TOTP secret, recovery codes) and writing the audit log. Each document's update is atomic on
// its own; an operation that touches several (a plan change: account, fee record, audit entry; the stale
// pending sweep: accounts and their keys) writes them one after another, with no multi-document transaction.
import { randomUUID } from 'node:crypto';
import { ForbiddenError, InvalidRequestError, NotFoundError } from '../errors';
import type { AccountDoc, Models } from '../db/models';
import { isDuplicateKeyError } from '../db/models';
import { effectiveHardCap, isPlanId, monthlyLimitOf, PLANS, proratedFeeDifferenceCents, type PlanId } from '../billing/plans';
import { hourOf, monthAfter, monthOf, nextMonthStart, type Clock } from '../billing/month';
import { API_KEY_SHAPE, displayPrefix, generateApiKey, sameDigest, sha256Hex } from './secrets';
import type { AuthCache } from './auth-cache';
import { CredentialDigests } from './credential-digests';
import { Deadline } from '../deadline';
import { SingleFlight } from '../single-flight';

export type KeySlot = 'primary' | 'secondary';
export type Account = AccountDoc & { _id: string };

/** The account fields authentication and billing need: all the auth cache ever stores. */
export type AuthAccount = Pick<Account, '_id' | 'status' | 'plan' | 'monthlyLimit' | 'hardCap'> & {
  scheduledChange: { effectiveMonth?: string | null } | null;
};

export interface AuthenticatedKey {
  account: AuthAccount;
  keyId: string;
  slot: KeySlot;
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

/** The effective billing view of an account at a moment. */
export interface PlanView {
  plan: PlanId;
  monthlyLimit: number;
  hardCap: boolean;
}

/** Upper bound of one authentication's database reads when the caller gives no deadline. */
const DEFAULT_AUTH_DEADLINE_MS = 10_000;
/** Least server-side time a shared key lookup gets (see lookUp). */
const LOOKUP_FLOOR_MS = 1000;

function authAccountOf(a: Account): AuthAccount {
  const due = a.scheduledChange?.effectiveMonth ?? null;
  return {
    _id: a._id,
    status: a.status,
    plan: a.plan,
    monthlyLimit: a.monthlyLimit ?? null,
    hardCap: a.hardCap,
    scheduledChange: due ? { effectiveMonth: due } : null,
  };
}

export class AccountService {
  /** Concurrent first calls of one key share one database lookup. */
  private readonly lookups = new SingleFlight<AuthenticatedKey | null>();
  private readonly digests: CredentialDigests;

  /** With a cache, authentication reads Redis; every write below then keeps it right (see auth-cache.ts). */
  constructor(
    private readonly models: Models,
    private readonly clock: Clock,
    private readonly cache?: AuthCache<AuthenticatedKey>,
  ) {
    this.digests = new CredentialDigests(models);
  }

  /** Drops cached authentications of this customer's keys after an account change. */
  private async accountChanged(customerId: string): Promise<void> {
    if (!this.cache) return;
    const keys = await this.models.ApiKey.find({ customerId }, { hash: 1 }).lean();
    await this.cache.forget(keys.map((k) => k.hash));
  }

  async create(input: CreateAccountInput): Promise<{ account: Account; primaryKey: string | null; secondaryKey: string | null }> {
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
      });
    } catch (err) {
      if (isDuplicateKeyError(err)) throw new InvalidRequestError('an account with this e-mail already exists');
      throw err;
    }
    const account = (await this.get(id))!;
    if (account.status !== 'active') return { account, primaryKey: null, secondaryKey: null };
    const { primaryKey, secondaryKey } = await this.issueKeys(id);
    return { account, primaryKey, secondaryKey };
  }

  /** Issues both keys (activation). Returns them in full: the only time they are shown. */
  async issueKeys(customerId: string): Promise<{ primaryKey: string; secondaryKey: string }> {
    const primaryKey = await this.writeKey(customerId, 'primary');
    const secondaryKey = await this.writeKey(customerId, 'secondary');
    return { primaryKey, secondaryKey };
  }

  /** Replaces one key; the old one stops working at once (the cache refuses its digest, see auth-cache.ts). */
  async regenerate(customerId: string, slot: KeySlot): Promise<string> {
    const account = await this.get(customerId);
    if (!account) throw new NotFoundError('customer not found');
    const key = await this.writeKey(customerId, slot);
    await this.audit(customerId, 'key.regenerated', { slot });
    return key;
  }

  /**
   * Writes a new key into the slot in three single-document writes, ordered for crashes (see
   * credential-digests.ts): its digest first (pointing at a key that does not carry it yet, so it admits
   * nothing), then the key, then the old key's digest is removed (the old key is refused from the key write on).
   */
  private async writeKey(customerId: string, slot: KeySlot): Promise<string> {
    const key = generateApiKey();
    const digest = sha256Hex(key);
    const existing = await this.models.ApiKey.findOne({ customerId, slot }, { _id: 1 }).lean();
    const keyId = existing?._id ?? randomUUID();
    await this.digests.add(digest, 'api_key', keyId, customerId);
    const previous = await this.models.ApiKey.findOneAndUpdate(
      { customerId, slot },
      {
        $set: { hash: digest, prefix: displayPrefix(key), rotatedAt: this.clock() },
        $inc: { generation: 1 },
        $setOnInsert: { _id: keyId, customerId, slot },
      },
      { upsert: true },
    ).lean();
    // Another writer created the slot's key between the read and the upsert: ours updated that one.
    if (previous && previous._id !== keyId) await this.digests.repoint(digest, previous._id);
    if (previous && this.cache) await this.cache.revoke(previous.hash);
    if (previous && previous.hash !== digest) await this.digests.remove(previous.hash);
    return key;
  }

  async keyPrefixes(customerId: string): Promise<Array<{ id: string; slot: KeySlot; prefix: string; rotatedAt: Date | null }>> {
    const keys = await this.models.ApiKey.find({ customerId }).sort({ slot: 1 }).lean();
    return keys.map((k) => ({ id: k._id, slot: k.slot, prefix: k.prefix, rotatedAt: k.rotatedAt ?? null }));
  }

  /**
   * Resolves an X-API-Key. Null for a missing, malformed, unknown or replaced key (401);
   * ForbiddenError when the key is valid but the account may not use the API (403);
   * DeadlineExceededError (503) when the answer cannot come before `deadline`.
   * `beforeDatabase`: called only when the database must be read (a cache miss), and waited for (and failed
   * with) before the read; a key decided from the cache never calls it.
   */
  async authenticate(
    presented: string | undefined,
    deadline = Deadline.after(DEFAULT_AUTH_DEADLINE_MS),
    beforeDatabase?: () => Promise<unknown>,
  ): Promise<AuthenticatedKey | null> {
    if (!presented || !API_KEY_SHAPE.test(presented)) return null;
    const digest = sha256Hex(presented);
    const cached = this.cache ? await deadline.race('authentication cache', this.cache.get(digest)) : ({ kind: 'miss', generation: null } as const);
    if (cached.kind === 'revoked') return null;
    if (cached.kind === 'hit' && !this.changeDue(cached.value.account)) return this.admit(cached.value);
    const generation = cached.kind === 'miss' ? cached.generation : null;
    await beforeDatabase?.();
    const auth = await deadline.race(
      'authentication',
      this.lookups.run(digest, () => this.lookUp(digest, generation, deadline)),
    );
    return auth && this.admit(auth);
  }

  /**
   * The database half of authenticate: reads by `_id` only (its digest document, the key, its account); an
   * unknown key costs the one digest read. The fill is shared by
   * every caller that missed meanwhile, so the server-side bound is the first caller's time left but never
   * under LOOKUP_FLOOR_MS (a caller about to give up must not doom the others); each caller still answers by
   * its own deadline.
   */
  private async lookUp(digest: string, generation: string | null, deadline: Deadline): Promise<AuthenticatedKey | null> {
    const bound = Deadline.after(Math.max(LOOKUP_FLOOR_MS, deadline.remainingMs()));
    const keyId = await this.digests.ownerOf(digest, 'api_key', bound.remainingMs());
    if (!keyId) return null;
    const key = await this.models.ApiKey.findById(keyId, { customerId: 1, slot: 1, hash: 1 }).maxTimeMS(bound.remainingMs()).lean();
    if (!key || !sameDigest(key.hash, digest)) return null;
    const account = await this.current(key.customerId, bound);
    if (!account) return null;
    const auth: AuthenticatedKey = { account: authAccountOf(account), keyId: key._id, slot: key.slot };
    await this.cache?.put(digest, generation, auth);
    return auth;
  }

  /** 403 when the key is valid but the account may not use the API. */
  private admit(auth: AuthenticatedKey): AuthenticatedKey {
    const { status } = auth.account;
    if (status === 'suspended') throw new ForbiddenError('This account is suspended; contact support');
    if (status === 'cancelled') throw new ForbiddenError('This subscription has ended');
    if (status !== 'active') throw new ForbiddenError('This account is not activated yet');
    return auth;
  }

  /** A scheduled plan change has come due: the cached account is out of date. */
  private changeDue(account: AuthAccount): boolean {
    const due = account.scheduledChange?.effectiveMonth;
    return !!due && monthOf(this.clock()) >= due;
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
    if (monthOf(this.clock()) < change.effectiveMonth!) return account;
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
      await this.audit(customerId, 'plan.upgraded', { from: account.plan, to: plan, effectiveAt: now.toISOString(), by: source.by, changeId });
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
    await this.audit(customerId, 'plan.downgrade_scheduled', {
      from: account.plan,
      to: plan,
      effectiveMonth,
      effectiveAt: effectiveAt.toISOString(),
      by: source.by,
      changeId,
    });
    return { effective: effectiveMonth };
  }

  /** The plan-fee metering record of one change (idempotent by change id), for the marketplace metering job. */
  private async recordPlanFee(account: Account, plan: PlanId, effectiveAt: Date, changeId: string): Promise<void> {
    await this.models.MeteringRecord.updateOne(
      { _id: `${account._id}:fee:${changeId}` },
      {
        $set: {
          customerId: account._id,
          subscriptionId: account.marketplace?.subscriptionId ?? null,
          hour: hourOf(effectiveAt),
          dimension: 'plan_fee_cents',
          quantity: proratedFeeDifferenceCents(account.plan, plan, effectiveAt),
          plan,
          previousPlan: account.plan,
          effectiveAt,
        },
        $setOnInsert: { reportedAt: null },
      },
      { upsert: true },
    );
  }

  /**
   * Voids the fee record of a scheduled downgrade that will not happen (withdrawn or replaced): deleted while
   * unreported, else answered by a reversing record, so the metered fees always match the changes made.
   */
  private async voidScheduledFee(account: Account): Promise<void> {
    const changeId = account.scheduledChange?.changeId;
    if (!changeId) return;
    const id = `${account._id}:fee:${changeId}`;
    const removed = await this.models.MeteringRecord.deleteOne({ _id: id, reportedAt: null });
    if (removed.deletedCount === 1) return;
    const reported = await this.models.MeteringRecord.findById(id).lean();
    if (!reported) return;
    const { _id: _reportedId, reportedAt: _reportedAt, ...record } = reported;
    await this.models.MeteringRecord.updateOne(
      { _id: `${id}:void` },
      { $set: { ...record, quantity: -record.quantity, plan: record.previousPlan, previousPlan: record.plan }, $setOnInsert: { reportedAt: null } },
      { upsert: true },
    );
  }

  /**
   * A plan change chosen in the console: recorded as pending, nothing else changes until the marketplace
   * confirms it (shared/marketplace/entitlements.ts). A new request replaces an earlier one.
   */
  async requestPlanChange(customerId: string, plan: PlanId): Promise<void> {
    const account = await this.current(customerId);
    if (!account) throw new NotFoundError('customer not found');
    await this.setPendingRequest(customerId, { kind: 'plan', plan });
    await this.audit(customerId, 'plan.change_requested', { from: account.plan, to: plan });
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
    await this.audit(customerId, 'plan.cancellation_requested', { effectiveMonth, effectiveAt: nextMonthStart(now).toISOString() });
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
    await this.audit(customerId, 'plan.scheduled_change_withdrawal_requested', {
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
    await this.audit(customerId, 'plan.change_request_withdrawn', { kind: account?.pendingPlanChange?.kind ?? 'plan' });
  }

  async getBySubscription(subscriptionId: string): Promise<Account | null> {
    return await this.models.Account.findOne({ 'marketplace.subscriptionId': subscriptionId }).lean();
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
    await this.audit(customerId, 'plan.cancellation_scheduled', {
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
    await this.audit(customerId, 'plan.scheduled_change_withdrawn', {
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
    await this.audit(customerId, 'status.cancelled', {
      effectiveAt: this.clock().toISOString(),
      by: source.by,
      ...(source.changeId ? { changeId: source.changeId } : {}),
    });
    return true;
  }

  async setHardCap(customerId: string, on: boolean): Promise<void> {
    const account = await this.current(customerId);
    if (!account) throw new NotFoundError('customer not found');
    if (account.plan === 'free' && !on) throw new InvalidRequestError('the free plan always has the hard cap on');
    await this.models.Account.updateOne({ _id: customerId }, { $set: { hardCap: on } });
    await this.accountChanged(customerId);
    await this.audit(customerId, on ? 'hard_cap.on' : 'hard_cap.off', null);
  }

  async setMonthlyLimit(customerId: string, limit: number | null): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { monthlyLimit: limit } });
    await this.accountChanged(customerId);
  }

  async setStatus(customerId: string, status: 'active' | 'suspended' | 'cancelled'): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { status } });
    await this.accountChanged(customerId);
    await this.audit(customerId, `status.${status}`, null);
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
    const res = await this.models.Account.updateOne({ _id: customerId, status: 'pending' }, { $set: { passwordHash, status: 'active' } });
    if (res.modifiedCount === 0) return false;
    await this.accountChanged(customerId);
    await this.audit(customerId, 'console.activated', null);
    return true;
  }

  /** A new console password (reset or change); the caller ends the account's other sessions. */
  async setPassword(customerId: string, passwordHash: string, how: 'reset' | 'changed'): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { passwordHash, passwordChangedAt: this.clock() } });
    await this.audit(customerId, `console.password_${how}`, null);
  }

  /** Stores the pending TOTP secret (sealed by the caller) while two-factor is not yet on. */
  /** Replaces a TOTP secret sealed with an earlier APP_SECRET by the same secret sealed with the current one. */
  async resealTotpSecret(customerId: string, before: string, after: string): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId, totpSecretEnc: before }, { $set: { totpSecretEnc: after } });
  }

  /**
   * An operator's two-factor reset (a customer lost both the phone and the recovery codes, after checking who
   * they are): the secret and the codes are gone, and the next sign-in sets up two-factor again.
   */
  async resetTwoFactor(customerId: string): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { totpEnabled: false, totpSecretEnc: null, recoveryCodeHashes: [] } });
    await this.audit(customerId, 'two_factor.reset_by_operator', null);
  }

  async setPendingTotpSecret(customerId: string, sealed: string): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId, totpEnabled: false }, { $set: { totpSecretEnc: sealed } });
  }

  /**
   * The customer replaced the authenticator app (a code from the new secret confirmed it): the new sealed secret
   * and a new set of recovery codes in one update, only while the secret is still `before` (false otherwise:
   * another replacement or an operator reset came first).
   */
  async replaceTotpSecret(customerId: string, before: string, after: string, recoveryCodeHashes: string[]): Promise<boolean> {
    const res = await this.models.Account.updateOne(
      { _id: customerId, totpEnabled: true, totpSecretEnc: before },
      { $set: { totpSecretEnc: after, recoveryCodeHashes } },
    );
    if (res.modifiedCount === 0) return false;
    await this.audit(customerId, 'console.authenticator_replaced', null);
    return true;
  }

  async enableTotp(customerId: string, recoveryCodeHashes: string[]): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { totpEnabled: true, recoveryCodeHashes } });
    await this.audit(customerId, 'console.two_factor_enabled', null);
  }

  async replaceRecoveryCodes(customerId: string, recoveryCodeHashes: string[]): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { recoveryCodeHashes } });
    await this.audit(customerId, 'console.recovery_codes_regenerated', null);
  }

  /**
   * Takes spent recovery codes out of the account's list and audits the use of one. The list is not what makes
   * a code usable once: the caller's marker is (api/console/recovery-codes.ts), because an engine that loses
   * concurrent updates (FerretDB 1.24) may put a pulled code back; every spent code is pulled again each time.
   */
  async pullSpentRecoveryCodes(customerId: string, spent: string[]): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $pull: { recoveryCodeHashes: { $in: spent } } });
    await this.audit(customerId, 'console.recovery_code_used', null);
  }

  /** Claims the one welcome e-mail (atomic); `release` gives the claim back after a failed send. */
  async claimWelcomeMail(customerId: string, release = false): Promise<boolean> {
    const res = release
      ? await this.models.Account.updateOne({ _id: customerId }, { $set: { welcomeSentAt: null } })
      : await this.models.Account.updateOne({ _id: customerId, welcomeSentAt: null }, { $set: { welcomeSentAt: this.clock() } });
    return res.modifiedCount === 1;
  }

  async setUsageAlerts(customerId: string, on: boolean): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $set: { usageAlerts: on } });
    await this.audit(customerId, on ? 'usage_alerts.on' : 'usage_alerts.off', null);
  }

  /** Active accounts that asked for usage alert e-mails. */
  async withUsageAlerts(): Promise<Account[]> {
    return await this.models.Account.find({ usageAlerts: true, status: 'active' }).lean();
  }

  async audit(customerId: string, action: string, detail: Record<string, unknown> | null): Promise<void> {
    await this.models.Audit.create({ customerId, action, detail, at: this.clock() });
  }
}
