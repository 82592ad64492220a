// Owns the optional Idempotency-Key header: the same key and body within 24 h replays the stored answer and is
// not charged again. One Redis hash per customer and key (bodyHash, state, rid = our request id, response or
// outcome), kept where expiring data belongs and under the `{prefix}` hash tag, so the worker's settle script
// (shared/billing/credit-ledger.ts) can store a committed answer in it in the same step as the commit.
//
// Only replayable answers are kept, i.e. billed ones: an unbilled answer (any 4xx or 5xx) leaves nothing behind, so
// a caller cannot fill Redis with 24 h entries for free. States: pending (claimed while the call runs; expires with
// the request budget plus PENDING_MARGIN_MS, so a crashed call frees the key soon) → done (the billed 200) or
// committed (the worker billed the call; the stored outcome is replayed even if this API answered 503 or died) or
// deleted (every unbilled answer: the key is free again, and a retry runs the call anew).
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { partitionPrefix } from '../../shared/redis-partitions';
import { AppError, InvalidRequestError } from '../../shared/errors';
import { luaScript } from '../../shared/redis-script';

export const DONE_TTL_MS = 24 * 60 * 60 * 1000;
/** Covers the API's steps after the budget (take the job back, release, last look) and a job in its last instant. */
export const PENDING_MARGIN_MS = 15_000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export type IdempotencyClaim =
  | { kind: 'none' }
  | { kind: 'new'; entryKey: string; finish: (response: StoredResponse | null) => Promise<void> }
  | { kind: 'replay'; response: StoredResponse }
  /** The worker committed this key's call: its stored outcome (JSON, parsed by the caller). */
  | { kind: 'committed'; outcomeJson: string };

const CLAIM = luaScript('idempotency-claim-1');

const FINISH = luaScript('idempotency-finish-1');

export class IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** The request budget: a pending marker lives this long plus PENDING_MARGIN_MS. */
    private readonly budgetMs: number,
  ) {}

  private entryKey(customerId: string, key: string): string {
    if (!KEY_SHAPE.test(key)) throw new InvalidRequestError('Idempotency-Key must be 1-255 printable ASCII characters');
    return `${partitionPrefix(this.prefix, customerId)}:idem:${customerId}:${crypto.createHash('sha256').update(key).digest('hex')}`;
  }

  /**
   * Whether `key` has an entry (a call running, or a billed answer to replay), read before the body is: such a
   * request is answered from the entry and is neither charged nor throttled. 400 for a malformed key.
   */
  async has(customerId: string, key: string): Promise<boolean> {
    return (await this.redis.exists(this.entryKey(customerId, key))) === 1;
  }

  /** Claims `key` for this body and request, or returns what an earlier identical request left. */
  async claim(customerId: string, key: string | undefined, body: Buffer | string, requestId: string): Promise<IdempotencyClaim> {
    if (key === undefined) return { kind: 'none' };
    const entryKey = this.entryKey(customerId, key);
    const bodyHash = crypto.createHash('sha256').update(body).digest('hex');
    const reply = (await CLAIM.run(this.redis, [entryKey], [bodyHash, requestId, String(this.budgetMs + PENDING_MARGIN_MS)])) as Array<string | null>;
    if (reply[0] === 'new' && reply.length === 1) {
      return {
        kind: 'new',
        entryKey,
        finish: async (response) => {
          // Only billed answers are kept (response null: the pending marker goes, a committed outcome stays).
          await FINISH.run(this.redis, [entryKey], [requestId, response ? JSON.stringify(response) : '', String(DONE_TTL_MS)]);
        },
      };
    }
    const [storedHash, state, response, outcome] = reply;
    if (storedHash !== bodyHash) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request body', 422);
    }
    if (state === 'done' && response) return { kind: 'replay', response: JSON.parse(response) as StoredResponse };
    if (state === 'committed' && outcome) return { kind: 'committed', outcomeJson: outcome };
    throw new AppError('request_in_progress', 'A request with this Idempotency-Key is still being processed', 409);
  }
}
