// Owns the time per job the workers of a queue measured in their warm-up, shared through Redis: it is the
// admission estimate of an API process that has not seen an outcome yet (service-time.ts's provisional figure).
// Without it a burst on a cold service is admitted blind — no expected wait, every job in fair round 1 — so the
// calls admitted past what the workers can serve wait out their budget, in arrival order, instead of being
// refused at once or put behind the other tenants' first calls. The first outcome replaces the figure.
import type { Redis } from 'ioredis';

/** Kept an hour after the last worker start: a figure older than the workers that made it says little. */
const WARM_UP_TTL_MS = 3_600_000;

export class WarmUpTime {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    queueName: string,
  ) {
    this.key = `${prefix}:warm-up-ms:${queueName}`;
  }

  /**
   * A worker's warm-up time per job (ms). The lowest figure of the hour stands: workers starting together slow
   * each other's warm-up, and the estimate is of a job with the cores to itself. Two workers publishing at once
   * may leave either figure: both are fresh.
   */
  async publish(ms: number): Promise<void> {
    const current = await this.read();
    if (current !== null && current <= ms) await this.redis.pexpire(this.key, WARM_UP_TTL_MS);
    else await this.redis.set(this.key, Math.max(1, Math.round(ms)).toString(), 'PX', WARM_UP_TTL_MS);
  }

  /** The figure, or null when no worker has published one within the hour. */
  async read(): Promise<number | null> {
    const raw = await this.redis.get(this.key);
    const ms = raw === null ? NaN : Number(raw);
    return Number.isFinite(ms) && ms > 0 ? ms : null;
  }
}
