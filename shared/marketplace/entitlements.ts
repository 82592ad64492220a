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
// refused (a captured request cannot be replayed later), and an event id is applied once (a replay within
// the tolerance is answered "already applied" and changes nothing).
import crypto from 'node:crypto';
import { z } from 'zod';
import type { Redis } from 'ioredis';
import type { AccountService } from '../accounts/account-service';
import { PLAN_IDS, type PlanId } from '../billing/plans';
import { InvalidRequestError, NotFoundError } from '../errors';

const SIGNATURE_TOLERANCE_S = 300;
export const TIMESTAMP_HEADER = 'x-marketplace-timestamp';
export const SIGNATURE_HEADER = 'x-marketplace-signature';

const eventId = z.string().regex(/^[A-Za-z0-9_.:-]{8,128}$/);
const subscriptionId = z.string().min(1).max(128);

export const entitlementEventSchema = z.discriminatedUnion('type', [
  z.strictObject({
    /** The marketplace's event id: each is applied once. */
    id: eventId,
    type: z.literal('entitlement.updated'),
    subscriptionId,
    /** The plan the subscription is entitled to from now on (an upgrade applies at once, a downgrade at the month end). */
    plan: z.enum(PLAN_IDS),
  }),
  /** The customer cancelled on the marketplace: the subscription ends at 00:00 UTC on the 1st of next month. */
  z.strictObject({ id: eventId, type: z.literal('unsubscribe.pending'), subscriptionId }),
  /** The subscription has ended: the account is cancelled now. */
  z.strictObject({ id: eventId, type: z.literal('unsubscribe.success'), subscriptionId }),
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
  | { status: 'already_applied'; customerId: string | null };

/**
 * Applies one event. The event id is claimed with a Redis SET NX first (kept a day: far longer than a signature
 * stays acceptable), so concurrent deliveries apply it once; AccountService audits each change with its
 * effective date (and a plan change writes its fee record).
 */
export async function applyEntitlement(accounts: AccountService, redis: Redis, prefix: string, event: EntitlementEvent): Promise<EntitlementOutcome> {
  const account = await accounts.getBySubscription(event.subscriptionId);
  if (!account) throw new NotFoundError(`no account has subscription ${event.subscriptionId}`);
  const claim = await redis.set(`${prefix}:marketplace:event:${event.id}`, account._id, 'EX', 86_400, 'NX');
  if (claim !== 'OK') return { status: 'already_applied', customerId: account._id };
  try {
    return await applyClaimed(accounts, account._id, event);
  } catch (err) {
    // Not applied: a redelivery must be able to try again.
    await redis.del(`${prefix}:marketplace:event:${event.id}`).catch(() => undefined);
    throw err;
  }
}

async function applyClaimed(accounts: AccountService, customerId: string, event: EntitlementEvent): Promise<EntitlementOutcome> {
  const source = { by: 'marketplace', changeId: event.id } as const;
  const current = await accounts.current(customerId);
  if (!current) throw new NotFoundError(`no account has subscription ${event.subscriptionId}`);
  if (event.type === 'unsubscribe.success') {
    const ended = await accounts.endSubscription(customerId, source);
    return ended ? { status: 'applied', customerId, subscription: 'ended', effective: 'now' } : { status: 'unchanged', customerId };
  }
  if (current.status === 'cancelled') throw new InvalidRequestError(`subscription ${event.subscriptionId} has ended`);
  if (event.type === 'unsubscribe.pending') {
    if (current.scheduledChange?.cancel) return { status: 'unchanged', customerId };
    const { effective } = await accounts.scheduleCancellation(customerId, source);
    return { status: 'applied', customerId, subscription: 'ending', effective };
  }
  if (current.plan === event.plan) {
    // The subscription continues on the plan in effect: a scheduled downgrade or cancellation is withdrawn.
    if (current.scheduledChange) {
      await accounts.withdrawScheduledChange(customerId, source);
      return { status: 'applied', customerId, plan: event.plan, effective: 'now' };
    }
    // Nothing to change (a confirmation of the plan in effect): a pending request it answers is settled.
    if (current.pendingPlanChange && current.pendingPlanChange.kind !== 'cancel') await accounts.withdrawPlanChangeRequest(customerId).catch(() => undefined);
    return { status: 'unchanged', customerId, plan: event.plan };
  }
  const { effective } = await accounts.changePlan(customerId, event.plan, source);
  return { status: 'applied', customerId, plan: event.plan, effective };
}
