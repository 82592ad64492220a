// admin marketplace …: stands in for the cloud marketplace on a developer's machine, and lets an operator
// replay a subscription event by hand.
//   subscribe --plan P [--account ID] [--subscription ID]
//       simulates a marketplace subscription and prints its registration link (the signed token the
//       registration page accepts)
//   entitle --subscription ID --plan P [--event ID] [--at ISO-TIME] [--url BASE]
//       sends a signed entitlement.updated event (the subscription now has plan P; the plan in effect withdraws
//       a scheduled downgrade or cancellation) to POST /marketplace/entitlements of the running liveness API,
//       exactly as the marketplace would; --event replays an event id (applied once: a second delivery
//       answers already_applied); --at dates the event (default now): one older than the newest applied
//       to the subscription is answered stale
//   backfill-subscriptions
//       gives accounts without a top-level subscription id theirs (after a rolling upgrade; start-up does it once)
//   unsubscribe --subscription ID [--ended] [--event ID] [--at ISO-TIME] [--url BASE]
//       sends unsubscribe.pending (the customer cancelled: the subscription ends at the month end), or with
//       --ended unsubscribe.success (it has ended now), signed and replayable the same way
import { randomUUID } from 'node:crypto';
import { backfillSubscriptionIds } from '../../../shared/accounts/account-service';
import { isPlanId } from '../../../shared/billing/plans';
import { marketplaceSecret, signEntitlement, type EntitlementEvent } from '../../../shared/marketplace/entitlements';
import { HmacRegistrationSigner, newLocalSubscription, registrationUrl } from '../../console/links/registration-token';
import { MARKETPLACE_ENTITLEMENTS_PATH } from '../../marketplace/routes';
import { readLocalSecret, readLocalState } from '../../../shared/local-state';
import { optional, output, required, UsageError, type AdminContext, type Command, type Flags } from '../context';

const USAGE =
  'marketplace subscribe --plan P [--account ID] [--subscription ID] | entitle --subscription ID --plan P [--event ID] [--at ISO-TIME] [--url BASE] | unsubscribe --subscription ID [--ended] [--event ID] [--at ISO-TIME] [--url BASE] | backfill-subscriptions';

/** APP_SECRET, or the local one `npm start` generated under var/ (dev/start.ts). */
function appSecret(config: { APP_SECRET?: string; VAR_DIR: string }): string {
  const secret = config.APP_SECRET ?? readLocalSecret(config.VAR_DIR);
  if (!secret) throw new UsageError('APP_SECRET is not set and no local secret exists yet (run `npm start` once)');
  return secret;
}

function planFlag(flags: Flags) {
  const plan = required(flags, 'plan');
  if (!isPlanId(plan)) throw new UsageError(`unknown plan "${plan}" (free, starter, standard, professional, business, enterprise)`);
  return plan;
}

/** PUBLIC_BASE_URL, else the running `npm start`'s liveness port. */
function baseOf(ctx: AdminContext): string {
  const local = readLocalState(ctx.config.VAR_DIR);
  return ctx.config.PUBLIC_BASE_URL ?? (local ? `http://127.0.0.1:${local.livenessPort}` : `http://127.0.0.1:${ctx.config.LIVENESS_PORT}`);
}

/** Signs `event` as the marketplace would and POSTs it to the running API; prints its answer. */
async function deliver(ctx: AdminContext, flags: Flags, event: EntitlementEvent): Promise<void> {
  const secret = marketplaceSecret({ MARKETPLACE_SECRET: ctx.config.MARKETPLACE_SECRET, APP_SECRET: appSecret(ctx.config) })!;
  const body = JSON.stringify(event);
  const url = `${(optional(flags, 'url') ?? baseOf(ctx)).replace(/\/+$/, '')}${MARKETPLACE_ENTITLEMENTS_PATH}`;
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signEntitlement(secret, body) }, body });
  const answer = (await res.json().catch(() => null)) as { status?: string; effective?: string } | null;
  if (!res.ok) throw new UsageError(`${url} answered ${res.status}: ${JSON.stringify(answer)}`);
  const what = event.type === 'entitlement.updated' ? `→ ${event.plan}` : event.type;
  output(
    ctx,
    { event, answer },
    `${event.id}: ${answer?.status ?? 'no answer'} (${event.subscriptionId} ${what}${answer?.effective ? `, effective ${answer.effective}` : ''})`,
  );
}

const eventIdOf = (flags: Flags) => optional(flags, 'event') ?? `evt_admin_${randomUUID()}`;

/** --at: when the change happened (a replay gives the original event's time), else now. */
function occurredAtOf(flags: Flags): string {
  const at = optional(flags, 'at');
  if (at === undefined) return new Date().toISOString();
  const ms = Date.parse(at);
  if (!/^\d{4}-\d\d-\d\dT/.test(at) || Number.isNaN(ms)) throw new UsageError(`--at must be an ISO 8601 time, not "${at}"`);
  return new Date(ms).toISOString();
}

export const marketplace: Command = async (ctx, words, flags) => {
  if (words[0] === 'entitle') {
    return deliver(ctx, flags, {
      id: eventIdOf(flags),
      type: 'entitlement.updated',
      occurredAt: occurredAtOf(flags),
      subscriptionId: required(flags, 'subscription'),
      plan: planFlag(flags),
    });
  }
  if (words[0] === 'unsubscribe') {
    const type = flags.ended ? 'unsubscribe.success' : 'unsubscribe.pending';
    return deliver(ctx, flags, { id: eventIdOf(flags), type, occurredAt: occurredAtOf(flags), subscriptionId: required(flags, 'subscription') });
  }
  if (words[0] === 'backfill-subscriptions') {
    const copied = await backfillSubscriptionIds(ctx.models, true);
    return output(ctx, { copied }, `${copied} account(s) given their top-level subscription id`);
  }
  if (words[0] !== 'subscribe') throw new UsageError(USAGE);
  const plan = planFlag(flags);
  const subscription = newLocalSubscription(plan);
  subscription.marketplaceAccountId = optional(flags, 'account') ?? subscription.marketplaceAccountId;
  subscription.subscriptionId = optional(flags, 'subscription') ?? subscription.subscriptionId;
  const token = new HmacRegistrationSigner(appSecret(ctx.config)).sign(subscription);
  const url = registrationUrl(baseOf(ctx), token);
  output(ctx, { registrationUrl: url, ...subscription }, `Registration link (valid 7 days) for a ${plan} subscription:\n${url}`);
};
