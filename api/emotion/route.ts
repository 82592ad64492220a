// Owns POST /feelings/v3/analysis as HTTP: CORS, bearer authentication, the upfront fair-use seconds and the content
// type (all decided before a byte of the body is read), the account's share of body bytes in flight, and mapping the
// analysis (step.ts) to the answer with its Server-Timing.
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { AppError, ForbiddenError, InvalidRequestError, MethodNotAllowedError, UnauthenticatedError } from '../../shared/errors';
import type { EmotionTokenService, AuthenticatedToken } from '../../shared/accounts/emotion-tokens';
import { acceptedContentType, ANALYSIS_PATH, MAX_AUDIO_BYTES } from '../../shared/contracts/http/emotion';
import { bodyWithinDeadline } from '../http/deadline';
import type { AuthFailureGuard, AuthOutcome } from '../http/throttle';
import type { UploadGate } from '../http/upload-gate';
import { analyse, fairUseSubject, type AnalysisDeps } from './step';

export interface AnalysisRouteDeps extends AnalysisDeps {
  tokens: EmotionTokenService;
  /** Failed authentications per client address and credential prefix (the same guard as /v1). */
  authFailures: AuthFailureGuard;
  /** The process's upload room, each account in one share (api/http/upload-gate.ts). */
  uploads: UploadGate;
}

declare module 'express-serve-static-core' {
  interface Request {
    emotionToken?: AuthenticatedToken;
  }
}

export function cors(_req: Request, res: Response, next: NextFunction) {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'X-Request-Id, X-Client-Request-Id, Retry-After, Server-Timing');
  next();
}

/**
 * Whether the client address is blocked (a read) and the token's cached authentication go out at once; the address
 * check still decides first. Only a token the cache cannot decide reads the database, after taking a failure in
 * advance (shared by the callers presenting the same token from this address now), as /v1 does (api/liveness/auth.ts).
 */
function bearer(tokens: EmotionTokenService, failures: AuthFailureGuard) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const attempt = failures.attempt(req, match?.[1]);
    let outcome: AuthOutcome = 'undecided';
    try {
      if (!match) {
        // No credential to verify: whether the address is blocked is a read, and a missing token counts as a failure.
        await req.deadline.race('authentication', attempt.blocked());
        outcome = 'wrong';
        if (!header) throw new UnauthenticatedError('missing_token', 'Authorization: Bearer <ACCESS_TOKEN> is required');
        throw new UnauthenticatedError('missing_token', 'The Authorization header must be "Bearer <ACCESS_TOKEN>"');
      }
      const [allowed, resolved] = await Promise.allSettled([
        req.deadline.race('authentication', attempt.blocked()),
        tokens.authenticate(match[1]!, req.deadline, () => req.deadline.race('authentication', attempt.beforeDatabase())),
      ]);
      // A ForbiddenError is a right token of an account that may not call: not a failed authentication.
      if (resolved.status === 'fulfilled') outcome = resolved.value ? 'right' : 'wrong';
      else if (resolved.reason instanceof ForbiddenError) outcome = 'right';
      if (allowed.status === 'rejected') throw allowed.reason;
      if (resolved.status === 'rejected') throw resolved.reason;
      if (!resolved.value) throw new ForbiddenError('The access token is wrong or revoked', 'invalid_token');
      req.emotionToken = resolved.value;
    } finally {
      await req.deadline.race('authentication', attempt.finish(outcome));
    }
    next();
  };
}

/** When each request's body started to arrive: the "receive" stage of Server-Timing. */
const receiveStarted = new WeakMap<Request, number>();

/** Server-Timing (W3C) lets callers and the benchmark see where the time went, without a body change. */
function serverTiming(stages: Record<string, number | undefined>): string {
  return Object.entries(stages)
    .filter(([, ms]) => typeof ms === 'number' && Number.isFinite(ms))
    .map(([name, ms]) => `${name};dur=${(ms as number).toFixed(1)}`)
    .join(', ');
}

/** Mounts the analysis route (its preflight, its POST and its 405) on the front-end's app. */
export function mountAnalysisRoute(app: Express, d: AnalysisRouteDeps): void {
  app.options(ANALYSIS_PATH, cors, (_req, res) => {
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  });

  // Read once the account's share of body bytes in flight holds it (a refusal closes the connection unread; a body
  // slower than the floor rate is cut).
  const audioBody = d.uploads.read(
    (req) => fairUseSubject(req.emotionToken!),
    bodyWithinDeadline(express.raw({ type: () => true, limit: MAX_AUDIO_BYTES })),
    MAX_AUDIO_BYTES,
  );
  app.post(
    ANALYSIS_PATH,
    cors,
    bearer(d.tokens, d.authFailures),
    async (req, _res, next) => {
      await req.deadline.race('throttle', d.throttle.take(fairUseSubject(req.emotionToken!), d.upfrontSeconds));
      next();
    },
    (req, _res, next) => {
      if (!acceptedContentType(req.get('content-type') ?? '')) {
        throw new InvalidRequestError(
          'Content-Type must be audio/* (the raw audio file bytes); video/webm and application/ogg are taken for WebM and Ogg audio',
        );
      }
      next();
    },
    // Authentication, the throttle and the content type are decided before a byte of the body is read.
    (req, _res, next) => {
      receiveStarted.set(req, performance.now());
      next();
    },
    audioBody,
    async (req, res) => {
      const receiveMs = performance.now() - (receiveStarted.get(req) ?? performance.now());
      const body = req.body as unknown;
      if (!Buffer.isBuffer(body) || body.length === 0) throw new AppError('no_audio', 'The request body is empty: send the audio file bytes', 400);
      const callStarted = performance.now();
      const caller = { token: req.emotionToken!, requestId: req.requestId, deadline: req.deadline, log: req.log };
      const answer = await analyse(d, caller, body, req.get('content-type') ?? '');
      const callMs = performance.now() - callStarted;
      const { stages, ...result } = answer.value;
      // `total` is the engine's; `queue` is the rest of the job's round trip (admission, bytes and job into Redis,
      // the worker's take, the answer's publish).
      res.setHeader('Server-Timing', serverTiming({ receive: receiveMs, ...stages, worker: answer.workerMs, queue: callMs - answer.workerMs }));
      res.status(200).json(result);
    },
  );
  app.all(ANALYSIS_PATH, cors, () => {
    throw new MethodNotAllowedError(['POST', 'OPTIONS']);
  });
}
