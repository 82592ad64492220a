// admin metering rollup --hour YYYY-MM-DDTHH: hourly overage records for the marketplace (idempotent).
import { hourOf } from '../../../shared/billing/month';
import { rollUpOverage } from '../../../shared/billing/usage-events';
import { optional, output, UsageError, type Command } from '../context';

export const metering: Command = async (ctx, words, flags) => {
  if (words[0] !== 'rollup') throw new UsageError('metering rollup [--hour YYYY-MM-DDTHH] (default: the previous hour)');
  const hour = optional(flags, 'hour') ?? hourOf(new Date(Date.now() - 3600_000));
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}$/.test(hour)) throw new UsageError('--hour takes YYYY-MM-DDTHH (UTC)');
  const customers = await rollUpOverage(ctx.models, hour);
  const records = await ctx.models.MeteringRecord.find({ hour }).lean();
  output(ctx, { hour, customers, records }, `${hour}: ${customers} customer(s) with overage`);
};
