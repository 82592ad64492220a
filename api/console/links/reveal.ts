// Owns "shown once" secrets across a redirect (Post/Redirect/Get): the POST that creates a key, token
// or recovery codes parks them here for the session, the next GET takes them (GETDEL), and a reload
// finds nothing and says "already shown". Redis only, keyed by a hash of the session id, 10 minutes.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';

export type Reveal =
  | { kind: 'api-key'; slot: 'primary' | 'secondary'; key: string }
  | { kind: 'activation-keys'; primaryKey: string; secondaryKey: string; plan: string }
  | { kind: 'emotion-token'; name: string; token: string }
  | { kind: 'recovery-codes'; codes: string[]; next: string };

const REVEAL_TTL_MS = 10 * 60_000;

export class RevealStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(sessionId: string, kind: Reveal['kind']): string {
    return `${this.prefix}:console:reveal:${crypto.createHash('sha256').update(sessionId).digest('base64url')}:${kind}`;
  }

  async put(sessionId: string, reveal: Reveal): Promise<void> {
    await this.redis.set(this.key(sessionId, reveal.kind), JSON.stringify(reveal), 'PX', REVEAL_TTL_MS);
  }

  /** The parked secret, removed in the same step; null when it was shown already (or expired). */
  async take<K extends Reveal['kind']>(sessionId: string | undefined, kind: K): Promise<Extract<Reveal, { kind: K }> | null> {
    if (!sessionId) return null;
    const raw = await this.redis.getdel(this.key(sessionId, kind));
    return raw ? (JSON.parse(raw) as Extract<Reveal, { kind: K }>) : null;
  }
}
