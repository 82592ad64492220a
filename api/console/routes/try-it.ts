// Owns the console's "Try it" pages (/console/emotion/try, /console/liveness/try) and the session routes they
// call: signed in, CSRF-checked (X-CSRF-Token), throttled and capped per account and UTC month well inside the
// plan's allowance (a tenth of its monthly calls, so try-it is never a way around the plan) before the body is read,
// the body read within the account's share of the process's upload room (the same share as its /v1 calls), running
// the same queues and workers as the public APIs. Try-it calls use no credit; the cap is what bounds them.
// The bytes live only in the job's short-TTL payload key, as on the public path; nothing is stored.
import express, { Router, type Request, type Response } from 'express';
import { AppError, InvalidRequestError } from '../../../shared/errors';
import { Deadline } from '../../../shared/deadline';
import { moveConsoleDeadline } from '../request-deadline';
import {
  QUEUE_NAMES,
  type QueueName,
  type EmotionInput,
  type EmotionResult,
  type LivenessInput,
  type LivenessJobValue,
} from '../../../shared/queues/contracts';
import { acceptedContentType, MAX_AUDIO_BYTES } from '../../../shared/contracts/http/emotion';
import { MAX_IMAGE_BASE64_CHARS } from '../../../shared/contracts/http/liveness';
import { bodyWithinDeadline } from '../../http/deadline';
import { accountShare } from '../../http/upload-gate';
import { customerIdOf, requireStage, SessionRequiredError } from '../http';
import { appContext, sendPage, type ConsoleDeps } from '../context';
import { tryItMonthlyCap } from '../services/try-it-allowance';
import { emotionTryPage, livenessTryPage } from '../views/try-it';

/**
 * The one place try-it calls reach the job queues: the process's own job clients (the same as the public routes'),
 * within the service's own budget from now (the console request's own deadline is CONSOLE_BUDGET_MS), counted in the
 * account's fair share of the workers (the same as its API calls').
 */
async function runTryItJob<I, R>(d: ConsoleDeps, req: Request, queueName: QueueName, input: I, payload: Buffer, budgetMs: number): Promise<R> {
  const jobs = await d.jobsFor(queueName);
  const deadline = Deadline.after(budgetMs);
  moveConsoleDeadline(req, deadline);
  const answer = await jobs.call<I, R>({
    requestId: req.requestId,
    input,
    payload,
    deadline,
    tenant: customerIdOf(req),
    log: req.log,
  });
  return answer.value;
}

/** JPEG or PNG from the magic bytes (the public route takes image_format; here the file speaks for itself). */
function imageFormatOf(bytes: Buffer): 'jpeg' | 'png' {
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length > 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  throw new InvalidRequestError('Send a JPEG or PNG image');
}

export function tryItRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');
  async function signedInAccount(req: Request) {
    const a = await d.accounts.current(customerIdOf(req));
    if (!a) throw new SessionRequiredError('This account no longer exists.');
    return a;
  }

  r.get('/emotion/try', auth, async (req, res) => {
    const a = await signedInAccount(req);
    sendPage(res, emotionTryPage(await appContext(d, req, res, a), { monthlyCap: tryItMonthlyCap(d.accounts.planView(a).monthlyLimit), maxSeconds: 60 }));
  });

  r.get('/liveness/try', auth, async (req, res) => {
    const a = await signedInAccount(req);
    sendPage(
      res,
      livenessTryPage(await appContext(d, req, res, a), {
        monthlyCap: tryItMonthlyCap(d.accounts.planView(a).monthlyLimit),
        threshold: d.config.FAKE_THRESHOLD,
      }),
    );
  });

  // JSON routes for the pages' scripts: the console's error handler answers their errors in the API's shape
  // (errors.ts, TRY_IT_API_PATHS), never as an HTML page.

  // Like /v1: the throttle and the month's cap are taken before a byte of the body is read (a refusal closes the
  // connection unread), then the body is read within the account's one share of the process's upload room.
  const readBody = (limit: number) =>
    d.uploads.read((req) => accountShare(customerIdOf(req)), bodyWithinDeadline(express.raw({ type: () => true, limit })), limit);
  const tryOf = (res: Response) => res.locals.tryIt as { used: number; cap: number };

  r.post(
    '/emotion/try/analyze',
    auth,
    async (req, res, next) => {
      if (!acceptedContentType(req.get('content-type') ?? '')) throw new InvalidRequestError('Send the recording or an audio file (Content-Type audio/*)');
      res.locals.tryIt = await d.tryIt.spend('emotion', customerIdOf(req));
      next();
    },
    readBody(MAX_AUDIO_BYTES),
    async (req, res) => {
      const body = req.body as unknown;
      if (!Buffer.isBuffer(body) || body.length === 0) {
        await d.tryIt.giveBack('emotion', customerIdOf(req));
        throw new AppError('no_audio', 'Nothing was recorded: the recording is empty', 400);
      }
      // No tokenId: the worker's usage event is written unbilled and without a token, like every emotion call.
      const input: EmotionInput = { contentType: req.get('content-type') ?? '' };
      const value = await runTryItJob<EmotionInput, EmotionResult>(d, req, QUEUE_NAMES.emotion, input, body, d.config.EMOTION_BUDGET_MS);
      const { stages: _stages, ...result } = value;
      res.json({ ...result, try_it: tryOf(res) });
    },
  );

  r.post(
    '/liveness/try/check',
    auth,
    async (req, res, next) => {
      res.locals.tryIt = await d.tryIt.spend('liveness', customerIdOf(req));
      next();
    },
    readBody(Math.floor((MAX_IMAGE_BASE64_CHARS * 3) / 4)),
    async (req, res) => {
      const body = req.body as unknown;
      let imageFormat: 'jpeg' | 'png';
      try {
        if (!Buffer.isBuffer(body) || body.length === 0) throw new InvalidRequestError('Send a JPEG or PNG image');
        imageFormat = imageFormatOf(body);
      } catch (err) {
        await d.tryIt.giveBack('liveness', customerIdOf(req));
        throw err;
      }
      // No billing context: the worker runs the same engine and commits no credit (try-it is free).
      const input: LivenessInput = { imageFormat };
      const value = await runTryItJob<LivenessInput, LivenessJobValue>(d, req, QUEUE_NAMES.liveness, input, body, d.config.LIVENESS_BUDGET_MS);
      const { stages: _stages, ...result } = value.result;
      res.json({ ...result, threshold: d.config.FAKE_THRESHOLD, try_it: tryOf(res) });
    },
  );

  return r;
}
