// Owns X-API-Key authentication for /v1: resolves the key to an account (401/403 otherwise).
import type { ErrorRequestHandler, NextFunction, Request, Response } from 'express';
import { UnauthenticatedError } from '../../shared/errors';
import type { AccountService, AuthenticatedKey } from '../../shared/accounts/account-service';
import type { CreditLedger } from '../../shared/billing/credit-ledger';
import { quotaFromSnapshot, quotaOf, setQuota } from './envelope';
import type { AuthFailureGuard } from '../http/throttle';

declare module 'express-serve-static-core' {
  interface Request {
    auth?: AuthenticatedKey;
  }
}

/**
 * The client address's failure allowance and the key's cached authentication are read at once (one round trip);
 * the address check still decides first, and the database is read (on a cache miss) only once it has passed, so an
 * address out of allowance gets 429 whatever it presents and costs no database read.
 */
export function requireApiKey(accounts: AccountService, failures: AuthFailureGuard) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const presented = req.get('x-api-key');
    const allowance = req.deadline.race('authentication', failures.before(req));
    const [allowed, resolved] = await Promise.allSettled([allowance, accounts.authenticate(presented, req.deadline, allowance)]);
    if (allowed.status === 'rejected') throw allowed.reason;
    if (resolved.status === 'rejected') throw resolved.reason;
    const auth = resolved.value;
    if (!auth) {
      await req.deadline.race('authentication', failures.failed(req, presented));
      throw new UnauthenticatedError('invalid_api_key', 'The API key is missing, invalid, deactivated, expired or replaced');
    }
    failures.succeeded(req);
    req.auth = auth;
    setQuota(res, { customerId: auth.account._id, remaining: null, overLimit: null });
    next();
  };
}

/** Fills in the caller's remaining credits on an error response (best effort: null if the database is down). */
export function quotaOnError(accounts: AccountService, ledger: CreditLedger): ErrorRequestHandler {
  return async (err, req, res, next) => {
    if (req.auth && quotaOf(res).customerId !== null && quotaOf(res).remaining === null) {
      try {
        // Best effort, and never past the deadline: an answer that is late for its numbers is still late.
        const usage = await req.deadline.race('usage', ledger.snapshot(req.auth.account._id, accounts.planView(req.auth.account)));
        setQuota(res, quotaFromSnapshot(req.auth.account._id, usage));
      } catch {
        // the error being reported is what matters; the numbers stay null
      }
    }
    next(err);
  };
}
