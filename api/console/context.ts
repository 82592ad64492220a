// Owns what every console route gets: the services, and helpers to render a page for this request
// (its CSRF token, a one-shot flash message, no-store caching).
import type { Request, Response } from 'express';
import type { Config } from '../../shared/config';
import type { Logger } from '../../shared/logger';
import type { Models } from '../../shared/db/models';
import type { Account, AccountService } from '../../shared/accounts/account-service';
import type { ApiKeyService } from '../../shared/accounts/api-keys';
import type { AuditLog } from '../../shared/accounts/audit-log';
import type { ConsoleCredentials } from '../../shared/accounts/console-credentials';
import type { EmotionTokenService } from '../../shared/accounts/emotion-tokens';
import type { CreditLedger } from '../../shared/billing/credit-ledger';
import type { Clock } from '../../shared/billing/month';
import type { Mailer } from './mail/mailer';
import type { JobClient } from '../../shared/queues/job-client';
import type { QueueName } from '../../shared/queues/contracts';
import type { Redis } from 'ioredis';
import type { UploadGate } from '../http/upload-gate';
import type { AttemptLimiter } from './auth/attempts';
import { customerIdOf, ensureSession, SessionRequiredError, type CookieOptions } from './http';
import type { RegistrationTokenSigner } from './links/registration-token';
import type { SessionStore } from './auth/session';
import type { TotpService } from './auth/totp';
import type { VerificationTokens } from './links/verification-token';
import type { PasswordResetTokens } from './links/password-reset';
import type { RevealStore } from './links/reveal';
import type { RecoveryCodes } from './auth/recovery-codes';
import type { ShortLocks } from './services/short-locks';
import type { SubscriptionClaims } from './services/subscription-claims';
import type { TryItAllowance } from './services/try-it-allowance';
import type { AppContext, PageContext } from './views/layout';

export interface ConsoleDeps {
  config: Config;
  log: Logger;
  models: Models;
  accounts: AccountService;
  apiKeys: ApiKeyService;
  /** Password, TOTP secret and recovery codes as stored (checking them is the console's). */
  credentials: ConsoleCredentials;
  audit: AuditLog;
  ledger: CreditLedger;
  emotionTokens: EmotionTokenService;
  clock: Clock;
  redis: Redis;
  sessions: SessionStore;
  attempts: AttemptLimiter;
  totp: TotpService;
  verification: VerificationTokens;
  resets: PasswordResetTokens;
  /** One-time secrets parked between a POST and the GET that shows them. */
  reveals: RevealStore;
  registration: RegistrationTokenSigner;
  recoveryCodes: RecoveryCodes;
  /** Short named locks (two quick submits of one form). */
  locks: ShortLocks;
  /** Whether a marketplace registration link is used up. */
  subscriptions: SubscriptionClaims;
  /** The try-it pages' throttle and monthly cap. */
  tryIt: TryItAllowance;
  mailer: Mailer;
  /** The job client of a queue, on the liveness process's connections (the try-it pages run both queues' jobs). */
  jobsFor: (queueName: QueueName) => Promise<JobClient>;
  /** The host process's upload room (api/http/upload-gate.ts): try-it bodies count in the account's one share. */
  uploads: UploadGate;
  cookie: CookieOptions;
  /** Local mail sink folder when the dev mailbox page is on; null otherwise. */
  mailboxDir: string | null;
}

/** Host names a development link may point at (and the dev mailbox answers to): this machine only. */
function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * The origin links in e-mails point at: PUBLIC_BASE_URL, always in production (start-up refuses a
 * console without it). In development the address the browser used, but only a loopback one: a forged
 * Host never becomes a link, it falls back to 127.0.0.1 and the port this server answered on.
 */
export function baseUrl(d: ConsoleDeps, req: Request): string {
  if (d.config.PUBLIC_BASE_URL) return d.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const host = req.get('host') ?? '';
  if (hasLoopbackHostHeader(req)) return `http://${host}`;
  return `http://127.0.0.1:${req.socket.localPort ?? d.config.LIVENESS_PORT}`;
}

/**
 * The emotion API's address for the console's examples: EMOTION_PUBLIC_BASE_URL, or else the console's own
 * origin on EMOTION_PORT (right for `npm start`, where both front-ends share the host).
 */
export function emotionBaseUrl(d: ConsoleDeps, req: Request): string {
  if (d.config.EMOTION_PUBLIC_BASE_URL) return d.config.EMOTION_PUBLIC_BASE_URL.replace(/\/+$/, '');
  const url = new URL(baseUrl(d, req));
  url.port = String(d.config.EMOTION_PORT);
  return url.origin;
}

/** The request's own Host header (never a proxy's X-Forwarded-Host) names this machine. */
export function hasLoopbackHostHeader(req: Request): boolean {
  try {
    const hostname = new URL(`http://${req.get('host') ?? ''}`).hostname;
    return !!hostname && isLoopbackHost(hostname);
  } catch {
    return false; // not a host at all
  }
}

export function sendPage(res: Response, body: string, status = 200): void {
  res.status(status).type('html').send(body);
}

/** Page context with a session (created if needed, for the CSRF token); consumes the flash. */
export async function pageContext(d: ConsoleDeps, req: Request, res: Response): Promise<PageContext> {
  const session = await ensureSession(req, res, d.sessions, d.cookie);
  const flash = session.data.flash ?? null;
  if (flash) {
    delete session.data.flash;
    await d.sessions.save(session);
  }
  const signedIn = session.data.stage === 'password' || session.data.stage === 'authenticated';
  return { csrf: session.data.csrf, flash, devMailbox: d.mailboxDir !== null, support: d.config.SUPPORT_EMAIL, signedIn };
}

export async function appContext(d: ConsoleDeps, req: Request, res: Response, account: Account): Promise<AppContext> {
  const ctx = await pageContext(d, req, res);
  return { ...ctx, csrf: ctx.csrf!, email: account.email, company: account.company ?? '' };
}

/** Sets a message for the next page, then redirects there (POST → redirect → GET). */
export async function redirectWithFlash(d: ConsoleDeps, req: Request, res: Response, to: string, flash: NonNullable<PageContext['flash']>): Promise<void> {
  const session = await ensureSession(req, res, d.sessions, d.cookie);
  session.data.flash = flash;
  await d.sessions.save(session);
  res.redirect(303, to);
}

/** Parks a secret for this session and redirects to the page that shows it once. */
export async function redirectToReveal(d: ConsoleDeps, req: Request, res: Response, to: string, reveal: Parameters<RevealStore['put']>[1]): Promise<void> {
  const session = await ensureSession(req, res, d.sessions, d.cookie);
  await d.reveals.put(session.id, reveal);
  res.redirect(303, to);
}

/** The signed-in customer's account (scheduled changes applied); the session ends if it is gone. */
export async function signedInAccount(d: ConsoleDeps, req: Request): Promise<Account> {
  const a = await d.accounts.current(customerIdOf(req));
  if (!a) throw new SessionRequiredError('This account no longer exists.');
  return a;
}

export function formField(req: Request, name: string): string {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
}
