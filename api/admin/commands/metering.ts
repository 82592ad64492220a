// admin metering …: metering records for a marketplace metering job: hourly overage records, and the plan-fee
// records every plan change writes (dimension plan_fee_cents, see AccountService.changePlan).
//   rollup [--hour H | --since H]   (re)compute records for one hour, or every hour from H to the last full hour
//   pending                          records of either dimension not yet reported (reportedAt null), oldest first
//   mark-reported --hour H --customer ID | --record ID   what the reporting job calls after the marketplace accepted a record
// Rollups are idempotent (recomputed from events, written with $set), so a schedule can re-run the last few hours.
import { hourOf } from '../../../shared/billing/month';
import { rollUpOverage } from '../../../shared/billing/usage-events';
import { optional, output, required, UsageError, type Command } from '../context';

const HOUR = /^\d{4}-\d{2}-\d{2}T\d{2}$/;
const HOUR_MS = 3600_000;
/** A backfill longer than this is almost certainly a typo in --since. */
const MAX_BACKFILL_HOURS = 24 * 62;

function parseHour(value: string, flag: string): Date {
  if (!HOUR.test(value)) throw new UsageError(`--${flag} takes YYYY-MM-DDTHH (UTC)`);
  return new Date(`${value}:00:00.000Z`);
}

/** Every UTC hour from `since` up to and including the last full hour. */
export function hoursSince(since: Date, now: Date): string[] {
  const last = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - HOUR_MS;
  const hours: string[] = [];
  for (let t = since.getTime(); t <= last; t += HOUR_MS) hours.push(hourOf(new Date(t)));
  if (hours.length > MAX_BACKFILL_HOURS) throw new UsageError(`--since reaches back ${hours.length} hours; at most ${MAX_BACKFILL_HOURS}`);
  return hours;
}

export const metering: Command = async (ctx, words, flags) => {
  const [verb] = words;
  if (verb === 'rollup') {
    const since = optional(flags, 'since');
    const hours = since ? hoursSince(parseHour(since, 'since'), new Date()) : [optional(flags, 'hour') ?? hourOf(new Date(Date.now() - HOUR_MS))];
    const perHour: { hour: string; customers: number }[] = [];
    for (const hour of hours) {
      parseHour(hour, 'hour');
      perHour.push({ hour, customers: await rollUpOverage(ctx.models, hour) });
    }
    if (hours.length === 1) {
      const only = perHour[0]!;
      const records = await ctx.models.MeteringRecord.find({ hour: only.hour }).lean();
      output(ctx, { hour: only.hour, customers: only.customers, records }, `${only.hour}: ${only.customers} customer(s) with overage`);
      return;
    }
    const withOverage = perHour.filter((h) => h.customers > 0);
    output(ctx, { hours: perHour.length, withOverage }, `${perHour.length} hour(s) rolled up; ${withOverage.length} with overage`);
    return;
  }
  if (verb === 'pending') {
    const records = await ctx.models.MeteringRecord.find({ reportedAt: null }).sort({ hour: 1 }).lean();
    output(ctx, { records }, records.map((r) => `${r.hour} ${r.customerId} ${r.dimension} ${r.quantity}`).join('\n') || 'nothing pending');
    return;
  }
  if (verb === 'mark-reported') {
    // An overage record is named by its hour and customer; a plan-fee record by its id (see `pending --json`).
    const record = optional(flags, 'record');
    let id: string;
    if (record) id = record;
    else {
      const hour = required(flags, 'hour');
      parseHour(hour, 'hour');
      id = `${required(flags, 'customer')}:${hour}`;
    }
    const res = await ctx.models.MeteringRecord.updateOne({ _id: id, reportedAt: null }, { $set: { reportedAt: new Date() } });
    if (res.matchedCount === 0 && !(await ctx.models.MeteringRecord.exists({ _id: id }))) throw new UsageError(`no metering record ${id}`);
    const [customerId, hour] = record ? [undefined, undefined] : id.split(/:(?=[^:]+$)/);
    output(ctx, { id, hour, customerId, marked: res.modifiedCount === 1 }, res.modifiedCount === 1 ? 'marked as reported' : 'already reported');
    return;
  }
  throw new UsageError('metering rollup [--hour YYYY-MM-DDTHH | --since YYYY-MM-DDTHH] | pending | mark-reported (--hour H --customer ID | --record ID)');
};
