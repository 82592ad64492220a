// Owns console sessions: server-side in Redis (FerretDB has no TTL indexes), found by a random id in an
// HttpOnly SameSite cookie. Redis stores only a hash of the id, so a leaked dump does not hand out
// sessions. Idle and absolute timeouts; the id and CSRF token rotate when privilege changes.
// A visitor without an account gets no Redis key (Redis runs noeviction and holds the queues): their
// "session" is the random cookie id alone, with a CSRF token derived from it by HMAC. Only a step that
// must remember something (a note after sign-out, the "check your inbox" address) stores one, under a
// global cap; sessions of an account are indexed per account, capped, and can all be ended at once.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { randomId } from '../secrets';
import { luaScript } from '../../../shared/redis-script';

/**
 * anonymous: holds only a CSRF token (the sign-in and registration forms need one);
 * verified: opened a verification link, may set the password once;
 * password: e-mail and password accepted, TOTP (setup or code) still due;
 * authenticated: the dashboard.
 */
export type SessionStage = 'anonymous' | 'verified' | 'password' | 'authenticated';

export interface SessionData {
  stage: SessionStage;
  csrf: string;
  /** Start of the absolute lifetime (reset at sign-in). */
  createdAt: number;
  lastSeenAt: number;
  customerId?: string;
  /** verified stage: the verification link's nonce, used up when the password is set. */
  verifyNonce?: string;
  /** After registering: where the confirmation link went (for the "check your inbox" page). */
  pendingEmail?: string;
  /** authenticated stage: when the password or a TOTP code was last given (step-up, api/console/auth/step-up.ts), epoch ms. */
  provenAt?: number;
  /**
   * authenticated stage: a new TOTP secret (sealed) the Security page's "Replace authenticator app" shows until a
   * code from it confirms it (api/console/routes/security.ts); the account's secret is unchanged until then.
   */
  authenticatorReplacement?: { sealed: string; startedAt: number };
  /** A one-shot message for the next page (set before a redirect). */
  flash?: { kind: 'success' | 'info' | 'error'; text: string };
}

export interface Session {
  id: string;
  data: SessionData;
  /** Not in Redis: an anonymous visitor known only by the cookie id (see anonymous()). */
  transient?: boolean;
}

export interface SessionTimeouts {
  idleMs: number;
  absoluteMs: number;
}

export const DEFAULT_TIMEOUTS: SessionTimeouts = { idleMs: 30 * 60 * 1000, absoluteMs: 12 * 3600 * 1000 };

export interface SessionLimits {
  /** Live sessions per account; a new one beyond this ends the account's oldest. */
  perAccount: number;
  /** Stored sessions without an account, all visitors together; beyond it a note is dropped, not stored. */
  anonymousCap: number;
  /** Lifetime of a stored session without an account (a note or the pending address is short-lived). */
  anonymousTtlMs: number;
}

export const DEFAULT_LIMITS: SessionLimits = { perAccount: 10, anonymousCap: 10_000, anonymousTtlMs: 15 * 60 * 1000 };

/** A cookie id the store accepts: what randomId(32) makes (base64url), nothing a visitor can pad out. */
const VISITOR_ID = /^[A-Za-z0-9_-]{32,64}$/;

const INDEXED_WRITE = luaScript('session-indexed-write-2');

/** Key of the session index of one account (all its live sessions). */
const accountIndexKey = (prefix: string, customerId: string) => `${prefix}:console:account-sessions:${customerId}`;
const sessionKeyBase = (prefix: string) => `${prefix}:console:session:`;

/**
 * Ends every console session of an account at once (suspension, cancellation, a password reset):
 * their ids stop working on the next request. Returns how many were ended.
 */
export async function endAllSessionsOfAccount(redis: Redis, prefix: string, customerId: string): Promise<number> {
  const index = accountIndexKey(prefix, customerId);
  const members = await redis.zrange(index, 0, -1);
  const base = sessionKeyBase(prefix);
  const ended = members.length ? await redis.del(...members.map((m) => base + m)) : 0;
  await redis.del(index);
  return ended;
}

export class SessionStore {
  private readonly csrfKey: Buffer;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly timeouts: SessionTimeouts = DEFAULT_TIMEOUTS,
    private readonly now: () => number = Date.now,
    readonly limits: SessionLimits = DEFAULT_LIMITS,
    /** Key for anonymous visitors' CSRF tokens; shared by every front-end process (derived from APP_SECRET). */
    csrfKey?: Buffer,
  ) {
    this.csrfKey = csrfKey ?? crypto.randomBytes(32);
  }

  private member(id: string): string {
    return crypto.createHash('sha256').update(id).digest('base64url');
  }

  private key(id: string): string {
    return sessionKeyBase(this.prefix) + this.member(id);
  }

  private anonymousIndex(): string {
    return `${this.prefix}:console:anonymous-sessions`;
  }

  /** Stores the session; false when it has no account and the anonymous cap is reached (nothing stored). */
  private async write(id: string, data: SessionData): Promise<boolean> {
    const now = this.now();
    const untilAbsolute = data.createdAt + this.timeouts.absoluteMs - now;
    const withAccount = !!data.customerId;
    const lifetime = withAccount ? this.timeouts.idleMs : Math.min(this.timeouts.idleMs, this.limits.anonymousTtlMs);
    const ttl = Math.max(1, Math.min(lifetime, untilAbsolute));
    const index = withAccount ? accountIndexKey(this.prefix, data.customerId!) : this.anonymousIndex();
    const stored = await INDEXED_WRITE.run(
      this.redis,
      [index, this.key(id)],
      [
        now,
        now + ttl,
        withAccount ? this.limits.perAccount : this.limits.anonymousCap,
        this.member(id),
        JSON.stringify(data),
        ttl,
        sessionKeyBase(this.prefix),
        withAccount ? 'evict' : 'refuse',
        this.timeouts.absoluteMs,
      ],
    );
    return stored === 1;
  }

  /**
   * An anonymous visitor's session, not stored: the cookie id is all there is, and the CSRF token is an
   * HMAC of it (so forms work without a Redis key). `id` is the visitor's cookie, or a new one.
   */
  anonymous(id: string = randomId(32)): Session {
    const now = this.now();
    const csrf = crypto.createHmac('sha256', this.csrfKey).update(`csrf:${id}`).digest('base64url');
    return { id, data: { stage: 'anonymous', csrf, createdAt: now, lastSeenAt: now }, transient: true };
  }

  /** A cookie value worth treating as an anonymous visitor id (not any string a client sends). */
  isVisitorId(id: string | undefined): id is string {
    return typeof id === 'string' && VISITOR_ID.test(id);
  }

  /**
   * A new session. With an account it is stored (and counted per account); without one it is an
   * anonymous visitor's, stored only when it carries something to remember (see save()).
   */
  async create(fields: Partial<Pick<SessionData, 'stage' | 'customerId' | 'flash' | 'pendingEmail'>> = {}): Promise<Session> {
    if (!fields.customerId) {
      const anon = this.anonymous();
      anon.data = { ...anon.data, ...fields };
      await this.save(anon);
      return anon;
    }
    const now = this.now();
    const id = randomId(32);
    const data: SessionData = { stage: 'anonymous', ...fields, csrf: randomId(32), createdAt: now, lastSeenAt: now };
    await this.write(id, data);
    return { id, data };
  }

  /** The live session for `id`, with its idle timer restarted; null when unknown, idle or too old. */
  async load(id: string | undefined): Promise<Session | null> {
    if (!id || id.length > 128) return null;
    const raw = await this.redis.get(this.key(id));
    if (!raw) return null;
    const data = JSON.parse(raw) as SessionData;
    const now = this.now();
    if (now - data.lastSeenAt > this.timeouts.idleMs || now - data.createdAt >= this.timeouts.absoluteMs) {
      await this.destroy(id);
      return null;
    }
    if (data.customerId && (await this.endedForAccount(data))) {
      await this.destroy(id);
      return null;
    }
    data.lastSeenAt = now;
    await this.write(id, data);
    return { id, data };
  }

  /**
   * Writes the session back. A transient (anonymous) one is stored only when it carries something to
   * remember, and only while the anonymous cap allows; otherwise the note is dropped.
   */
  async save(session: Session): Promise<void> {
    if (session.transient && !session.data.flash && !session.data.pendingEmail && !session.data.customerId) return;
    if (await this.write(session.id, session.data)) delete session.transient;
  }

  /**
   * Moves the session to a fresh id and CSRF token (defeats fixation: an id planted before sign-in is
   * worthless after it). `restart` starts a new absolute lifetime (at sign-in).
   */
  async rotate(old: Session, changes: Partial<SessionData>, restart = false): Promise<Session> {
    const now = this.now();
    const data: SessionData = {
      ...old.data,
      ...changes,
      csrf: randomId(32),
      createdAt: restart ? now : old.data.createdAt,
      lastSeenAt: now,
    };
    if (!old.transient) await this.destroy(old.id);
    if (!data.customerId) {
      // Back to an anonymous visitor (after activation): a fresh visitor id, stored only if it must be.
      const anon = this.anonymous();
      anon.data = { ...data, csrf: anon.data.csrf };
      await this.save(anon);
      return anon;
    }
    const id = randomId(32);
    await this.write(id, data);
    return { id, data };
  }

  private endedKey(customerId: string): string {
    return `${this.prefix}:console:sessions-ended:${customerId}`;
  }

  /**
   * Ends every session of an account (password reset or change, suspension): deletes them through the
   * account's index at once, and leaves a marker with the time so that a request of one of them still in
   * flight cannot write it back. A session started (or restarted) at or after the marker lives on.
   */
  async endAllSessionsOf(customerId: string): Promise<number> {
    await this.redis.set(this.endedKey(customerId), String(this.now()), 'PX', this.timeouts.absoluteMs + 60_000);
    return endAllSessionsOfAccount(this.redis, this.prefix, customerId);
  }

  private async endedForAccount(data: SessionData): Promise<boolean> {
    const ended = await this.redis.get(this.endedKey(data.customerId!));
    return ended !== null && data.createdAt < Number(ended);
  }

  async destroy(id: string): Promise<void> {
    const key = this.key(id);
    const raw = await this.redis.get(key);
    const customerId = raw ? (JSON.parse(raw) as SessionData).customerId : undefined;
    const tx = this.redis.multi().del(key).zrem(this.anonymousIndex(), this.member(id));
    if (customerId) tx.zrem(accountIndexKey(this.prefix, customerId), this.member(id));
    await tx.exec();
  }
}
