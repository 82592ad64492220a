// admin usage show --customer ID: the same numbers as GET /v1/usage.
// admin usage backfill: once after upgrading to usage counters, adds the usage events written before them to the
//   counter documents (shared/billing/usage-counters.ts). Idempotent and resumable: run it again after a stop.
import { UsageCounters } from '../../../shared/billing/usage-counters';
import { output, required, UsageError, type Command } from '../context';

export const usage: Command = async (ctx, words, flags) => {
  if (words[0] === 'backfill') {
    const counters = new UsageCounters(ctx.redis, ctx.config.QUEUE_PREFIX, ctx.models);
    let shown = 0;
    const r = await counters.backfill((done, of) => {
      if (!ctx.json && (done - shown >= 1000 || done === of)) {
        shown = done;
        process.stderr.write(`  ${done}/${of} counter documents\n`);
      }
    });
    output(
      ctx,
      r,
      `${r.events} event(s) written before counters, in ${r.documents} month document(s): ${r.written} completed now, ${r.alreadyDone} by an earlier run`,
    );
    return;
  }
  if (words[0] !== 'show') throw new UsageError('usage show --customer ID | usage backfill');
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
