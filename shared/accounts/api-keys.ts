// Owns the two API keys of an account: issuing them (also with a new account, as the admin CLI makes one),
// regenerating one (the old one refused at once), listing them by prefix, and the hot path, authenticating an
// X-API-Key: by digest through the Redis auth cache (auth-cache.ts), else by `_id` reads of its digest document,
// the key and its account (credential-digests.ts).
import { randomUUID } from 'node:crypto';
import { ForbiddenError, NotFoundError } from '../errors';
import type { Models } from '../db/models';
import { hasComeDue, type Clock } from '../billing/month';
import { API_KEY_SHAPE, displayPrefix, generateApiKey, sameDigest, sha256Hex } from './secrets';
import type { AuthCache } from './auth-cache';
import { CredentialDigests } from './credential-digests';
import type { Account, AccountService, CreateAccountInput } from './account-service';
import { AuditLog } from './audit-log';
import { Deadline } from '../deadline';
import { SingleFlight } from '../single-flight';

export type KeySlot = 'primary' | 'secondary';

/** The account fields authentication and billing need: all the auth cache ever stores. */
export type AuthAccount = Pick<Account, '_id' | 'status' | 'plan' | 'monthlyLimit' | 'hardCap'> & {
  scheduledChange: { effectiveMonth?: string | null } | null;
};

export interface AuthenticatedKey {
  account: AuthAccount;
  keyId: string;
  slot: KeySlot;
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

export class ApiKeyService {
  /** Concurrent first calls of one key share one database lookup. */
  private readonly lookups = new SingleFlight<AuthenticatedKey | null>();
  private readonly digests: CredentialDigests;
  private readonly auditLog: AuditLog;

  /**
   * `accounts`: the account a key belongs to, with a scheduled change that has come due applied. With a cache,
   * authentication reads Redis; every key write below keeps it right (see auth-cache.ts), and AccountService
   * drops an account's entries when the account changes.
   */
  constructor(
    private readonly models: Models,
    private readonly clock: Clock,
    private readonly accounts: AccountService,
    private readonly cache?: AuthCache<AuthenticatedKey>,
  ) {
    this.digests = new CredentialDigests(models);
    this.auditLog = new AuditLog(models, clock);
  }

  /**
   * A new account (AccountService.create) with both keys when it is active: the admin CLI's `account create`.
   * The keys are returned in full: the only time they are shown.
   */
  async createAccountWithKeys(input: CreateAccountInput): Promise<{ account: Account; primaryKey: string | null; secondaryKey: string | null }> {
    const account = await this.accounts.create(input);
    if (account.status !== 'active') return { account, primaryKey: null, secondaryKey: null };
    return { account, ...(await this.issueKeys(account._id)) };
  }

  /** Issues both keys (activation). Returns them in full: the only time they are shown. */
  async issueKeys(customerId: string): Promise<{ primaryKey: string; secondaryKey: string }> {
    const primaryKey = await this.writeKey(customerId, 'primary');
    const secondaryKey = await this.writeKey(customerId, 'secondary');
    return { primaryKey, secondaryKey };
  }

  /** Replaces one key; the old one stops working at once (the cache refuses its digest, see auth-cache.ts). */
  async regenerate(customerId: string, slot: KeySlot): Promise<string> {
    const account = await this.accounts.get(customerId);
    if (!account) throw new NotFoundError('customer not found');
    const key = await this.writeKey(customerId, slot);
    await this.auditLog.record(customerId, 'key.regenerated', { slot });
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
    const account = await this.accounts.current(key.customerId, bound);
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
    return hasComeDue(account.scheduledChange?.effectiveMonth, this.clock());
  }
}
