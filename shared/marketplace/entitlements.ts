// Owns what the product learns from the marketplace: signed subscription events, their signature and replay
// checks, and applying one to the account. The marketplace is the source of truth for the subscription: a
// change, a cancellation or a withdrawal chosen in the console stays pending until an event confirms it.
//
// The event types follow how a marketplace SaaS product learns of its subscriptions (AWS Marketplace's
// subscription notifications `subscribe-success`, `unsubscribe-pending`, `unsubscribe-success` and its
// `entitlement-updated`): `entitlement.updated` (the plan the subscription is entitled to; the plan in effect
// while a downgrade or cancellation is scheduled withdraws that), `unsubscribe.pending` (the customer
// cancelled: the subscription ends at the month end) and `unsubscribe.success` (the subscription has ended).
//
// Signature: `X-Marketplace-Timestamp` (Unix seconds) and `X-Marketplace-Signature: v1=<hex HMAC-SHA256 of
// "<timestamp>.<raw body>">` under the shared secret. An event older or newer than SIGNATURE_TOLERANCE_S is
// refused (a captured request cannot be replayed later). Each event carries `occurredAt`, signed with the body:
// apply-entitlement.ts applies an event id once and an event older than the newest applied one never.
import crypto from 'node:crypto';
import { z } from 'zod';
import { PLAN_IDS, type PlanId } from '../billing/plans';

export const SIGNATURE_TOLERANCE_S = 300;
export const TIMESTAMP_HEADER = 'x-marketplace-timestamp';
export const SIGNATURE_HEADER = 'x-marketplace-signature';

const eventId = z.string().regex(/^[A-Za-z0-9_.:-]{8,128}$/);
const subscriptionId = z.string().min(1).max(128);
/**
 * When the marketplace made the change (ISO 8601 in UTC): signed with the body, it orders the events
 * of one subscription (apply-entitlement.ts). Required: an event without it could not be placed.
 */
const occurredAt = z.iso.datetime();

export const entitlementEventSchema = z.discriminatedUnion('type', [
  z.strictObject({
    /** The marketplace's event id: each is applied once. */
    id: eventId,
    type: z.literal('entitlement.updated'),
    occurredAt,
    subscriptionId,
    /** The plan the subscription is entitled to from now on (an upgrade applies at once, a downgrade at the month end). */
    plan: z.enum(PLAN_IDS),
  }),
  /** The customer cancelled on the marketplace: the subscription ends at 00:00 UTC on the 1st of next month. */
  z.strictObject({ id: eventId, type: z.literal('unsubscribe.pending'), occurredAt, subscriptionId }),
  /** The subscription has ended: the account is cancelled now. */
  z.strictObject({ id: eventId, type: z.literal('unsubscribe.success'), occurredAt, subscriptionId }),
]);
export type EntitlementEvent = z.infer<typeof entitlementEventSchema>;

/**
 * The shared secret: MARKETPLACE_SECRET (required in production, see shared/config.ts); outside production a
 * key derived from APP_SECRET, so `npm start` and `npm run admin -- marketplace entitle` agree without setup.
 */
export function marketplaceSecret(cfg: { MARKETPLACE_SECRET?: string; APP_SECRET?: string }): string | null {
  if (cfg.MARKETPLACE_SECRET) return cfg.MARKETPLACE_SECRET;
  if (!cfg.APP_SECRET) return null;
  return Buffer.from(crypto.hkdfSync('sha256', Buffer.from(cfg.APP_SECRET), Buffer.from('lc-marketplace'), Buffer.from('entitlements'), 32)).toString(
    'base64url',
  );
}

function mac(secret: string, timestamp: string, body: string | Buffer): Buffer {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
}

/** The two headers a marketplace (or the admin CLI) sends with `body`. */
export function signEntitlement(secret: string, body: string, nowMs = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: `v1=${mac(secret, timestamp, body).toString('hex')}` };
}

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** Checks the signature and the timestamp window; constant-time comparison. */
export function verifyEntitlementSignature(
  secret: string,
  body: Buffer,
  timestamp: string | undefined,
  signature: string | undefined,
  nowMs = Date.now(),
): SignatureCheck {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || !signature) return { ok: false, reason: 'missing or malformed signature headers' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_S) return { ok: false, reason: 'timestamp outside the allowed window' };
  const presented = /^v1=([0-9a-f]{64})$/.exec(signature);
  if (!presented) return { ok: false, reason: 'missing or malformed signature headers' };
  const expected = mac(secret, timestamp, body);
  if (!crypto.timingSafeEqual(Buffer.from(presented[1]!, 'hex'), expected)) return { ok: false, reason: 'signature does not match' };
  return { ok: true };
}

export type EntitlementOutcome =
  | { status: 'applied'; customerId: string; plan: PlanId; effective: string }
  | { status: 'applied'; customerId: string; subscription: 'ending' | 'ended'; effective: string }
  | { status: 'unchanged'; customerId: string; plan?: PlanId }
  | { status: 'already_applied'; customerId: string | null }
  | { status: 'stale'; customerId: string };
