// Owns the liveness front-end's Express app: on the shared preamble (api/http/preamble.ts: ops endpoints, API
// reference), the /v1 routes (check, usage, health), the console under /console and the marketplace endpoint
// when this front-end serves them (api/console/app.ts), and the /v1 error envelope with the caller's credits when known.
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Connection } from 'mongoose';
import type { Redis } from 'ioredis';
import { MethodNotAllowedError, NotFoundError, PayloadTooLargeError } from '../../shared/errors';
import type { AccountService } from '../../shared/accounts/account-service';
import type { ApiKeyService } from '../../shared/accounts/api-keys';
import type { CreditLedger } from '../../shared/billing/credit-ledger';
import type { Clock } from '../../shared/billing/month';
import { pingMongo } from '../../shared/db/mongo';
import type { JobClient } from '../../shared/queues/job-client';
import { errorHandler } from '../http/error-handler';
import { livenessOpenApi, LIVENESS_OPENAPI_PATH } from '../openapi/liveness-document';
import { bodyWithinDeadline } from '../http/deadline';
import { createFrontEndApp, type PreambleDeps } from '../http/preamble';
import type { AuthFailureGuard, Throttle } from '../http/throttle';
import { accountShare, type UploadGate } from '../http/upload-gate';
import { requireApiKey } from './auth';
import { checkLivenessHandler, FrontEndWork } from './route';
import { MAX_IMAGE_BASE64_CHARS, MAX_IMAGE_BYTES, RAW_IMAGE_TYPES } from '../../shared/contracts/http/liveness';
import { quotaFromSnapshot, renderError, sendSuccess, UNKNOWN, type QuotaView } from './envelope';
import type { IdempotencyStore } from './idempotency';
import { fairUseSubject, LivenessCheck } from './step';
import { withPlainBodyScan } from './plain-body-scan';
import type { ConsoleApp } from '../console/app';

export interface LivenessAppDeps extends PreambleDeps {
  redis: Redis;
  mongo: Connection;
  accounts: AccountService;
  apiKeys: ApiKeyService;
  ledger: CreditLedger;
  jobs: JobClient;
  throttle: Throttle;
  /** Failed authentications per client address and credential prefix (the same guard as the emotion API). */
  authFailures: AuthFailureGuard;
  idempotency: IdempotencyStore;
  /** The process's upload room, each account in one share (shared with the console's try-it routes). */
  uploads: UploadGate;
  /** What a fair-use token pays for besides a call: declared body bytes, and the front-end's parse time. */
  fairUse: { bytesPerToken: number; parseMsPerToken: number };
  clock: Clock;
  /** The console and the marketplace's endpoint, when this front-end serves them; null for the API alone. */
  console: ConsoleApp | null;
}

/** JSON envelope overhead allowed on top of the Base64 image. */
const BODY_LIMIT = MAX_IMAGE_BASE64_CHARS + 64 * 1024;

/**
 * JSON bodies from this size (or of no declared size) get the streaming pass (plain-body-scan.ts). A smaller body's
 * whole parse, refused or not, costs a millisecond or two, charged by its parse time; the pass would add about as
 * much again to every photo (`bench/body-parse.ts`).
 */
const SCAN_FROM_BYTES = 1024 * 1024;

/** `application/json` in UTF-8 (no charset, or utf-8): the JSON form route.ts reads from its bytes. */
function isUtf8Json(req: Request): boolean {
  if (!req.is('application/json')) return false;
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.get('content-type') ?? '')?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/** Body parsers one after another: each leaves a body it does not take (by type, or read already) to the next. */
function parsersInTurn(parsers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    const run = (i: number): void => {
      if (i === parsers.length) return next();
      void parsers[i]!(req, res, (err?: unknown) => (err ? next(err) : run(i + 1)));
    };
    run(0);
  };
}

function methodNotAllowed(allowed: string[]) {
  return () => {
    throw new MethodNotAllowedError(allowed);
  };
}

export function createLivenessApp(d: LivenessAppDeps): Express {
  // Every /v1 route spends at most the budget from the moment the request arrived (the console sets its own).
  const app = createFrontEndApp(d, { apiReference: { documentPath: LIVENESS_OPENAPI_PATH, document: livenessOpenApi } });

  // Health: the spec's own body, no envelope. Redis down also answers 503 (docs/liveness-api.md).
  app.get('/v1/health', async (_req, res) => {
    if (!(await pingMongo(d.mongo))) {
      res.status(503).json({ status: 'error', message: 'database unavailable' });
      return;
    }
    if (d.redis.status !== 'ready') {
      res.status(503).json({ status: 'error', message: 'queue unavailable' });
      return;
    }
    res.status(200).json({ status: 'ok' });
  });
  app.all('/v1/health', methodNotAllowed(['GET']));

  const auth = requireApiKey(d.apiKeys, d.authFailures);
  const throttle = async (req: Request, _res: Response, next: NextFunction) => {
    await req.deadline.race('throttle', d.throttle.take(fairUseSubject(req.auth!.account._id)));
    next();
  };
  // The JSON form — as bytes when UTF-8 (route.ts reads the common body without JSON.parse), parsed by
  // express.json for another charset — or the raw image bytes. Each parser leaves other bodies alone.
  const jsonBytes = express.raw({ limit: BODY_LIMIT, type: (req) => isUtf8Json(req as Request) });
  const json = express.json({ limit: BODY_LIMIT, strict: false, type: 'application/json' });
  const rawImage = express.raw({ limit: MAX_IMAGE_BYTES, type: Object.keys(RAW_IMAGE_TYPES) });
  const parseBody = parsersInTurn([jsonBytes, json, rawImage]);
  // The account's share of body bytes in flight is its own (all its keys together); the upload's time is credited
  // back to the deadline; a UTF-8 JSON body is checked as it streams (plain-body-scan.ts), its time charged with the parse.
  const frontEndWork = new FrontEndWork();
  const scanned = withPlainBodyScan(
    parseBody,
    (req) => isUtf8Json(req) && !(Number(req.get('content-length')) < SCAN_FROM_BYTES),
    (req, ms) => frontEndWork.add(req, ms),
  );
  const readBody = d.uploads.read((req) => accountShare(req.auth!.account._id), bodyWithinDeadline(scanned), BODY_LIMIT);
  const check = new LivenessCheck({ accounts: d.accounts, ledger: d.ledger, jobs: d.jobs, throttle: d.throttle, metrics: d.metrics });

  // Everything but authentication runs inside the handler, the body read included (see route.ts).
  app.post(
    '/v1/check/liveness',
    auth,
    checkLivenessHandler({
      check,
      idempotency: d.idempotency,
      readBody,
      bodyHandedOff: (req) => d.uploads.handedOff(req),
      throttle: d.throttle,
      fairUse: d.fairUse,
      frontEndWork,
      clock: d.clock,
    }),
  );
  app.all('/v1/check/liveness', methodNotAllowed(['POST']));

  app.get('/v1/usage', auth, throttle, async (req, res) => {
    const plan = d.accounts.planView(req.auth!.account);
    const usage = await req.deadline.race('usage', d.ledger.snapshot(req.auth!.account._id, plan));
    sendSuccess(
      res,
      d.clock,
      {
        year_month: usage.month,
        total_calls: usage.used,
        monthly_limit: usage.monthlyLimit,
        remaining_calls: usage.remaining,
        over_limit_calls: usage.overage,
        plan: plan.plan,
        hard_cap_enabled: plan.hardCap,
      },
      quotaFromSnapshot(req.auth!.account._id, usage),
    );
  });
  app.all('/v1/usage', methodNotAllowed(['GET']));

  if (d.console) {
    // The console answers its own errors (HTML pages, try-it JSON) and spends its own budget: see api/console/app.ts.
    app.use('/console', d.console.router);
    app.use(d.console.marketplace);
  }

  app.use(() => {
    throw new NotFoundError('No such endpoint');
  });
  /** An error's credits when it carries none: the caller's snapshot, best effort and never past the deadline. */
  const quotaOf = async (req: Request): Promise<QuotaView> => {
    const auth = req.auth;
    if (!auth) return UNKNOWN;
    const unknown: QuotaView = { customerId: auth.account._id, remaining: null, overLimit: null };
    return req.deadline.race('usage', d.ledger.snapshot(auth.account._id, d.accounts.planView(auth.account))).then(
      (usage) => quotaFromSnapshot(auth.account._id, usage),
      () => unknown,
    );
  };
  app.use(errorHandler(renderError(d.clock, quotaOf), { bodyTooLarge: () => new PayloadTooLargeError('The request body exceeds the 10 MB image limit') }));
  return app;
}
