// Owns the per-request deadline: set when the request arrives, so every later step (authentication,
// idempotency, reservation, database, queue) spends only what is left of the front-end's budget. The time
// the client takes to upload its body is credited back: the budget bounds the server's work, and a slow
// uplink must not turn every large upload into a 503 (slow clients are cut off by the server's own timeouts).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Deadline } from '../../shared/deadline';

declare module 'express-serve-static-core' {
  interface Request {
    deadline: Deadline;
  }
}

export function requestDeadline(budgetMs: number) {
  return (req: Request, _res: Response, next: NextFunction) => {
    req.deadline = Deadline.after(budgetMs);
    next();
  };
}

/** Runs a body parser and moves the request's deadline later by the time the body took to arrive. */
export function bodyWithinDeadline(parser: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    parser(req, res, (err?: unknown) => {
      if (req.deadline) req.deadline = req.deadline.extendedBy(performance.now() - started);
      next(err);
    });
  };
}
