// Owns the per-request deadline: set when the request arrives, so every later step (authentication,
// idempotency, reservation, database, queue) spends only what is left of the front-end's budget. The time
// the client takes to upload its body is credited back: the budget bounds the server's work, and a slow
// uplink must not turn every large upload into a 503 (slow clients are cut off by the server's own timeouts).
// Only the client's time is credited: while the body arrives, any time this process's event loop could not
// run (loop-stall.ts: other work, or no core) is the server's, and stays in the budget. Without that, a
// starved API process would credit its own starvation and answer past the budget.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Deadline } from '../../shared/deadline';
import { loopStall, type LoopStall } from './loop-stall';

declare module 'express-serve-static-core' {
  interface Request {
    deadline: Deadline;
    /** Milliseconds the deadline moved for the client's upload (for the access log). */
    uploadCreditMs?: number;
  }
}

export function requestDeadline(budgetMs: number) {
  return (req: Request, _res: Response, next: NextFunction) => {
    req.deadline = Deadline.after(budgetMs);
    next();
  };
}

/** Runs a body parser and moves the request's deadline later by the time the client took to send the body. */
export function bodyWithinDeadline(parser: RequestHandler, stall: LoopStall = loopStall()): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const stalledBefore = stall.totalMs();
    parser(req, res, (err?: unknown) => {
      const credit = Math.max(0, performance.now() - started - (stall.totalMs() - stalledBefore));
      if (req.deadline) {
        req.deadline = req.deadline.extendedBy(credit);
        req.uploadCreditMs = Math.round(credit);
      }
      next(err);
    });
  };
}
