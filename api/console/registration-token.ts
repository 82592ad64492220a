// Owns the marketplace registration link: what a subscription hands to the registration page.
// The signer sits behind an interface so a real marketplace adapter (e.g. a resolve-token call to the
// marketplace's API) can replace the local HMAC one without touching the pages.
import { randomUUID } from 'node:crypto';
import { isPlanId, type PlanId } from '../../shared/billing/plans';
import { deriveKey, signPayload, verifyPayload } from './secrets';

export interface MarketplaceSubscription {
  marketplaceAccountId: string;
  subscriptionId: string;
  plan: PlanId;
}

export type RegistrationTokenCheck = { ok: true; subscription: MarketplaceSubscription } | { ok: false; reason: 'invalid' | 'expired' };

export interface RegistrationTokenSigner {
  sign(subscription: MarketplaceSubscription, ttlMs?: number): string;
  verify(token: string): RegistrationTokenCheck;
}

/** A registration link stays usable for a week: long enough to forward to the person in charge. */
export const REGISTRATION_TOKEN_TTL_MS = 7 * 24 * 3600 * 1000;

interface Payload {
  v: 1;
  mai: string;
  sub: string;
  plan: string;
  exp: number;
}

export class HmacRegistrationSigner implements RegistrationTokenSigner {
  private readonly key: Buffer;

  constructor(
    appSecret: string,
    private readonly now: () => number = Date.now,
  ) {
    this.key = deriveKey(appSecret, 'marketplace-registration');
  }

  sign(s: MarketplaceSubscription, ttlMs = REGISTRATION_TOKEN_TTL_MS): string {
    const payload: Payload = { v: 1, mai: s.marketplaceAccountId, sub: s.subscriptionId, plan: s.plan, exp: this.now() + ttlMs };
    return signPayload(this.key, payload);
  }

  verify(token: string): RegistrationTokenCheck {
    const p = verifyPayload<Payload>(this.key, token);
    if (!p || p.v !== 1 || typeof p.mai !== 'string' || typeof p.sub !== 'string' || !isPlanId(String(p.plan))) {
      return { ok: false, reason: 'invalid' };
    }
    if (typeof p.exp !== 'number' || p.exp < this.now()) return { ok: false, reason: 'expired' };
    return { ok: true, subscription: { marketplaceAccountId: p.mai, subscriptionId: p.sub, plan: p.plan as PlanId } };
  }
}

/** What an operator's `admin marketplace subscribe` simulates: a new subscription with fresh IDs. */
export function newLocalSubscription(plan: PlanId): MarketplaceSubscription {
  return {
    marketplaceAccountId: `mkt-acct-${randomUUID().slice(0, 12)}`,
    subscriptionId: `mkt-sub-${randomUUID()}`,
    plan,
  };
}

export function registrationUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/console/register?token=${encodeURIComponent(token)}`;
}
