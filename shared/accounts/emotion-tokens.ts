// Owns the emotion API's access tokens: issued and revoked by operators or on the dashboard, stored hashed.
import { randomUUID } from 'node:crypto';
import { NotFoundError } from '../errors';
import type { EmotionTokenDoc, Models } from '../db/models';
import { Deadline } from '../deadline';
import { SingleFlight } from '../single-flight';
import { displayPrefix, generateToken, sameDigest, sha256Hex } from './secrets';

export type EmotionToken = EmotionTokenDoc & { _id: string };

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{20,256}$/;

export class EmotionTokenService {
  /** Concurrent calls with one token share one database read. */
  private readonly lookups = new SingleFlight<EmotionToken | null>();

  constructor(private readonly models: Models) {}

  /** Creates a token and returns it in full: the only time it is shown. */
  async create(name: string, customerId: string | null = null): Promise<{ id: string; token: string; prefix: string }> {
    const token = generateToken();
    const id = randomUUID();
    const prefix = displayPrefix(token, 6);
    await this.models.EmotionToken.create({ _id: id, name, customerId, hash: sha256Hex(token), prefix });
    return { id, token, prefix };
  }

  async revoke(id: string, customerId?: string): Promise<void> {
    const filter: Record<string, unknown> = { _id: id, revokedAt: null };
    if (customerId) filter.customerId = customerId;
    const res = await this.models.EmotionToken.updateOne(filter, { $set: { revokedAt: new Date() } });
    if (res.matchedCount === 0) throw new NotFoundError('token not found');
  }

  async list(customerId: string): Promise<EmotionToken[]> {
    return (await this.models.EmotionToken.find({ customerId }).sort({ createdAt: -1 }).lean()) as EmotionToken[];
  }

  /** The token's record, or null when it is malformed, unknown or revoked; DeadlineExceededError (503) when late. */
  async authenticate(presented: string, deadline = Deadline.after(10_000)): Promise<EmotionToken | null> {
    if (!TOKEN_SHAPE.test(presented)) return null;
    const digest = sha256Hex(presented);
    const read = () =>
      this.models.EmotionToken.findOne({ hash: digest }).maxTimeMS(Math.max(1000, deadline.remainingMs())).lean().exec() as Promise<EmotionToken | null>;
    const doc = await deadline.race('authentication', this.lookups.run(digest, read));
    if (!doc || doc.revokedAt || !sameDigest(doc.hash, digest)) return null;
    return doc;
  }
}
