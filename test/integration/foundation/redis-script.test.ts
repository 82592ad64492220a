// Our Lua scripts reach Redis by SHA1 (shared/redis-script.ts): the text travels only when Redis does not know
// the script (first use, a restart, SCRIPT FLUSH), and a call never fails for that reason. A call declaring
// another number of keys than the script's is refused before Redis runs anything.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { LuaScript } from '../../../shared/redis-script';
import { primariesOf, waitUntilReady } from '../../../shared/redis';
import { commandCalls as calls, isolation, testRedisConnections } from '../../support/engines';

describe('Lua scripts by SHA1', () => {
  const { prefix } = isolation('lua-script');
  const { conn, closeAll } = testRedisConnections();
  let redis: Redis;
  before(async () => {
    redis = conn('producer');
    await waitUntilReady(redis);
  });
  after(closeAll);

  /** SCRIPT EXISTS on every primary (a cluster's nodes each keep their own scripts): [1] when one has it. */
  const loadedAnywhere = async (sha1: string): Promise<number[]> => {
    const replies = (await Promise.all(primariesOf(redis).map((node) => node.script('EXISTS', sha1)))) as number[][];
    return [replies.some(([n]) => n === 1) ? 1 : 0];
  };

  // A script of its own (the test's prefix in a comment), so no other test can have loaded it already.
  const script = new LuaScript(`-- ${prefix}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`, 1);

  it('runs when Redis has never seen it, and then goes by its SHA1 without sending the text again', async () => {
    const key = `${prefix}:counter`;
    const [known] = await loadedAnywhere(script.sha1);
    expect(known).to.equal(0);
    expect(await script.run(redis, [key], [2])).to.equal(2);
    const [loaded] = await loadedAnywhere(script.sha1);
    expect(loaded).to.equal(1);
    const evalsBefore = await calls(redis, 'eval');
    const evalshasBefore = await calls(redis, 'evalsha');
    expect(await script.run(redis, [key], [3])).to.equal(5);
    expect((await calls(redis, 'evalsha')) - evalshasBefore).to.be.at.least(1);
    // Other tests may run scripts meanwhile, but never by EVAL once loaded: only a NOSCRIPT retry sends the text.
    expect(await script.run(redis, [key], [0])).to.equal(5);
    expect(await calls(redis, 'eval')).to.be.at.most(evalsBefore + 1);
    await redis.del(key);
  });

  it('survives SCRIPT FLUSH (a Redis restart loses the loaded scripts)', async () => {
    const key = `${prefix}:after-flush`;
    expect(await script.run(redis, [key], [1])).to.equal(1);
    await Promise.all(primariesOf(redis).map((node) => node.script('FLUSH')));
    expect(await script.run(redis, [key], [1])).to.equal(2);
    await redis.del(key);
  });

  it('passes script errors through', async () => {
    const failing = new LuaScript(`-- ${prefix} failing\nreturn redis.error_reply('BROKEN on purpose')`, 1);
    let caught: unknown;
    await failing.run(redis, [`${prefix}:x`]).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(Error);
    expect((caught as Error).message).to.match(/BROKEN on purpose/);
  });

  it('refuses a call with another number of keys than the script declares, running nothing', async () => {
    const key = `${prefix}:miscounted`;
    for (const keys of [[], [key, `${prefix}:extra`]]) {
      let caught: unknown;
      await script.run(redis, keys, [1]).catch((err: unknown) => (caught = err));
      expect(caught).to.be.instanceOf(Error);
      expect((caught as Error).message).to.match(new RegExp(`takes 1 keys, the call passed ${keys.length}`));
    }
    expect(await redis.exists(key, `${prefix}:extra`)).to.equal(0);
  });
});
