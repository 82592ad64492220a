import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRedis, closeRedis, waitUntilReady } from '../../../shared/redis';
import { createLogger } from '../../../shared/logger';
import { ResultBus } from '../../../shared/queues/result-bus';
import { queueKeys } from '../../../shared/queues/keys';
import { JOB_OUTCOME_SCHEMAS } from '../../../shared/queues/contracts';
import { isolation, testRedisUrl } from '../../support/engines';

// Job outcomes cross Redis as text: the API parses them with the queue's zod schema, never casts them.
describe('result bus: outcomes parsed with the queue contract', () => {
  const { prefix } = isolation('resultbus');
  const keys = queueKeys(prefix);
  const channel = keys.replies(randomUUID());
  const logged: string[] = [];
  const log = createLogger('test', 'error');
  log.error = (obj: unknown, msg?: string) => void logged.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  let redis: Redis;
  let subscriber: Redis;
  let bus: ResultBus;

  before(async () => {
    redis = createRedis(testRedisUrl(), 'producer');
    subscriber = createRedis(testRedisUrl(), 'subscriber');
    await waitUntilReady(redis);
    bus = new ResultBus(subscriber, channel, redis, keys, log, JOB_OUTCOME_SCHEMAS.liveness);
    await bus.start();
  });
  after(async () => {
    await bus.close();
    await closeRedis(subscriber);
    await closeRedis(redis);
  });

  const INTERNAL = { ok: false, error: { code: 'internal_error', message: 'Internal server error', httpStatus: 500 }, workerMs: 0 };

  it('turns a published outcome that breaks the liveness contract into 500 internal_error, with a log line', async () => {
    const jobId = randomUUID();
    const waiting = bus.expect(jobId).wait(10_000);
    const malformed = { ok: true, value: { result: { isFakeFace: 'no' }, usage: null }, workerMs: 3 };
    await redis.publish(channel, JSON.stringify({ jobId, outcome: malformed }));
    expect(await waiting).to.deep.equal(INTERNAL);
    expect(logged.some((l) => l.includes('malformed job result') && l.includes(jobId))).to.equal(true);
  });

  it('treats a stored outcome that is not JSON, or not the contract, the same way on the last look', async () => {
    const a = randomUUID();
    const b = randomUUID();
    await redis.set(keys.result(a), '{"ok":tru', 'PX', 10_000);
    await redis.set(keys.result(b), JSON.stringify({ ok: false, error: { code: 'x' }, workerMs: 1 }), 'PX', 10_000);
    expect(await bus.lastLook(a)).to.deep.equal(INTERNAL);
    expect(await bus.lastLook(b)).to.deep.equal(INTERNAL);
    expect(await bus.lastLook(randomUUID())).to.equal(null);
  });

  it('passes a well-formed error outcome through unchanged', async () => {
    const jobId = randomUUID();
    const outcome = { ok: false, error: { code: 'invalid_image', message: 'No face', httpStatus: 400 }, workerMs: 12 };
    await redis.set(keys.result(jobId), JSON.stringify(outcome), 'PX', 10_000);
    expect(await bus.lastLook(jobId)).to.deep.equal(outcome);
  });

  it('refuses a second waiter for a job id that is already awaited, instead of replacing the first', async () => {
    const jobId = randomUUID();
    const first = bus.expect(jobId).wait(10_000);
    expect(() => bus.expect(jobId)).to.throw(/already awaited/);
    const outcome = { ok: false, error: { code: 'invalid_image', message: 'No face', httpStatus: 400 }, workerMs: 12 };
    await redis.publish(channel, JSON.stringify({ jobId, outcome }));
    expect(await first).to.deep.equal(outcome);
  });

  it('hears its results when started while its connection was still in its handshake (30 fresh subscribers)', async () => {
    for (let i = 0; i < 30; i++) {
      const fresh = createRedis(testRedisUrl(), 'subscriber');
      const own = queueKeys(`${prefix}-fresh`).replies(randomUUID());
      const freshBus = new ResultBus(fresh, own, redis, keys, log, JOB_OUTCOME_SCHEMAS.liveness);
      try {
        // Connected but not ready (the handshake and ready check in flight): the moment ioredis issue #2037 needs.
        await new Promise((r) => fresh.once('connect', r));
        await freshBus.start();
        const jobId = randomUUID();
        const waiting = freshBus.expect(jobId).wait(5_000);
        const outcome = { ok: false, error: { code: 'invalid_image', message: 'No face', httpStatus: 400 }, workerMs: 1 };
        await redis.publish(own, JSON.stringify({ jobId, outcome }));
        expect(await waiting, `subscriber ${i}`).to.deep.equal(outcome);
      } finally {
        await freshBus.close();
        await closeRedis(fresh);
      }
    }
  });
});
