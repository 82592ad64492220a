// Owns the per-request deadline: set when the request arrives, so every later step (authentication,
// idempotency, reservation, database, queue) spends only what is left of the front-end's budget.
import type { NextFunction, Request, Response } from 'express';
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
