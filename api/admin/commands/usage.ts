// admin usage show --customer ID: the same numbers as GET /v1/usage.
import { output, required, UsageError, type Command } from '../context';

export const usage: Command = async (ctx, words, flags) => {
  if (words[0] !== 'show') throw new UsageError('usage show --customer ID');
  const customerId = required(flags, 'customer');
  const account = await ctx.accounts.current(customerId);
  if (!account) throw new UsageError(`no customer ${customerId}`);
  const plan = ctx.accounts.planView(account);
  const u = await ctx.ledger.snapshot(customerId, plan);
  const data = {
    year_month: u.month,
    total_calls: u.used,
    monthly_limit: u.monthlyLimit,
    remaining_calls: u.remaining,
    over_limit_calls: u.overage,
    plan: plan.plan,
    hard_cap_enabled: plan.hardCap,
  };
  output(
    ctx,
    data,
    `${u.month}: ${u.used} calls, ${u.remaining} remaining of ${u.monthlyLimit}, ${u.overage} overage (${plan.plan}, hard cap ${plan.hardCap ? 'on' : 'off'})`,
  );
};
