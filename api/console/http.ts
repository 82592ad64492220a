// Owns the console's HTTP plumbing: the session cookie, loading the session per request, CSRF checks
// on every state-changing request, and the stage guards (who may see which page).
import type { NextFunction, Request, Response } from 'express';
import { AppError, ForbiddenError } from '../../shared/errors';
import { sameString } from './secrets';
import type { Session, SessionStage, SessionStore } from './auth/session';

declare module 'express-serve-static-core' {
  interface Request {
    consoleSession?: Session | null;
  }
}

/** 401 for the console: rendered as "your session ended, sign in again". */
export class SessionRequiredError extends AppError {
  constructor(message = 'Your session has ended. Sign in again to continue.') {
    super('session_required', message, 401);
  }
}

export interface CookieOptions {
  secure: boolean;
}

/** `__Host-` binds the cookie to this exact origin over TLS (no Domain, Path=/); plain name on http. */
export const cookieName = (o: CookieOptions) => (o.secure ? '__Host-lc_console' : 'lc_console');

function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!(name in out)) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

function setSessionCookie(res: Response, o: CookieOptions, id: string): void {
  // No Max-Age: a browser session cookie; the server enforces idle and absolute limits.
  res.append('Set-Cookie', `${cookieName(o)}=${id}; Path=/; HttpOnly; SameSite=Lax${o.secure ? '; Secure' : ''}`);
}

/** Whether an account may still hold a console session (active; suspension and cancellation end them). */
export type SessionGate = (customerId: string) => Promise<boolean>;

/** Stages that belong to an activated account: they end when the account stops being active. */
const ACCOUNT_STAGES = new Set<SessionStage>(['password', 'authenticated']);

/**
 * Loads the cookie's session. A cookie with no stored session is an anonymous visitor (no Redis key);
 * a signed-in session of an account that is no longer active is ended here, on its next request.
 */
export function loadSession(store: SessionStore, o: CookieOptions, mayKeep?: SessionGate) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const id = parseCookies(req.headers.cookie)[cookieName(o)];
    let session = await store.load(id);
    if (session && mayKeep && ACCOUNT_STAGES.has(session.data.stage) && session.data.customerId && !(await mayKeep(session.data.customerId))) {
      await store.destroy(session.id);
      session = null;
    }
    req.consoleSession = session ?? (store.isVisitorId(id) ? store.anonymous(id) : null);
    next();
  };
}

/** The request's session; a visitor without a cookie gets an anonymous one (a cookie, nothing stored). */
export async function ensureSession(req: Request, res: Response, store: SessionStore, o: CookieOptions): Promise<Session> {
  if (req.consoleSession) return req.consoleSession;
  const session = store.anonymous();
  setSessionCookie(res, o, session.id);
  req.consoleSession = session;
  return session;
}

/** Replaces the request's session (after rotation or sign-out) and its cookie. */
export function adoptSession(req: Request, res: Response, o: CookieOptions, session: Session): void {
  req.consoleSession = session;
  setSessionCookie(res, o, session.id);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Synchronizer-token CSRF protection: every state-changing request carries the session's token in
 * the `_csrf` form field (or X-CSRF-Token). A cross-site Origin is refused before that.
 */
export function csrfProtect(publicOrigin: () => string | null) {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const origin = req.get('origin');
    if (origin && origin !== 'null') {
      const expected = publicOrigin() ?? `${req.protocol}://${req.get('host')}`;
      if (origin !== expected) throw new ForbiddenError('This form was sent from another site.', 'csrf_failed');
    }
    const session = req.consoleSession;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const presented = typeof body._csrf === 'string' ? body._csrf : req.get('x-csrf-token');
    if (!session || !presented || !sameString(presented, session.data.csrf)) {
      throw new ForbiddenError('This form has expired. Reload the page and try again.', 'csrf_failed');
    }
    next();
  };
}

/** Lets the request through only at `stage`; anything else goes to where that visitor belongs. */
export function requireStage(stage: SessionStage) {
  return (req: Request, res: Response, next: NextFunction) => {
    const s = req.consoleSession;
    if (s?.data.stage === stage && s.data.customerId) return next();
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (s?.data.stage === 'password') return res.redirect(303, '/console/sign-in/two-factor');
      if (s?.data.stage === 'authenticated') return res.redirect(303, '/console/dashboard');
      return res.redirect(303, '/console/sign-in');
    }
    throw new SessionRequiredError();
  };
}

export function customerIdOf(req: Request): string {
  const id = req.consoleSession?.data.customerId;
  if (!id) throw new SessionRequiredError();
  return id;
}
