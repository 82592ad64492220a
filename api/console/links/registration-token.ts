// Owns the marketplace registration link: what a subscription hands to the registration page.
// The signer sits behind an interface so a real marketplace adapter (e.g. a resolve-token call to the
// marketplace's API) can replace the local HMAC one without touching the pages.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { PLAN_IDS, type PlanId } from '../../../shared/billing/plans';
import { SignedToken } from './signed-token';

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

const claims = z.object({ mai: z.string(), sub: z.string(), plan: z.enum(PLAN_IDS) });

export class HmacRegistrationSigner implements RegistrationTokenSigner {
  private readonly tokens: SignedToken<typeof claims>;

  constructor(appSecret: string, now: () => number = Date.now) {
    this.tokens = new SignedToken(appSecret, 'marketplace-registration', claims, REGISTRATION_TOKEN_TTL_MS, now);
  }

  sign(s: MarketplaceSubscription, ttlMs = REGISTRATION_TOKEN_TTL_MS): string {
    return this.tokens.sign({ mai: s.marketplaceAccountId, sub: s.subscriptionId, plan: s.plan }, ttlMs);
  }

  verify(token: string): RegistrationTokenCheck {
    const read = this.tokens.read(token);
    if (!read.ok) return { ok: false, reason: read.reason };
    return { ok: true, subscription: { marketplaceAccountId: read.claims.mai, subscriptionId: read.claims.sub, plan: read.claims.plan } };
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
