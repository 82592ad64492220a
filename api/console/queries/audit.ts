// Owns the console's reads of the audit log (the Audit collection; AccountService.audit writes it): the
// Activity list, how many times an account has signed in (the Overview's "Welcome" / "Welcome back"), and
// when it was activated (Security's "Set at activation").
import type { Models } from '../../../shared/db/models';

export interface AuditEntry {
  action: string;
  detail: Record<string, unknown> | null;
  at: Date;
}

/** The account's newest audit entries, newest first. */
export async function recentAuditEntries(models: Models, customerId: string, limit: number): Promise<AuditEntry[]> {
  const entries = await models.Audit.find({ customerId }).sort({ at: -1 }).limit(limit).lean();
  return entries.map((e) => ({ action: e.action, detail: (e.detail as Record<string, unknown> | null) ?? null, at: e.at }));
}

/** How many console sign-ins the account has made (this one included). */
export function signInCount(models: Models, customerId: string): Promise<number> {
  return models.Audit.countDocuments({ customerId, action: 'console.sign_in' });
}

/** When the account was activated (its first password chosen), or null when the log has no record of it. */
export async function activatedAt(models: Models, customerId: string): Promise<Date | null> {
  const activated = await models.Audit.findOne({ customerId, action: 'console.activated' }).sort({ at: -1 }).lean();
  return activated?.at ?? null;
}
