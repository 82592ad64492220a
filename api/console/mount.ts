// Owns the console's wiring on the liveness front-end: builds its services from the shared
// dependencies and mounts /console with its own strict CSP, session handling, CSRF check, pages and
// an HTML error page (the /v1 JSON envelope is not for browsers).
import express, { type ErrorRequestHandler, type Express, type Request, type Response } from 'express';
import helmet from 'helmet';
import { AppError, InternalError, MethodNotAllowedError, NotFoundError, ServiceUnavailableError, TooManyRequestsError } from '../../shared/errors';
import { EmotionTokenService } from '../../shared/accounts/emotion-tokens';
import { isDatabaseUnavailable } from '../../shared/db/mongo';
import { createMailer } from '../../shared/mail/mailer';
import { isRedisUnavailable } from '../../shared/redis';
import type { LivenessServerDeps } from '../liveness/server';
import { ASSETS } from './assets';
import { AttemptLimiter } from './attempts';
import { baseUrl, pageContext, sendPage, type ConsoleDeps } from './context';
import { csrfProtect, loadSession, SessionRequiredError } from './http';
import { HmacRegistrationSigner } from './registration-token';
import { SessionStore } from './session';
import { TotpService } from './totp';
import { VerificationTokens } from './verification-token';
import { PasswordResetTokens } from './password-reset';
import { RevealStore } from './reveal';
import { startUsageAlerts } from './usage-alerts';
import { dashboardRoutes } from './routes/dashboard';
import { devMailboxRoutes } from './routes/dev-mailbox';
import { onboardingRoutes } from './routes/onboarding';
import { signInRoutes } from './routes/sign-in';
import { securityRoutes } from './routes/security';
import { errorPage } from './views/layout';

export function buildConsoleDeps(deps: LivenessServerDeps): ConsoleDeps {
  const { config, log, redis } = deps;
  if (!config.APP_SECRET) throw new Error('APP_SECRET is required for the console (npm start generates a local one)');
  if (config.NODE_ENV === 'production' && !config.PUBLIC_BASE_URL) {
    log.warn('PUBLIC_BASE_URL is not set: e-mail links use the request Host header; set it behind a proxy');
  }
  const prefix = config.QUEUE_PREFIX;
  const mailboxDir = config.MAILBOX_DIR && config.NODE_ENV !== 'production' ? config.MAILBOX_DIR : null;
  return {
    config,
    log,
    models: deps.models,
    accounts: deps.accounts,
    ledger: deps.ledger,
    emotionTokens: new EmotionTokenService(deps.models),
    clock: deps.clock,
    redis,
    sessions: new SessionStore(redis, prefix),
    attempts: new AttemptLimiter(redis, prefix),
    totp: new TotpService(config.APP_SECRET, redis, prefix),
    verification: new VerificationTokens(config.APP_SECRET, redis, prefix),
    resets: new PasswordResetTokens(config.APP_SECRET, redis, prefix),
    reveals: new RevealStore(redis, prefix),
    registration: new HmacRegistrationSigner(config.APP_SECRET),
    mailer: createMailer(config, log),
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

const TITLES: Record<number, string> = {
  400: 'Something in the form needs fixing',
  401: 'Please sign in again',
  403: 'That request was refused',
  404: 'Not found',
  405: 'Not allowed',
  429: 'Too many attempts',
  503: 'Temporarily unavailable',
};

function consoleErrors(d: ConsoleDeps): ErrorRequestHandler {
  return async (err, req: Request, res: Response, next) => {
    if (res.headersSent) return next(err);
    let e: AppError;
    if (err instanceof AppError) e = err;
    else if (isDatabaseUnavailable(err) || isRedisUnavailable(err)) e = new ServiceUnavailableError('The service is briefly unavailable. Try again in a moment.');
    else if ((err as { type?: string })?.type === 'entity.too.large') e = new AppError('invalid_request', 'The form is too large.', 413);
    else if (typeof (err as { status?: number })?.status === 'number' && (err as { status: number }).status < 500) e = new AppError('invalid_request', 'The request could not be read.', 400);
    else {
      req.log?.error({ err }, 'console: unhandled error');
      e = new InternalError(`Something went wrong on our side. Reference: ${req.requestId}`);
    }
    if (e instanceof TooManyRequestsError || e instanceof ServiceUnavailableError) res.setHeader('Retry-After', String(e.retryAfterSeconds));
    if (e instanceof MethodNotAllowedError) res.setHeader('Allow', e.allowed.join(', '));
    // The page needs a session for its links' forms; when Redis is the problem, render without one.
    let ctx;
    try {
      ctx = await pageContext(d, req, res);
    } catch {
      ctx = { csrf: null, devMailbox: d.mailboxDir !== null, support: d.config.SUPPORT_EMAIL };
    }
    const signedIn = req.consoleSession?.data.stage === 'authenticated';
    const next_ =
      e instanceof SessionRequiredError || e.code === 'csrf_failed'
        ? signedIn
          ? { href: '/console/dashboard', label: 'Back to the dashboard' }
          : { href: '/console/sign-in', label: 'Sign in' }
        : signedIn
          ? { href: '/console/dashboard', label: 'Back to the dashboard' }
          : { href: '/console/sign-in', label: 'Go to sign in' };
    sendPage(res, errorPage(ctx, { status: e.httpStatus, code: e.code, title: TITLES[e.httpStatus] ?? 'Something went wrong', message: e.message, next: next_ }), e.httpStatus);
  };
}

export function mountConsole(app: Express, deps: LivenessServerDeps): void {
  const d = buildConsoleDeps(deps);
  const router = express.Router();
  router.use(consoleHelmet(d.cookie.secure));
  router.use((_req, res, next) => {
    // Pages carry one-time secrets and CSRF tokens: never cache them anywhere.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  for (const asset of Object.values(ASSETS)) {
    router.get(asset.path.replace('/console', ''), (_req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      res.type(asset.type).send(asset.body);
    });
  }

  router.use(express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 50 }));
  router.use(loadSession(d.sessions, d.cookie));
  router.use(csrfProtect(() => (d.config.PUBLIC_BASE_URL ? new URL(d.config.PUBLIC_BASE_URL).origin : null)));
  router.use(onboardingRoutes(d));
  router.use(signInRoutes(d));
  if (d.mailboxDir) router.use(devMailboxRoutes(d, d.mailboxDir));
  router.use(dashboardRoutes(d));
  router.use(securityRoutes(d));
  router.use(() => {
    throw new NotFoundError('There is no console page at this address.');
  });
  router.use(consoleErrors(d));
  app.use('/console', router);
  startUsageAlerts(d);
  deps.log.info({ mailbox: d.mailboxDir !== null }, 'console mounted at /console');
}
