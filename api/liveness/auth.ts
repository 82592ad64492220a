// Owns X-API-Key authentication for /v1: resolves the key to an account (401/403 otherwise).
import type { NextFunction, Request, Response } from 'express';
import { ForbiddenError, UnauthenticatedError } from '../../shared/errors';
import type { ApiKeyService, AuthenticatedKey } from '../../shared/accounts/api-keys';
import type { AuthFailureGuard, AuthOutcome } from '../http/throttle';

declare module 'express-serve-static-core' {
  interface Request {
    auth?: AuthenticatedKey;
  }
}

/**
 * Whether the client address is blocked (a read) and the key's cached authentication go out at once (one round
 * trip); the address check still decides first. Only a key the cache cannot decide reads the database, after
 * taking a failure in advance (AuthFailureGuard), so an address out of allowance gets 429 whatever it presents
 * and costs no database read, and a valid key never spends its address's allowance.
 */
export function requireApiKey(apiKeys: ApiKeyService, failures: AuthFailureGuard) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const presented = req.get('x-api-key');
    const attempt = failures.attempt(req, presented);
    const [allowed, resolved] = await Promise.allSettled([
      req.deadline.race('authentication', attempt.blocked()),
      apiKeys.authenticate(presented, req.deadline, () => req.deadline.race('authentication', attempt.beforeDatabase())),
    ]);
    // A ForbiddenError is a right key of an account that may not call: not a failed authentication.
    const outcome: AuthOutcome =
      resolved.status === 'fulfilled' ? (resolved.value ? 'right' : 'wrong') : resolved.reason instanceof ForbiddenError ? 'right' : 'undecided';
    if (allowed.status === 'rejected') {
      await attempt.finish(outcome).catch(() => undefined);
      throw allowed.reason;
    }
    if (resolved.status === 'rejected') {
      await attempt.finish(outcome);
      throw resolved.reason;
    }
    const auth = resolved.value;
    if (!auth) {
      await req.deadline.race('authentication', attempt.finish('wrong'));
      throw new UnauthenticatedError('invalid_api_key', 'The API key is missing, invalid, deactivated, expired or replaced');
    }
    await attempt.finish('right');
    req.auth = auth;
    next();
  };
}
