// Owns how keys spread over a Redis Cluster's primaries (docs/operations.md, "Redis past one primary"): an account's
// keys (credits, undrained calls, idempotency entries, its jobs' payloads and results, its usage outbox) live under
// one of PARTITIONS hash tags derived from the deployment's prefix, `{lc}` -> `{lc:p07}`, chosen by a stable hash of
// the account id (never a value the caller sends), so the settle script's five keys share a slot; the queues and
// fair admission stay under the prefix's own tag. A key not tied to an account (a credential digest's cache
// entries) takes the partition of its own name.

/**
 * Fixed for a deployment: changing it moves every account to another partition (its credits reseed from the store,
 * but the undrained calls and outbox entries left in the old partitions would be missed until drained).
 */
export const PARTITIONS = 16;

const TAG = /\{([^{}]+)\}/;

/** FNV-1a (32 bit) of the string's UTF-16 code units: stable across processes and versions. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The partition number (0..PARTITIONS-1) of an owner: an account id, or a key's own name. */
export function partitionOf(owner: string): number {
  return fnv1a(owner) % PARTITIONS;
}

/** The prefix of partition `n`: the deployment prefix's hash tag with `:pNN` inside (`{lc}` -> `{lc:p07}`). */
export function partitionPrefixAt(prefix: string, n: number): string {
  const p = `p${String(n).padStart(2, '0')}`;
  return TAG.test(prefix) ? prefix.replace(TAG, (_, tag: string) => `{${tag}:${p}}`) : `{${prefix}:${p}}`;
}

/** The prefix `owner`'s keys live under. */
export function partitionPrefix(prefix: string, owner: string): string {
  return partitionPrefixAt(prefix, partitionOf(owner));
}

/** Every partition's prefix, in order (what the outbox drainers read). */
export function allPartitionPrefixes(prefix: string): string[] {
  return Array.from({ length: PARTITIONS }, (_, n) => partitionPrefixAt(prefix, n));
}

/** The prefix a key was built under (up to its hash tag's closing brace): a job's result key names its partition. */
export function prefixOfKey(key: string): string {
  const end = key.indexOf('}');
  if (end === -1) throw new Error(`key ${key} carries no hash tag`);
  return key.slice(0, end + 1);
}
