// admin marketplace subscribe --plan P [--account ID] [--subscription ID]: simulates a marketplace
// subscription and prints its registration link (the signed token the registration page accepts).
import { isPlanId } from '../../../shared/billing/plans';
import { HmacRegistrationSigner, newLocalSubscription, registrationUrl } from '../../console/registration-token';
import { readLocalSecret, readLocalState } from '../../../shared/local-state';
import { optional, output, required, UsageError, type Command } from '../context';

/** APP_SECRET, or the local one `npm start` generated under var/ (dev/start.ts). */
function appSecret(config: { APP_SECRET?: string; VAR_DIR: string }): string {
  const secret = config.APP_SECRET ?? readLocalSecret(config.VAR_DIR);
  if (!secret) throw new UsageError('APP_SECRET is not set and no local secret exists yet (run `npm start` once)');
  return secret;
}

export const marketplace: Command = async (ctx, words, flags) => {
  if (words[0] !== 'subscribe') throw new UsageError('marketplace subscribe --plan P [--account ID] [--subscription ID]');
  const plan = required(flags, 'plan');
  if (!isPlanId(plan)) throw new UsageError(`unknown plan "${plan}" (free, starter, standard, professional, business, enterprise)`);
  const subscription = newLocalSubscription(plan);
  subscription.marketplaceAccountId = optional(flags, 'account') ?? subscription.marketplaceAccountId;
  subscription.subscriptionId = optional(flags, 'subscription') ?? subscription.subscriptionId;
  const local = readLocalState(ctx.config.VAR_DIR);
  const base = ctx.config.PUBLIC_BASE_URL ?? (local ? `http://127.0.0.1:${local.livenessPort}` : `http://127.0.0.1:${ctx.config.LIVENESS_PORT}`);
  const token = new HmacRegistrationSigner(appSecret(ctx.config)).sign(subscription);
  const url = registrationUrl(base, token);
  output(ctx, { registrationUrl: url, ...subscription }, `Registration link (valid 7 days) for a ${plan} subscription:\n${url}`);
};
