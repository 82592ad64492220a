// Owns the optional Idempotency-Key header: the same key and body within 24 h replays the stored
// answer and is not charged again. Kept in Redis, where expiring data belongs.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError, InvalidRequestError } from '../../shared/errors';

const TTL_MS = 24 * 60 * 60 * 1000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: unknown;
}

type Entry = { bodyHash: string; state: 'pending' } | { bodyHash: string; state: 'done'; response: StoredResponse };

export type IdempotencyClaim =
  | { kind: 'none' }
  | { kind: 'new'; finish(response: StoredResponse | null): Promise<void> }
  | { kind: 'replay'; response: StoredResponse };

export class IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Claims `key` for this body, or returns the stored answer of an earlier identical request. */
  async claim(customerId: string, key: string | undefined, body: Buffer | string): Promise<IdempotencyClaim> {
    if (key === undefined) return { kind: 'none' };
    if (!KEY_SHAPE.test(key)) throw new InvalidRequestError('Idempotency-Key must be 1-255 printable ASCII characters');
    const redisKey = `${this.prefix}:idem:${customerId}:${crypto.createHash('sha256').update(key).digest('hex')}`;
    const bodyHash = crypto.createHash('sha256').update(body).digest('hex');
    const fresh: Entry = { bodyHash, state: 'pending' };
    const set = await this.redis.set(redisKey, JSON.stringify(fresh), 'PX', TTL_MS, 'NX');
    if (set === 'OK') {
      return {
        kind: 'new',
        finish: async (response) => {
          // Only final answers are kept; a 5xx or 429 can be retried with the same key.
          if (!response) await this.redis.del(redisKey);
          else await this.redis.set(redisKey, JSON.stringify({ bodyHash, state: 'done', response }), 'PX', TTL_MS);
        },
      };
    }
    const existing = JSON.parse((await this.redis.get(redisKey)) ?? 'null') as Entry | null;
    if (!existing) return this.claim(customerId, key, body); // expired in between
    if (existing.bodyHash !== bodyHash) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request body', 422);
    }
    if (existing.state === 'pending') {
      throw new AppError('request_in_progress', 'A request with this Idempotency-Key is still being processed', 409);
    }
    return { kind: 'replay', response: existing.response };
  }
}
