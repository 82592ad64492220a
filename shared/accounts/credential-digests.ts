// Owns the credential digest index: one document per live API key or emotion token, keyed by the SHA-256 digest
// of the credential, so authentication reads by `_id` only (FerretDB 1.x answers any other filter with a full
// scan). The index only points: a look-up accepts a credential when the key or token it points to still carries
// that digest, so a stale entry (left by a crash between writes) admits nothing. Writers order their writes so
// that a crash at any point neither admits a replaced credential nor locks out a valid one:
// add the new digest, then change the key or token, then remove the old digest.
import type { CredentialDigestDoc, Models } from '../db/models';
import { isDuplicateKeyError } from '../db/models';

export type CredentialKind = 'api_key' | 'emotion_token';
export type CredentialDigest = CredentialDigestDoc & { _id: string };

/** Marks that every credential written before this index existed has its digest (see backfillCredentialDigests). */
const BACKFILL_MARK = 'backfill:v1';

export class CredentialDigests {
  constructor(private readonly models: Models) {}

  /** Adds a digest; adding the same digest for the same credential again is a no-op (retries, the backfill). */
  async add(digest: string, kind: CredentialKind, ownerId: string, customerId: string | null): Promise<void> {
    try {
      await this.models.CredentialDigest.create({ _id: digest, kind, ownerId, customerId });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  /** Points an added digest at the credential that really holds it (an upsert found another writer's key). */
  async repoint(digest: string, ownerId: string): Promise<void> {
    await this.models.CredentialDigest.updateOne({ _id: digest }, { $set: { ownerId } });
  }

  async remove(digest: string): Promise<void> {
    await this.models.CredentialDigest.deleteOne({ _id: digest });
  }

  /** The id of the credential of this kind the digest points to, or null: one read by `_id`. */
  async ownerOf(digest: string, kind: CredentialKind, maxTimeMS: number): Promise<string | null> {
    const doc = await this.models.CredentialDigest.findById(digest, { kind: 1, ownerId: 1 }).maxTimeMS(maxTimeMS).lean();
    return doc?.kind === kind ? doc.ownerId : null;
  }

  /** Removes the digests of the given accounts' credentials (account deletion). */
  async removeCustomers(customerIds: string[]): Promise<void> {
    if (customerIds.length > 0) await this.models.CredentialDigest.deleteMany({ customerId: { $in: customerIds } });
  }
}

/**
 * Once per store: adds the digest of every API key and unrevoked emotion token written before the index existed,
 * then sets a mark so later start-ups cost one `_id` read. Idempotent (duplicates are skipped, the mark is set
 * last), so concurrent start-ups and a run stopped half-way are harmless. A key regenerated meanwhile may leave a
 * digest of its old hash behind: it points to a key that no longer carries it, so it admits nothing. `force`
 * runs it past the mark (the operator's `key backfill-digests`, after a rolling upgrade: instances of the
 * earlier version may have written keys after the first new one set the mark).
 */
export async function backfillCredentialDigests(models: Models, force = false): Promise<{ added: number; skipped: boolean }> {
  if (!force && (await models.CredentialDigest.exists({ _id: BACKFILL_MARK }))) return { added: 0, skipped: true };
  const keys = await models.ApiKey.find({}, { hash: 1, customerId: 1 }).lean();
  const tokens = await models.EmotionToken.find({ revokedAt: null }, { hash: 1, customerId: 1 }).lean();
  const docs = [
    ...keys.map((k) => ({ _id: k.hash, kind: 'api_key', ownerId: k._id, customerId: k.customerId })),
    ...tokens.map((t) => ({ _id: t.hash, kind: 'emotion_token', ownerId: t._id, customerId: t.customerId ?? null })),
  ];
  let added = 0;
  // Batches keep each insert small; unordered so a digest already there does not stop the rest.
  for (let i = 0; i < docs.length; i += 1000) {
    const batch = docs.slice(i, i + 1000);
    try {
      await models.CredentialDigest.insertMany(batch, { ordered: false });
      added += batch.length;
    } catch (err) {
      // Mongoose copies each driver WriteError into a plain object: its code is then under `err`.
      type WriteError = { code?: number; err?: { code?: number } };
      const found = (err as { writeErrors?: WriteError | WriteError[] }).writeErrors;
      const errors = found === undefined ? [] : [found].flat();
      if (errors.length === 0 || !errors.every((e) => (e.code ?? e.err?.code) === 11000)) throw err;
      added += batch.length - errors.length;
    }
  }
  // Two processes starting at once both upsert the mark; the loser's duplicate key means the mark is there.
  await models.CredentialDigest.updateOne({ _id: BACKFILL_MARK }, { $setOnInsert: { kind: 'mark', ownerId: '-', customerId: null } }, { upsert: true }).catch(
    (err: unknown) => {
      if (!isDuplicateKeyError(err)) throw err;
    },
  );
  return { added, skipped: false };
}
