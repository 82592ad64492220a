// Owns the marketplace's entry point on the liveness front-end: POST /marketplace/entitlements, where the
// marketplace delivers signed subscription events (shared/marketplace/entitlements.ts). Server to server:
// no session or CSRF; the HMAC signature over the raw body and timestamp is the authentication. Bad
// deliveries are rate limited per client address (BAD_EVENTS below).
import express, { Router, type Request } from 'express';
import type { Redis } from 'ioredis';
import type { AccountService } from '../../shared/accounts/account-service';
import type { Clock } from '../../shared/billing/month';
import type { Models } from '../../shared/db/models';
import { InvalidRequestError, UnauthenticatedError, type AppError } from '../../shared/errors';
import type { Logger } from '../../shared/logger';
import { applyEntitlement } from '../../shared/marketplace/apply-entitlement';
import {
  entitlementEventSchema,
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_S,
  TIMESTAMP_HEADER,
  verifyEntitlementSignature,
} from '../../shared/marketplace/entitlements';
import { AttemptLimiter, type AttemptRule } from '../console/auth/attempts';
import { clientAddress } from '../http/client-address';

/**
 * Bad deliveries per client: keyed by the client address (AttemptLimiter's byAddress: an IPv4 address, an IPv6
 * address by its /64, behind TRUST_PROXY the forwarded client), counted in Redis only when an event is refused
 * (a missing or wrong signature, a stale timestamp, a body that is not an event). Past 20 in 15 minutes that
 * address's further bad deliveries answer 429 instead of 401/400 and are no longer logged one by one, so a
 * misconfigured sender or a prober cannot fill the logs. The check runs after the signature's: a correctly
 * signed event is never refused or counted, so another client sharing the marketplace's address or /64 (the
 * same NAT or cloud egress) can at most turn its own and that address's bad deliveries into 429s; it cannot
 * delay or block a real event.
 */
const BAD_EVENTS: AttemptRule = {
  name: 'marketplace-bad-event',
  byAddress: true,
  maxFailures: 20,
  windowMs: 15 * 60_000,
  message: 'Too many refused marketplace events from this address. Check the signing secret, then try again later.',
};

export const MARKETPLACE_ENTITLEMENTS_PATH = '/marketplace/entitlements';

export interface MarketplaceDeps {
  secret: string;
  accounts: AccountService;
  models: Models;
  clock: Clock;
  redis: Redis;
  prefix: string;
  log: Logger;
}

export function marketplaceRoutes(d: MarketplaceDeps): Router {
  const r = Router();
  const badEvents = new AttemptLimiter(d.redis, d.prefix, 'marketplace');

  /** Counts a refused delivery against its address: throws `refusal`, or 429 once the address is past BAD_EVENTS. */
  async function refuse(req: Request, refusal: AppError, detail: Record<string, unknown>): Promise<never> {
    // Throws TooManyRequestsError (429 too_many_attempts, Retry-After) past the allowance.
    await badEvents.take(BAD_EVENTS, clientAddress(req));
    req.log.warn(detail, 'marketplace event refused');
    throw refusal;
  }

  // The raw bytes: the signature is over the body exactly as sent.
  r.post(MARKETPLACE_ENTITLEMENTS_PATH, express.raw({ type: 'application/json', limit: '16kb' }), async (req: Request, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const check = verifyEntitlementSignature(d.secret, body, req.get(TIMESTAMP_HEADER), req.get(SIGNATURE_HEADER));
    if (!check.ok) {
      return refuse(req, new UnauthenticatedError('invalid_signature', `The event is not signed by the marketplace: ${check.reason}.`), {
        reason: check.reason,
      });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return refuse(req, new InvalidRequestError('The body is not JSON.'), { reason: 'not JSON' });
    }
    const event = entitlementEventSchema.safeParse(parsed);
    if (!event.success) {
      const issues = event.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ');
      return refuse(req, new InvalidRequestError(`Not a marketplace event: ${issues}`), { reason: 'not an event', issues });
    }
    // An event cannot have happened after it was signed (beyond the clock skew allowed): one dated later would
    // hold back every real event of its subscription until that time.
    if (Date.parse(event.data.occurredAt) > Number(req.get(TIMESTAMP_HEADER)) * 1000 + SIGNATURE_TOLERANCE_S * 1000) {
      return refuse(req, new InvalidRequestError('The event occurred after it was signed.'), { reason: 'occurredAt after the signature' });
    }
    const outcome = await applyEntitlement(d, event.data);
    req.log.info({ eventId: event.data.id, type: event.data.type, ...outcome }, 'marketplace event');
    res.status(200).json(outcome);
  });
  return r;
}
