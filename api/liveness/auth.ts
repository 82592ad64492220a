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

export function requireApiKey(accounts: AccountService, failures: AuthFailureGuard) {
  return async (req: Request, res: Response, next: NextFunction) => {
    await req.deadline.race('authentication', failures.before(req));
    const auth = await accounts.authenticate(req.get('x-api-key'), req.deadline);
    if (!auth) {
      await req.deadline.race('authentication', failures.failed(req, req.get('x-api-key')));
      throw new UnauthenticatedError('invalid_api_key', 'The API key is missing, invalid, deactivated, expired or replaced');
    }
    await req.deadline.race('authentication', failures.succeeded(req));
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
