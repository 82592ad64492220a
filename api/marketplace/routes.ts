// Owns the marketplace's entry point on the liveness front-end: POST /marketplace/entitlements, where the
// marketplace delivers signed entitlement events (shared/marketplace/entitlements.ts). Server to server:
// no session or CSRF; the HMAC signature over the raw body and timestamp is the authentication.
import express, { Router, type Request } from 'express';
import type { Redis } from 'ioredis';
import type { AccountService } from '../../shared/accounts/account-service';
import { InvalidRequestError, UnauthenticatedError } from '../../shared/errors';
import type { Logger } from '../../shared/logger';
import {
  applyEntitlement,
  entitlementEventSchema,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifyEntitlementSignature,
} from '../../shared/marketplace/entitlements';

export const MARKETPLACE_ENTITLEMENTS_PATH = '/marketplace/entitlements';

export interface MarketplaceDeps {
  secret: string;
  accounts: AccountService;
  redis: Redis;
  prefix: string;
  log: Logger;
}

export function marketplaceRoutes(d: MarketplaceDeps): Router {
  const r = Router();
  // The raw bytes: the signature is over the body exactly as sent.
  r.post(MARKETPLACE_ENTITLEMENTS_PATH, express.raw({ type: 'application/json', limit: '16kb' }), async (req: Request, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const check = verifyEntitlementSignature(d.secret, body, req.get(TIMESTAMP_HEADER), req.get(SIGNATURE_HEADER));
    if (!check.ok) {
      req.log.warn({ reason: check.reason }, 'marketplace event refused');
      throw new UnauthenticatedError('invalid_signature', `The event is not signed by the marketplace: ${check.reason}.`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw new InvalidRequestError('The body is not JSON.');
    }
    const event = entitlementEventSchema.safeParse(parsed);
    if (!event.success)
      throw new InvalidRequestError(`Not an entitlement event: ${event.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
    const outcome = await applyEntitlement(d.accounts, d.redis, d.prefix, event.data);
    req.log.info({ eventId: event.data.id, ...outcome }, 'marketplace entitlement event');
    res.status(200).json(outcome);
  });
  return r;
}
