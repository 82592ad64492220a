// Owns the read-back of writes that must not be reported done unless they are kept: a `$set` on one document
// by `_id`, read back and written again while the store shows another value. FerretDB 1.24 on SQLite can lose
// an update to a document that another update rewrites at the same time (docs/reliability.md); a marketplace
// event or a credential change that was answered "applied" and then lost is the worst case, so those paths
// answer only after the document shows their values. What the read-back cannot see: a concurrent writer that
// read the document before ours and writes after our read-back; the store's own per-document atomicity is the
// cure for that, this narrows what remains and turns what it sees into a retry, never into a false success.
import { isDeepStrictEqual } from 'node:util';
import type { Model } from 'mongoose';
import { ServiceUnavailableError } from '../errors';

/** Writes of one update before giving up with a 503 (the caller, or the marketplace, tries again later). */
const ATTEMPTS = 5;
const BACKOFF_MS = 5;

export type VerifiedUpdate = 'kept' | 'unmatched';

/** The value at a dotted path of a lean document. */
function valueAt(doc: unknown, path: string): unknown {
  let v: unknown = doc;
  for (const part of path.split('.')) v = v === null || v === undefined ? undefined : (v as Record<string, unknown>)[part];
  return v;
}

/** Compares as the store returns values: Dates by instant, absent as null, plain objects and arrays deeply. */
function normalised(v: unknown): unknown {
  if (v === undefined) return null;
  if (v instanceof Date) return { $date: v.getTime() };
  if (Array.isArray(v)) return v.map(normalised);
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, normalised(x)]));
  }
  return v;
}

/** True when the document shows every value of `set`. */
function showsValues(doc: unknown, set: Record<string, unknown>): boolean {
  return Object.entries(set).every(([path, value]) => isDeepStrictEqual(normalised(valueAt(doc, path)), normalised(value)));
}

/**
 * `updateOne(filter, {$set: set})` on the document `filter._id`, then reads it back: 'kept' once it shows every
 * value of `set`; written again (with the same filter) while it does not; 'unmatched' when the filter matches
 * nothing (at first, or on a retry: another writer's change came first, the caller decides what that means).
 * ServiceUnavailableError after ATTEMPTS writes that were not kept.
 */
export async function updateVerified<T>(
  model: Model<T>,
  filter: { _id: string } & Record<string, unknown>,
  set: Record<string, unknown>,
): Promise<VerifiedUpdate> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, BACKOFF_MS * 2 ** attempt));
    const res = await model.updateOne(filter, { $set: set } as never);
    if (res.matchedCount === 0) {
      // A write of ours that was kept after all (the earlier read-back raced it) matches no more when the
      // filter guards on the old value: the document decides.
      if (attempt > 0 && showsValues(await model.findById(filter._id).lean(), set)) return 'kept';
      return 'unmatched';
    }
    if (showsValues(await model.findById(filter._id).lean(), set)) return 'kept';
  }
  throw new ServiceUnavailableError('The write was not kept by the document store; try again shortly.', 2, 'store_write_lost');
}
