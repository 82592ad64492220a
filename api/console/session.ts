// Owns console sessions: server-side in Redis (FerretDB has no TTL indexes), found by a random id in an
// HttpOnly SameSite cookie. Redis stores only a hash of the id, so a leaked dump does not hand out
// sessions. Idle and absolute timeouts; the id and CSRF token rotate when privilege changes.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { randomId } from './secrets';

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
  /** A one-shot message for the next page (set before a redirect). */
  flash?: { kind: 'success' | 'info' | 'error'; text: string };
}

export interface Session {
  id: string;
  data: SessionData;
}

export interface SessionTimeouts {
  idleMs: number;
  absoluteMs: number;
}

export const DEFAULT_TIMEOUTS: SessionTimeouts = { idleMs: 30 * 60 * 1000, absoluteMs: 12 * 3600 * 1000 };

export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly timeouts: SessionTimeouts = DEFAULT_TIMEOUTS,
    private readonly now: () => number = Date.now,
  ) {}

  private key(id: string): string {
    return `${this.prefix}:console:session:${crypto.createHash('sha256').update(id).digest('base64url')}`;
  }

  private async write(id: string, data: SessionData): Promise<void> {
    const untilAbsolute = data.createdAt + this.timeouts.absoluteMs - this.now();
    const ttl = Math.max(1, Math.min(this.timeouts.idleMs, untilAbsolute));
    await this.redis.set(this.key(id), JSON.stringify(data), 'PX', ttl);
  }

  async create(fields: Partial<Pick<SessionData, 'stage' | 'customerId' | 'flash' | 'pendingEmail'>> = {}): Promise<Session> {
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

  async save(session: Session): Promise<void> {
    await this.write(session.id, session.data);
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
    const id = randomId(32);
    await this.write(id, data);
    await this.destroy(old.id);
    return { id, data };
  }

  private endedKey(customerId: string): string {
    return `${this.prefix}:console:sessions-ended:${customerId}`;
  }

  /**
   * Ends every session of an account that began before now (password reset or change): a marker
   * with the time, compared with each session's start when it is next loaded. A session started
   * (or restarted) at or after the marker lives on. The marker outlives any session it could end.
   */
  async endAllSessionsOf(customerId: string): Promise<void> {
    await this.redis.set(this.endedKey(customerId), String(this.now()), 'PX', this.timeouts.absoluteMs + 60_000);
  }

  private async endedForAccount(data: SessionData): Promise<boolean> {
    const ended = await this.redis.get(this.endedKey(data.customerId!));
    return ended !== null && data.createdAt < Number(ended);
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }
}
