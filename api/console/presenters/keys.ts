// Owns the API keys' view model: each key slot's prefix, when it was made, and its last use and calls this
// month from the usage events (usage.ts), as views/keys.ts and the Overview draw them.
import { NotFoundError } from '../../../shared/errors';
import type { Account } from '../../../shared/accounts/account-service';
import type { ApiKeyService, KeySlot } from '../../../shared/accounts/api-keys';
import type { Models } from '../../../shared/db/models';
import { usageByKey } from '../usage';
import type { KeyView } from '../views/keys';

export async function keyViews(d: { apiKeys: ApiKeyService; models: Models }, a: Account, month: string): Promise<KeyView[]> {
  const keys = await d.apiKeys.keyPrefixes(a._id);
  const byKey = await usageByKey(
    d.models,
    a._id,
    month,
    keys.map((k) => ({ id: k.id, since: k.rotatedAt })),
  );
  return keys.map((k) => ({
    id: k.id,
    slot: k.slot,
    prefix: k.prefix,
    createdAt: k.rotatedAt,
    lastUsedAt: byKey.get(k.id)?.lastUsedAt ?? null,
    callsThisMonth: byKey.get(k.id)?.calls ?? 0,
  }));
}

/** A key slot named in a URL, or 404. */
export function slotOf(value: string | undefined): KeySlot {
  if (value === 'primary' || value === 'secondary') return value;
  throw new NotFoundError('No such key');
}
