// admin marketplace subscribe --plan P [--account ID] [--subscription ID]: simulates a marketplace
// subscription and prints its registration link (the signed token the registration page accepts).
import fs from 'node:fs';
import path from 'node:path';
import { isPlanId } from '../../../shared/billing/plans';
import { HmacRegistrationSigner, newLocalSubscription, registrationUrl } from '../../../api/console/registration-token';
import { readLocalState } from '../../engines/local-state';
import { optional, output, required, UsageError, type Command } from '../context';

/** APP_SECRET, or the local one `npm start` generated under var/ (scripts/start.ts). */
function appSecret(config: { APP_SECRET?: string; VAR_DIR: string }): string {
  if (config.APP_SECRET) return config.APP_SECRET;
  try {
    return fs.readFileSync(path.join(config.VAR_DIR, 'app-secret'), 'utf8').trim();
  } catch {
    throw new UsageError('APP_SECRET is not set and no local secret exists yet (run `npm start` once)');
  }
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
