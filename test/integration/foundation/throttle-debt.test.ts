// The fair-use throttle (api/http/throttle.ts) on real Redis, with costs and debts: a call may cost several
// tokens, work found dear after the fact is charged below zero, and the next take waits until the refill has paid
// the debt — with the shipped liveness unit of worker time per token.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Throttle, throttleKey, workTokens } from '../../../api/http/throttle';
import { parseConfig } from '../../../shared/config';
import { TooManyRequestsError } from '../../../shared/errors';
import { waitUntilReady } from '../../../shared/redis';
import { isolation, testRedisConnections } from '../../support/engines';
import { quietLog } from '../../support/config';

const SHIPPED = parseConfig({});

describe('Throttle: fair use counted in work', () => {
  const { prefix } = isolation('throttle-debt');
  const { conn, closeAll } = testRedisConnections();
  let redis: Redis;
  let throttle: Throttle;

  before(async () => {
    redis = conn('producer');
    await waitUntilReady(redis);
    // Burst 10, 1 token a second: small numbers make the arithmetic visible; the unit is the shipped one.
    throttle = new Throttle(redis, prefix, {
      burst: 10,
      ratePerSecond: 1,
      code: 'rate_limited',
      message: 'slow down',
      workMsPerToken: SHIPPED.THROTTLE_WORK_MS_PER_TOKEN,
    });
  });

  after(closeAll);

  const level = async (subject: string) => Number(await redis.hget(throttleKey(prefix, subject), 't'));
  const refused = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (err: unknown) => {
        if (err instanceof TooManyRequestsError) return err;
        throw err;
      },
    );

  it('costs a normal selfie one token in all, and a job that held a worker far longer one more per started unit', () => {
    const unit = SHIPPED.THROTTLE_WORK_MS_PER_TOKEN;
    expect(workTokens(30, unit), 'a selfie (20–40 ms)').to.equal(1);
    expect(workTokens(unit, unit)).to.equal(1);
    expect(workTokens(unit + 1, unit)).to.equal(2);
    expect(workTokens(3.5 * unit, unit)).to.equal(4);
    expect(workTokens(3.5 * unit, undefined), 'work not charged').to.equal(1);
  });

  it('takes a cost of several tokens and refuses it while fewer are left', async () => {
    const subject = `s-${randomUUID()}`;
    await throttle.take(subject, 7);
    expect(await level(subject)).to.be.within(3, 3.1);
    const err = await refused(throttle.take(subject, 7));
    expect(err?.code).to.equal('rate_limited');
    // About four seconds of refill at 1 token/s.
    expect(err?.retryAfterSeconds).to.be.within(3, 4);
  });

  it('charges work below zero, and the next call waits until the refill has paid the debt', async () => {
    const subject = `s-${randomUUID()}`;
    await throttle.take(subject);
    throttle.chargeWork(subject, 14.5 * SHIPPED.THROTTLE_WORK_MS_PER_TOKEN, quietLog);
    // 10 − 1 taken − 14 more for the work (15 tokens in all) = −5. The charge left on this connection ahead of the
    // read below, and Redis runs one connection's commands in order: no wait.
    expect(await level(subject)).to.be.within(-5, -4.8);
    const err = await refused(throttle.take(subject));
    expect(err?.retryAfterSeconds, 'six tokens of refill (to one)').to.be.within(5, 6);
    // The debt outlives the bucket's usual lifetime: the key lives until the bucket is full again.
    expect(await redis.pttl(throttleKey(prefix, subject))).to.be.greaterThan(10_000);
  });
});
