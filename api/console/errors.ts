// Owns the console's one error handler: every error a console request raises (routes, session loading, CSRF,
// body parsers, the database and Redis) is mapped once by the front-ends' errorHandler/fromFrameworkError
// (api/http/error-handler.ts) and answered as an HTML page for people, or as `{ error: { code, message } }` JSON
// on the routes the try-it pages' scripts call (also when the error comes before their route runs).
import type { ErrorRequestHandler, Request, Response } from 'express';
import { AppError, PayloadTooLargeError } from '../../shared/errors';
import { errorHandler, type FrameworkErrorWording } from '../http/error-handler';
import { pageContext, sendPage, type ConsoleDeps } from './context';
import { SessionRequiredError } from './http';
import { errorPage } from './views/layout';

/** The JSON routes the try-it pages' scripts call (paths under /console). */
const TRY_IT_API_PATHS: readonly string[] = ['/emotion/try/analyze', '/liveness/try/check'];

const TITLES: Record<number, string> = {
  400: 'Something in the form needs fixing',
  401: 'Please sign in again',
  403: 'That request was refused',
  404: 'Not found',
  405: 'Not allowed',
  429: 'Too many attempts',
  503: 'Temporarily unavailable',
};

const UNAVAILABLE = 'The service is briefly unavailable. Try again in a moment.';

/** Framework errors in words for people (the API's wording is for programs). */
const PAGE_WORDING: FrameworkErrorWording = {
  bodyTooLarge: () => new AppError('invalid_request', 'The form is too large.', 413),
  unreadable: 'The request could not be read.',
  unavailable: UNAVAILABLE,
};

/** The try-it scripts post a recording or a photo, not a form. */
const TRY_IT_WORDING: FrameworkErrorWording = { ...PAGE_WORDING, bodyTooLarge: () => new PayloadTooLargeError('The file exceeds 10 MB') };

const isTryItApi = (req: Request) => TRY_IT_API_PATHS.includes(req.path);

/** What a person reads: an unexpected error says only that it is ours, with the reference the log carries. */
const messageOf = (e: AppError, req: Request) => (e.code === 'internal_error' ? `Something went wrong on our side. Reference: ${req.requestId}` : e.message);

async function renderPage(d: ConsoleDeps, e: AppError, req: Request, res: Response): Promise<void> {
  // The page needs a session for its links' forms; when Redis is the problem, render without one. When the
  // session was never loaded (Redis or the database failed first), render without one too: a fresh anonymous
  // session here would replace the visitor's cookie and sign them out over a passing outage.
  const noSession = { csrf: null, devMailbox: d.mailboxDir !== null, support: d.config.SUPPORT_EMAIL };
  let ctx;
  try {
    ctx = req.consoleSession === undefined ? noSession : await pageContext(d, req, res);
  } catch {
    ctx = noSession;
  }
  const signedIn = req.consoleSession?.data.stage === 'authenticated';
  const signIn = e instanceof SessionRequiredError || e.code === 'csrf_failed' ? 'Sign in' : 'Go to sign in';
  const next = signedIn ? { href: '/console/dashboard', label: 'Back to the dashboard' } : { href: '/console/sign-in', label: signIn };
  const title = TITLES[e.httpStatus] ?? 'Something went wrong';
  sendPage(res, errorPage(ctx, { status: e.httpStatus, code: e.code, title, message: messageOf(e, req), next }), e.httpStatus);
}

export function consoleErrorHandler(d: ConsoleDeps): ErrorRequestHandler {
  return errorHandler(
    async (e, req, res) => (isTryItApi(req) ? { error: { code: e.code, message: messageOf(e, req) } } : renderPage(d, e, req, res)),
    (req) => (isTryItApi(req) ? TRY_IT_WORDING : PAGE_WORDING),
  );
}
