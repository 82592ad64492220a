// admin account create | set | show | reset-2fa
import { isPlanId, type PlanId } from '../../../shared/billing/plans';
import { endAllSessionsOfAccount } from '../../console/auth/session';
import { onOff, optional, output, required, UsageError, type Command } from '../context';

function plan(value: string | undefined): PlanId | undefined {
  if (value === undefined) return undefined;
  if (!isPlanId(value)) throw new UsageError(`unknown plan "${value}" (free, starter, standard, professional, business, enterprise)`);
  return value;
}

function limit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError('--monthly-limit takes a positive whole number');
  return n;
}

/** Only an enterprise contract sets its own limit; other plans take the plan's, so the flag would be ignored. */
function assertLimitAllowed(planId: PlanId | undefined, newLimit: number | undefined): void {
  if (newLimit !== undefined && planId !== 'enterprise') {
    throw new UsageError(`--monthly-limit applies to the enterprise plan only (this account's plan is ${planId ?? 'unknown'})`);
  }
}

export const account: Command = async (ctx, words, flags) => {
  const [verb] = words;
  if (verb === 'create') {
    const planId = plan(required(flags, 'plan'))!;
    const monthlyLimit = limit(optional(flags, 'monthly-limit'));
    assertLimitAllowed(planId, monthlyLimit);
    const { account, primaryKey, secondaryKey } = await ctx.apiKeys.createAccountWithKeys({
      email: required(flags, 'email'),
      plan: planId,
      company: optional(flags, 'company'),
      hardCap: onOff(optional(flags, 'hard-cap'), 'hard-cap'),
      monthlyLimit,
    });
    output(
      ctx,
      { customerId: account._id, primaryKey, secondaryKey },
      `customer ${account._id}\nprimary   ${primaryKey}\nsecondary ${secondaryKey}\n(the keys are shown only now)`,
    );
    return;
  }
  if (verb === 'set') {
    const customerId = required(flags, 'customer');
    const before = await ctx.accounts.get(customerId);
    if (!before) throw new UsageError(`no customer ${customerId}`);
    const newPlan = plan(optional(flags, 'plan'));
    const cap = onOff(optional(flags, 'hard-cap'), 'hard-cap');
    const newLimit = limit(optional(flags, 'monthly-limit'));
    assertLimitAllowed(newPlan ?? before.plan, newLimit);
    const status = optional(flags, 'status');
    let planChange: { effective: string } | null = null;
    if (newPlan) planChange = await ctx.accounts.changePlan(customerId, newPlan);
    if (cap !== undefined) await ctx.accounts.setHardCap(customerId, cap);
    if (newLimit !== undefined) await ctx.accounts.setMonthlyLimit(customerId, newLimit);
    if (status !== undefined) {
      if (status !== 'active' && status !== 'suspended' && status !== 'cancelled') throw new UsageError('--status takes active, suspended or cancelled');
      await ctx.accounts.setStatus(customerId, status);
    }
    const after = (await ctx.accounts.current(customerId))!;
    const view = ctx.accounts.planView(after);
    output(
      ctx,
      { customerId, ...view, status: after.status, scheduledChange: after.scheduledChange ?? null, planChange },
      `customer ${customerId}: ${view.plan}, limit ${view.monthlyLimit}, hard cap ${view.hardCap ? 'on' : 'off'}, ${after.status}`,
    );
    return;
  }
  if (verb === 'show') {
    const customerId = required(flags, 'customer');
    const acc = await ctx.accounts.current(customerId);
    if (!acc) throw new UsageError(`no customer ${customerId}`);
    const keys = await ctx.apiKeys.keyPrefixes(customerId);
    const view = ctx.accounts.planView(acc);
    output(
      ctx,
      { customerId, email: acc.email, company: acc.company, status: acc.status, ...view, keys },
      `${acc.email} (${acc.status}) ${view.plan} limit ${view.monthlyLimit} hard cap ${view.hardCap ? 'on' : 'off'}; keys ${keys.map((k) => `${k.slot}=${k.prefix}…`).join(' ')}`,
    );
    return;
  }
  if (verb === 'reset-2fa') {
    const customerId = required(flags, 'customer');
    if (!(await ctx.accounts.get(customerId))) throw new UsageError(`no customer ${customerId}`);
    await ctx.credentials.resetTwoFactor(customerId);
    const ended = await endAllSessionsOfAccount(ctx.redis, ctx.config.QUEUE_PREFIX, customerId);
    output(
      ctx,
      { customerId, twoFactor: 'reset', sessionsEnded: ended },
      `customer ${customerId}: two-factor reset (${ended} console session(s) ended); the next sign-in sets it up again`,
    );
    return;
  }
  throw new UsageError('account create | set | show | reset-2fa');
};
