// Owns the console's request deadline: CONSOLE_BUDGET_MS from the request's arrival at the console router (the
// front-end's preamble before it is synchronous). Two layers keep the promise "503 within the budget + 1 s":
// - every database call the request makes is given the time left (shared/db/deadline-scope.ts), so a stalled
//   store normally ends the waiting step at the deadline and the route's error becomes the 503;
// - a backstop answers 503 itself if nothing has been sent shortly after the deadline, whatever step is still
//   waiting. The driver does not always keep to the time it is given (mongodb 6.20 retries a read after its pool
//   was cleared and selects a server for the retry with its own serverSelectionTimeoutMS, not the time left:
//   measured 0.5–3 s late), and create/save carry no timeout at all.
// A try-it route, whose job has its service's own budget from submission, moves the deadline to the job's when
// that is later (moveConsoleDeadline). After a backstop answer the late step's result or error is dropped
// (logged), never a second answer; work it started (a database write) may still complete, as with any deadline.
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { Deadline, DeadlineExceededError } from '../../shared/deadline';
import { withDbDeadline } from '../../shared/db/deadline-scope';

/** How long after the deadline the backstop waits, so a step that timed out on its own is the one that answers (and is logged). */
const BACKSTOP_GRACE_MS = 100;

const ANSWERED_AT_DEADLINE = Symbol('answeredAtDeadline');
type Marked = Response & { [ANSWERED_AT_DEADLINE]?: true };

export interface ConsoleRequestDeadline {
  /** First on the router: sets `req.deadline`, scopes the request's database calls to it and arms the backstop. */
  start: RequestHandler;
  /** Last on the router: `answer`, except for a request the backstop already answered (its late outcome is logged). */
  errors: ErrorRequestHandler;
}

/** The console's deadline; `answer` is its error handler, which the backstop answers through too. */
export function consoleRequestDeadline(budgetMs: number, answer: ErrorRequestHandler): ConsoleRequestDeadline {
  const start: RequestHandler = (req, res, next) => {
    req.deadline = Deadline.after(budgetMs);
    let backstop: NodeJS.Timeout;
    const arm = () => {
      backstop = setTimeout(() => {
        if (res.headersSent) return;
        // A route that took a later deadline (a try-it job's own budget: moveConsoleDeadline) is held to that one.
        if (req.deadline.remainingMs() > 0) return arm();
        req.log?.warn({ budgetMs }, 'console request still waiting at its deadline: answered 503 by the backstop');
        (res as Marked)[ANSWERED_AT_DEADLINE] = true;
        void answer(new DeadlineExceededError('console request'), req, res, () => undefined);
      }, req.deadline.remainingMs() + BACKSTOP_GRACE_MS);
    };
    arm();
    res.once('close', () => clearTimeout(backstop));
    withDbDeadline(req.deadline, next);
  };
  const errors: ErrorRequestHandler = (err, req, res, next) => {
    if (!(res as Marked)[ANSWERED_AT_DEADLINE]) return answer(err, req, res, next);
    // The route's late outcome: an error, or the ERR_HTTP_HEADERS_SENT its own answer raised.
    req.log?.info({ err }, 'late outcome of a console request answered at its deadline: dropped');
  };
  return { start, errors };
}

/**
 * Moves a console request's deadline (and so its backstop) later, to `deadline`, when that is later: a try-it job
 * has its service's own budget from its submission, which can end after the console's (a slow upload came first).
 */
export function moveConsoleDeadline(req: Request, deadline: Deadline): void {
  if (deadline.at > req.deadline.at) req.deadline = deadline;
}
