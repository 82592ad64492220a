// Owns the emotion front-end's Express app: on the shared preamble (api/http/preamble.ts), POST /feelings/v3/analysis
// with bearer auth, CORS, fair use in seconds of audio, Server-Timing, and its error shape.
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import {
  AppError,
  ForbiddenError,
  InvalidRequestError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthenticatedError,
} from '../../shared/errors';
import type { EmotionTokenService, EmotionToken } from '../../shared/accounts/emotion-tokens';
import { JobTimeoutError, type JobClient } from '../../shared/queues/job-client';
import type { EmotionInput, EmotionResult } from '../../shared/queues/contracts';
import { errorHandler } from '../http/error-handler';
import { emotionOpenApi, EMOTION_OPENAPI_PATH } from '../openapi/emotion-document';
import { bodyWithinDeadline } from '../http/deadline';
import { createFrontEndApp, type PreambleDeps } from '../http/preamble';
import type { AuthFailureGuard, AuthOutcome, Throttle } from '../http/throttle';
import type { UploadGate } from '../http/upload-gate';

/**
 * The fair-use bucket a call spends from: its account's when the token has one, so every token of an account
 * shares one allowance and minting more tokens buys none; a token without an account (issued by an operator
 * with the admin CLI) has its own. Its tokens are seconds of audio: the work an analysis costs grows with the
 * audio's duration, not with the number of calls.
 */
function fairUseSubject(token: Pick<EmotionToken, '_id' | 'customerId'>): string {
  return `emotion-audio:${tenantOf(token)}`;
}

/** Whose fair share of the workers a call counts in: the token's account, or the token itself without one. */
function tenantOf(token: Pick<EmotionToken, '_id' | 'customerId'>): string {
  return token.customerId ?? `token:${token._id}`;
}

/** 10 MB with MB = 2^20 bytes (docs/emotion-engine.md, "Size"). */
export const MAX_AUDIO_BYTES = 10 * 1024 * 1024;
export const ANALYSIS_PATH = '/feelings/v3/analysis';

export interface EmotionAppDeps extends PreambleDeps {
  tokens: EmotionTokenService;
  jobs: JobClient;
  /** Fair use in seconds of audio, per account (fairUseSubject). */
  throttle: Throttle;
  /** Seconds of audio a call takes before its duration is known (the rest is charged once it is decoded). */
  upfrontSeconds: number;
  /** Seconds of audio a refused job is charged per second of its worker time (it has no decoded duration). */
  secondsPerWorkerSecond: number;
  /** Failed authentications per client address and credential prefix (the same guard as /v1). */
  authFailures: AuthFailureGuard;
  /** The process's upload room, each account in one share (api/http/upload-gate.ts). */
  uploads: UploadGate;
}

declare module 'express-serve-static-core' {
  interface Request {
    emotionToken?: EmotionToken;
  }
}

function cors(_req: Request, res: Response, next: NextFunction) {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'X-Request-Id, X-Client-Request-Id, Retry-After, Server-Timing');
  next();
}

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
      // Every token is read from the database, so its failure is taken in advance (shared by the callers presenting
      // the same token from this address now): that take is also the check that the address is not blocked.
      await req.deadline.race('authentication', attempt.beforeDatabase());
      const token = await tokens.authenticate(match[1]!, req.deadline).catch((err: unknown) => {
        if (err instanceof ForbiddenError) outcome = 'right';
        throw err;
      });
      outcome = token ? 'right' : 'wrong';
      if (!token) throw new ForbiddenError('The access token is wrong or revoked', 'invalid_token');
      req.emotionToken = token;
    } finally {
      await req.deadline.race('authentication', attempt.finish(outcome));
    }
    next();
  };
}

/** Browsers and file pickers label a WebM or Ogg audio recording video/webm or application/ogg; the bytes
 *  decide the format either way (a file with a video track is refused by the engine). */
const CONTAINER_TYPES: ReadonlySet<string> = new Set(['video/webm', 'video/x-matroska', 'application/ogg', 'video/ogg']);

export function acceptedContentType(header: string): boolean {
  const type = header.split(';')[0]!.trim().toLowerCase();
  return type.startsWith('audio/') || CONTAINER_TYPES.has(type);
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

export function createEmotionApp(d: EmotionAppDeps): Express {
  // The spec's 5 s processing time-out bounds the whole request, from arrival to answer; browsers in any origin call it.
  const app = createFrontEndApp(d, {
    apiReference: { documentPath: EMOTION_OPENAPI_PATH, document: emotionOpenApi },
    helmet: { crossOriginResourcePolicy: { policy: 'cross-origin' } },
  });

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
      const token = req.emotionToken!;
      const input: EmotionInput = { contentType: req.get('content-type') ?? '', tokenId: token._id };
      // The rest of the audio's duration (a debt the account's next calls wait for), not awaited by the answer. A
      // refused job (corrupt, out of time) has no duration: its worker time, at the engine's low pace, stands in; a
      // job still running when the budget ran out, the whole budget.
      const charge = (workerMs: number, durationSeconds?: number) => {
        const rest = Math.ceil(durationSeconds ?? (workerMs / 1000) * d.secondsPerWorkerSecond) - d.upfrontSeconds;
        d.throttle.charge(fairUseSubject(token), rest).catch((err: unknown) => req.log.warn({ err, rest }, 'audio seconds not charged'));
      };
      let answer;
      const callStarted = performance.now();
      try {
        answer = await d.jobs.call<EmotionInput, EmotionResult>({
          requestId: req.requestId,
          input,
          payload: body,
          deadline: req.deadline,
          tenant: tenantOf(token),
          log: req.log,
          onOutcome: (outcome) => charge(outcome.workerMs, outcome.ok ? outcome.value.summary.duration : undefined),
        });
      } catch (err) {
        if (err instanceof JobTimeoutError && err.wasStarted) charge(d.budgetMs);
        throw err;
      }
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

  app.use(cors, (req: Request) => {
    const hint = /^\/feelings?\/v3\/analy/.test(req.path) ? ` (the endpoint is ${ANALYSIS_PATH})` : '';
    throw new NotFoundError(`No such endpoint${hint}`);
  });
  app.use(
    errorHandler((err) => ({ error: { code: err.code, message: err.message } }), {
      bodyTooLarge: () => new PayloadTooLargeError('The audio file exceeds 10 MB (10,485,760 bytes)', 'payload_too_large'),
    }),
  );
  return app;
}
