// admin retention prune --keep-months N [--dry-run]: deletes what has outlived its use.
//   usage events and metering records of months before the last N (N >= 13: a year of invoices and disputes,
//   plus the month in progress), only once every metering record of those months was reported;
//   audit entries older than N months. Accounts and keys are never pruned here.
import { AuditLog } from '../../../shared/accounts/audit-log';
import { monthOf, systemClock } from '../../../shared/billing/month';
import { optional, output, UsageError, type Command } from '../context';

/** Fewer months than this would drop data a billing dispute or the yearly invoice still needs. */
const MIN_KEEP_MONTHS = 13;

/** The first month kept: `keep` months back from `now`'s month, the current one included. */
export function firstKeptMonth(now: Date, keep: number): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (keep - 1), 1));
  return monthOf(d);
}

export const retention: Command = async (ctx, words, flags) => {
  if (words[0] !== 'prune') throw new UsageError('retention prune --keep-months N [--dry-run]');
  const keep = Number(optional(flags, 'keep-months') ?? '');
  if (!Number.isInteger(keep) || keep < MIN_KEEP_MONTHS) throw new UsageError(`--keep-months takes a whole number of at least ${MIN_KEEP_MONTHS}`);
  const dryRun = flags['dry-run'] === true;
  const cutoffMonth = firstKeptMonth(new Date(), keep);
  const cutoffAt = new Date(`${cutoffMonth}-01T00:00:00.000Z`);
  const cutoffHour = `${cutoffMonth}-01T00`;
  const unreported = await ctx.models.MeteringRecord.countDocuments({ hour: { $lt: cutoffHour }, reportedAt: null });
  if (unreported > 0) throw new UsageError(`${unreported} metering record(s) before ${cutoffMonth} are not reported yet; report them first`);
  const filters = {
    usageEvents: { month: { $lt: cutoffMonth } },
    meteringRecords: { hour: { $lt: cutoffHour } },
  };
  const audit = new AuditLog(ctx.models, systemClock);
  const counts = dryRun
    ? {
        usageEvents: await ctx.models.UsageEvent.countDocuments(filters.usageEvents),
        meteringRecords: await ctx.models.MeteringRecord.countDocuments(filters.meteringRecords),
        audit: await audit.pruneBefore(cutoffAt, true),
      }
    : {
        usageEvents: (await ctx.models.UsageEvent.deleteMany(filters.usageEvents)).deletedCount,
        meteringRecords: (await ctx.models.MeteringRecord.deleteMany(filters.meteringRecords)).deletedCount,
        audit: await audit.pruneBefore(cutoffAt, false),
      };
  output(
    ctx,
    { keptFrom: cutoffMonth, dryRun, ...counts },
    `${dryRun ? 'would delete' : 'deleted'} before ${cutoffMonth}: ${counts.usageEvents} usage events, ${counts.meteringRecords} metering records, ${counts.audit} audit entries`,
  );
};
