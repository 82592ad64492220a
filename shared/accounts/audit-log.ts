// Owns the audit log: one insert-only entry per customer action worth answering for later (what, when, with
// what detail), and the reads of it the console shows (the activity list, the count of sign-ins, the last entry
// of one action), and the pruning of old entries the operator's retention command asks for
// (api/admin/commands/retention.ts).
import { createHash } from 'node:crypto';
import { Types } from 'mongoose';
import type { Models } from '../db/models';
import { isDuplicateKeyError } from '../db/models';
import type { Clock } from '../billing/month';

export interface AuditEntry {
  action: string;
  detail: Record<string, unknown> | null;
  at: Date;
}

export class AuditLog {
  constructor(
    private readonly models: Models,
    private readonly clock: Clock,
  ) {}

  async record(customerId: string, action: string, detail: Record<string, unknown> | null): Promise<void> {
    await this.models.Audit.create({ customerId, action, detail, at: this.clock() });
  }

  /**
   * The entry of one change that may be recorded again (a marketplace event completed on its retry): its `_id`
   * is derived from `key`, so a second record of it is refused by the store and ignored.
   */
  async recordOnce(customerId: string, key: string, action: string, detail: Record<string, unknown> | null): Promise<void> {
    const _id = new Types.ObjectId(createHash('sha256').update(`${customerId}\n${key}`).digest().subarray(0, 12));
    try {
      await this.models.Audit.create({ _id, customerId, action, detail, at: this.clock() });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  /** The customer's newest entries, newest first. */
  async recent(customerId: string, limit: number): Promise<AuditEntry[]> {
    const entries = await this.models.Audit.find({ customerId }).sort({ at: -1 }).limit(limit).lean();
    return entries.map(entryOf);
  }

  /** The newest entry of one action, or null. */
  async latest(customerId: string, action: string): Promise<AuditEntry | null> {
    const entry = await this.models.Audit.findOne({ customerId, action }).sort({ at: -1 }).lean();
    return entry ? entryOf(entry) : null;
  }

  /** Entries older than `before`, all customers: counted (`dryRun`) or deleted (the operator's retention command). */
  async pruneBefore(before: Date, dryRun: boolean): Promise<number> {
    const older = { at: { $lt: before } };
    return dryRun ? await this.models.Audit.countDocuments(older) : (await this.models.Audit.deleteMany(older)).deletedCount;
  }

  /** How many entries of one action the customer has. */
  async count(customerId: string, action: string): Promise<number> {
    return await this.models.Audit.countDocuments({ customerId, action });
  }
}

function entryOf(e: { action: string; detail?: unknown; at: Date }): AuditEntry {
  return { action: e.action, detail: (e.detail as Record<string, unknown> | null | undefined) ?? null, at: e.at };
}
