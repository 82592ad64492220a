// Owns the console app: builds its services from the liveness front-end's dependencies and its router for
// /console — its own deadline budget (CONSOLE_BUDGET_MS), strict CSP, no-store caching, the built assets, session
// handling, CSRF check, one route file per area and one error handler (errors.ts) — plus the marketplace's
// signed-event endpoint and the console's schedulers. The liveness app mounts both routers by name (api/liveness/app.ts).
import express, { type Router } from 'express';
import helmet from 'helmet';
import { NotFoundError } from '../../shared/errors';
import { EmotionTokenService, type AuthenticatedToken } from '../../shared/accounts/emotion-tokens';
import { AuthCache } from '../../shared/accounts/auth-cache';
import { AuditLog } from '../../shared/accounts/audit-log';
import { ConsoleCredentials } from '../../shared/accounts/console-credentials';
import { createMailer } from './mail/mailer';
import type { Metrics } from '../../shared/metrics';
import { CONSOLE_ASSETS_URL, serveAssets } from './assets/serve';
import { AttemptLimiter } from './auth/attempts';
import type { ConsoleDeps } from './context';
import { csrfProtect, loadSession } from './http';
import { consoleErrorHandler } from './errors';
import { consoleRequestDeadline } from './request-deadline';
import { HmacRegistrationSigner } from './links/registration-token';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS, SessionStore } from './auth/session';
import { deriveKey } from './secrets';
import { consoleConfigProblems } from '../../shared/config';
import { TotpService } from './auth/totp';
import { VerificationTokens } from './links/verification-token';
import { PasswordResetTokens } from './links/password-reset';
import { RevealStore } from './links/reveal';
import { startUsageAlerts } from './usage-alerts';
import { RecoveryCodes } from './auth/recovery-codes';
import { ShortLocks } from './services/short-locks';
import { SubscriptionClaims } from './services/subscription-claims';
import { TryItAllowance } from './services/try-it-allowance';
import { activityRoutes } from './routes/activity';
import { emotionTokenRoutes } from './routes/emotion-tokens';
import { keysRoutes } from './routes/keys';
import { overviewRoutes } from './routes/overview';
import { planRoutes } from './routes/plan';
import { devMailboxRoutes } from './routes/dev-mailbox';
import { onboardingRoutes } from './routes/onboarding';
import { signInRoutes } from './routes/sign-in';
import { tryItRoutes } from './routes/try-it';
import { securityRoutes } from './routes/security';
import { marketplaceRoutes } from '../marketplace/routes';
import { marketplaceSecret } from '../../shared/marketplace/entitlements';

/** What the console takes from the front-end that serves it (the liveness front-end's dependencies). */
export type ConsoleHostDeps = Pick<ConsoleDeps, 'config' | 'log' | 'models' | 'accounts' | 'apiKeys' | 'ledger' | 'redis' | 'clock' | 'jobsFor' | 'uploads'> & {
  metrics: Metrics;
};

export function buildConsoleDeps(deps: ConsoleHostDeps): ConsoleDeps {
  const { config, log, redis } = deps;
  if (!config.APP_SECRET) throw new Error('APP_SECRET is required for the console (npm start generates a local one)');
  const problems = consoleConfigProblems(config);
  if (problems.length > 0) throw new Error(`The console refuses this configuration:\n  ${problems.join('\n  ')}`);
  const prefix = config.QUEUE_PREFIX;
  const mailboxDir = config.MAILBOX_DIR && config.NODE_ENV !== 'production' ? config.MAILBOX_DIR : null;
  const credentials = new ConsoleCredentials(deps.models, deps.clock);
  return {
    config,
    log,
    models: deps.models,
    accounts: deps.accounts,
    apiKeys: deps.apiKeys,
    credentials,
    audit: new AuditLog(deps.models, deps.clock),
    ledger: deps.ledger,
    // Revocations drop the emotion API's cached authentication (auth-cache.ts).
    emotionTokens: new EmotionTokenService(deps.models, { cache: new AuthCache<AuthenticatedToken>(redis, prefix) }),
    clock: deps.clock,
    redis,
    sessions: new SessionStore(redis, prefix, DEFAULT_TIMEOUTS, Date.now, DEFAULT_LIMITS, deriveKey(config.APP_SECRET, 'session-id')),
    attempts: new AttemptLimiter(redis, prefix),
    totp: new TotpService(config.APP_SECRET, redis, prefix, config.APP_SECRET_PREVIOUS ? [config.APP_SECRET_PREVIOUS] : []),
    verification: new VerificationTokens(config.APP_SECRET, redis, prefix),
    resets: new PasswordResetTokens(config.APP_SECRET, redis, prefix),
    reveals: new RevealStore(redis, prefix),
    registration: new HmacRegistrationSigner(config.APP_SECRET),
    recoveryCodes: new RecoveryCodes({ redis, prefix, accounts: deps.accounts, credentials }),
    locks: new ShortLocks(redis, prefix),
    subscriptions: new SubscriptionClaims(redis, prefix, deps.accounts, config.PENDING_ACCOUNT_DAYS),
    tryIt: new TryItAllowance(redis, prefix, deps.accounts, deps.clock),
    mailer: createMailer(config, log, (outcome) => deps.metrics.mailSent.inc({ outcome })),
    jobsFor: deps.jobsFor,
    uploads: deps.uploads,
    cookie: { secure: config.SECURE_COOKIES },
    mailboxDir,
  };
}

/** Strict CSP for every console response: our own origin only, no inline script or style. */
function consoleHelmet(secure: boolean) {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        ...(secure ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: secure ? { maxAge: 31536000, includeSubDomains: true } : false,
  });
}

/** How often the pending-account sweep runs (it also runs once at start). */
const PENDING_SWEEP_EVERY_MS = 3600_000;

/** Deletes never-verified accounts older than PENDING_ACCOUNT_DAYS, at start and hourly. */
function sweepPendingAccounts(d: ConsoleDeps): void {
  const sweep = () =>
    d.accounts
      .deleteStalePending(d.config.PENDING_ACCOUNT_DAYS)
      .then((deleted) => deleted > 0 && d.log.info({ deleted, days: d.config.PENDING_ACCOUNT_DAYS }, 'pending accounts expired'))
      .catch((err: unknown) => d.log.warn({ err }, 'pending-account sweep failed; the next one retries'));
  void sweep();
  setInterval(sweep, PENDING_SWEEP_EVERY_MS).unref();
}

/** What the liveness app mounts: the console under /console, the marketplace's endpoint at the root. */
export interface ConsoleApp {
  router: Router;
  marketplace: Router;
}

/** Builds the console (refusing an incomplete configuration) and starts its schedulers. */
export function createConsole(deps: ConsoleHostDeps): ConsoleApp {
  const d = buildConsoleDeps(deps);
  const router = express.Router();
  // The console's own budget; its database calls and, as a backstop, its answer are bounded by it.
  const deadline = consoleRequestDeadline(d.config.CONSOLE_BUDGET_MS, consoleErrorHandler(d));
  router.use(deadline.start);
  router.use(consoleHelmet(d.cookie.secure));
  router.use((_req, res, next) => {
    // Pages carry one-time secrets and CSRF tokens: never cache them anywhere.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  // Built, content-hashed files (npm run build:console): cached for a year, a change gets a new name.
  router.use(CONSOLE_ASSETS_URL.replace('/console', ''), serveAssets());

  router.use(express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 50 }));
  // A signed-in session ends on its next request once the account is suspended or cancelled (a scheduled
  // cancellation included: current() applies it on the 1st).
  router.use(loadSession(d.sessions, d.cookie, async (customerId) => (await d.accounts.current(customerId))?.status === 'active'));
  router.use(csrfProtect(() => (d.config.PUBLIC_BASE_URL ? new URL(d.config.PUBLIC_BASE_URL).origin : null)));
  router.use(onboardingRoutes(d));
  router.use(signInRoutes(d));
  if (d.mailboxDir) router.use(devMailboxRoutes(d, d.mailboxDir));
  router.use(overviewRoutes(d));
  router.use(keysRoutes(d));
  router.use(planRoutes(d));
  router.use(emotionTokenRoutes(d));
  router.use(activityRoutes(d));
  router.use(tryItRoutes(d));
  router.use(securityRoutes(d));
  router.use(() => {
    throw new NotFoundError('There is no console page at this address.');
  });
  router.use(deadline.errors);
  // The marketplace's server-to-server entry point (signed events; no session or CSRF): see docs/billing.md.
  const marketplace = marketplaceRoutes({
    secret: marketplaceSecret(d.config)!,
    accounts: d.accounts,
    models: d.models,
    clock: d.clock,
    redis: d.redis,
    prefix: d.config.QUEUE_PREFIX,
    log: d.log,
  });
  sweepPendingAccounts(d);
  startUsageAlerts(d);
  deps.log.info({ mailbox: d.mailboxDir !== null }, 'console built for /console');
  return { router, marketplace };
}
