// Owns what a process that serves requests does to the document store before its first request: build the
// indexes, then give credentials written before the digest index existed their digests (once per store: a mark
// makes later start-ups one `_id` read). Authentication never falls back to a scan for a missing digest, so this
// runs before any request is served. Accounts written before the top-level `subscriptionId` get it the same way.
import { backfillSubscriptionIds } from '../accounts/account-service';
import { backfillCredentialDigests } from '../accounts/credential-digests';
import { ensureIndexes, type Models } from './models';

export async function prepareStore(models: Models): Promise<void> {
  await ensureIndexes(models);
  await backfillCredentialDigests(models);
  await backfillSubscriptionIds(models);
}
