// Owns the emotion API's access tokens: issued and revoked by operators or on the dashboard, stored hashed and
// found by their digest document (credential-digests.ts).
// A customer's token works only while its account is active. With the API's auth cache (auth-cache.ts, the one the
// API keys use) a known token costs one Redis round trip and no database read; a revocation here and every account
// change through AccountService drop its entry at once, so revocation, suspension and cancellation answer 403 from
// the next call on (a scheduled cancellation that comes due re-reads the account).
import { randomUUID } from 'node:crypto';
import { ForbiddenError, NotFoundError } from '../errors';
import type { EmotionTokenDoc, Models } from '../db/models';
import { Deadline } from '../deadline';
import { SingleFlight } from '../single-flight';
import { hasComeDue, systemClock, type Clock } from '../billing/month';
import type { AuthCache } from './auth-cache';
import { CredentialDigests } from './credential-digests';
import { displayPrefix, generateToken, sameDigest, sha256Hex } from './secrets';

export type EmotionToken = EmotionTokenDoc & { _id: string };

/**
 * What a call needs of its token, and all the cache holds (no credential, no name): the token, its account and the
 * account's status, with the month a scheduled change comes due (null for operator tokens, which have no account).
 */
export interface AuthenticatedToken {
  _id: string;
  customerId: string | null;
  account: { status: string; changeDueMonth: string | null } | null;
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{20,256}$/;

/**
 * Live (unrevoked) tokens an account may hold, enforced where customers create them (the dashboard). Their
 * calls share one fair-use bucket per account anyway (api/emotion/step.ts), so more tokens never mean more
 * allowance; the cap bounds the list and what one account can mint. Operators may issue more with the admin
 * CLI (`--customer`); those count towards it on the dashboard.
 */
export const MAX_LIVE_TOKENS_PER_ACCOUNT = 10;

/** Revoked tokens the console lists beside the active ones (the most recently revoked): the page's reads stay bounded. */
export const REVOKED_TOKENS_LISTED = 10;

/** The account behind a token as of now (AccountService.current: a scheduled cancellation applies on the 1st). */
export type AccountLookup = (customerId: string) => Promise<{ status: string; scheduledChange?: { effectiveMonth?: string | null } | null } | null>;

export interface EmotionTokenOptions {
  /** Without it (operator tools that only issue and revoke) tokens are not checked against an account. */
  accountOf?: AccountLookup;
  /** The auth cache: the API reads through it, and every service that revokes must hold it too. */
  cache?: AuthCache<AuthenticatedToken>;
  clock?: Clock;
}

export class EmotionTokenService {
  /** Concurrent calls with one token share one database read. */
  private readonly lookups = new SingleFlight<AuthenticatedToken | null>();
  private readonly digests: CredentialDigests;
  private readonly clock: Clock;

  constructor(
    private readonly models: Models,
    private readonly o: EmotionTokenOptions = {},
  ) {
    this.digests = new CredentialDigests(models);
    this.clock = o.clock ?? systemClock;
  }

  /** Creates a token and returns it in full: the only time it is shown. */
  async create(name: string, customerId: string | null = null): Promise<{ id: string; token: string; prefix: string }> {
    const token = generateToken();
    const id = randomUUID();
    const prefix = displayPrefix(token, 6);
    const digest = sha256Hex(token);
    // The digest first: until the token exists it points at nothing (see credential-digests.ts).
    await this.digests.add(digest, 'emotion_token', id, customerId);
    await this.models.EmotionToken.create({ _id: id, name, customerId, hash: digest, prefix });
    return { id, token, prefix };
  }

  async revoke(id: string, customerId?: string): Promise<void> {
    const filter: Record<string, unknown> = { _id: id, revokedAt: null };
    if (customerId) filter.customerId = customerId;
    const revoked = await this.models.EmotionToken.findOneAndUpdate(filter, { $set: { revokedAt: new Date() } }).lean();
    if (!revoked) throw new NotFoundError('token not found');
    await this.o.cache?.revoke(revoked.hash);
    // After the revocation: a digest left by a crash here points at a revoked token, which admits nothing.
    await this.digests.remove(revoked.hash);
  }

  async list(customerId: string): Promise<EmotionToken[]> {
    return await this.models.EmotionToken.find({ customerId }).sort({ createdAt: -1 }).lean();
  }

  /**
   * What the console lists: the account's active tokens and its REVOKED_TOKENS_LISTED most recently revoked ones,
   * newest first. One query, through the `customerId` index.
   */
  async listed(customerId: string): Promise<EmotionToken[]> {
    const all = await this.list(customerId);
    const revoked = all.filter((t) => t.revokedAt).sort((x, y) => y.revokedAt!.getTime() - x.revokedAt!.getTime());
    const shown = new Set(revoked.slice(0, REVOKED_TOKENS_LISTED).map((t) => t._id));
    return all.filter((t) => !t.revokedAt || shown.has(t._id));
  }

  /**
   * The token, or null when it is malformed, unknown or revoked. ForbiddenError when the token is right but its
   * account is suspended, cancelled or gone (operator tokens have no account); DeadlineExceededError (503) when the
   * deadline runs out first. `beforeDatabase`: called (and waited for) only when the database must be read.
   */
  async authenticate(presented: string, deadline = Deadline.after(10_000), beforeDatabase?: () => Promise<unknown>): Promise<AuthenticatedToken | null> {
    if (!TOKEN_SHAPE.test(presented)) return null;
    const digest = sha256Hex(presented);
    const cached = this.o.cache ? await deadline.race('authentication cache', this.o.cache.get(digest)) : ({ kind: 'miss', generation: null } as const);
    if (cached.kind === 'revoked') return null;
    if (cached.kind === 'hit' && !this.changeDue(cached.value)) return admit(cached.value);
    const generation = cached.kind === 'miss' ? cached.generation : null;
    await beforeDatabase?.();
    const found = await deadline.race(
      'authentication',
      this.lookups.run(digest, () => this.lookUp(digest, generation, deadline)),
    );
    return found && admit(found);
  }

  /** The database half: by `_id` only, the digest document, the token it points to, then its account. */
  private async lookUp(digest: string, generation: string | null, deadline: Deadline): Promise<AuthenticatedToken | null> {
    const maxTimeMS = () => Math.max(1000, deadline.remainingMs());
    const id = await this.digests.ownerOf(digest, 'emotion_token', maxTimeMS());
    const doc = id ? await this.models.EmotionToken.findById(id).maxTimeMS(maxTimeMS()).lean() : null;
    if (!doc || doc.revokedAt || !sameDigest(doc.hash, digest)) return null;
    let account: AuthenticatedToken['account'] = null;
    if (doc.customerId && this.o.accountOf) {
      const a = await this.o.accountOf(doc.customerId);
      account = { status: a?.status ?? 'closed', changeDueMonth: a?.scheduledChange?.effectiveMonth ?? null };
    }
    const found: AuthenticatedToken = { _id: doc._id, customerId: doc.customerId ?? null, account };
    await this.o.cache?.put(digest, generation, found);
    return found;
  }

  /** A scheduled change of the account has come due: the cached status is out of date. */
  private changeDue(t: AuthenticatedToken): boolean {
    return hasComeDue(t.account?.changeDueMonth, this.clock());
  }
}

/** 403 when the token is right but its account may not call. */
function admit(t: AuthenticatedToken): AuthenticatedToken {
  const status = t.account?.status;
  if (status === undefined || status === 'active') return t;
  if (status === 'closed') throw new ForbiddenError('The access token belongs to an account that no longer exists', 'account_closed');
  if (status === 'suspended') throw new ForbiddenError('This account is suspended; contact support', 'account_suspended');
  if (status === 'cancelled') throw new ForbiddenError('This subscription has ended', 'subscription_ended');
  throw new ForbiddenError('This account is not activated yet', 'account_inactive');
}
