import { expect } from 'chai';
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRedis } from '../../../shared/redis';
import { SessionStore } from '../../../api/console/auth/session';
import { isolation, keysUnder, testRedisUrl } from '../../support/engines';

describe('Console sessions (Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let now: number;
  let store: SessionStore;
  const MIN = 60_000;

  before(async () => {
    redis = createRedis(testRedisUrl(), 'worker');
    prefix = isolation('sessions').prefix;
  });
  beforeEach(() => {
    now = Date.UTC(2026, 10, 22, 9, 0, 0);
    store = new SessionStore(redis, prefix, { idleMs: 30 * MIN, absoluteMs: 12 * 60 * MIN }, () => now);
  });
  after(async () => redis.quit());

  it('keeps a session server-side: Redis holds a hash of the id, never the id the cookie carries', async () => {
    const s = await store.create({ stage: 'password', customerId: 'c1' });
    const keys = await keysUnder(redis, prefix, 'console:session:*');
    const digest = crypto.createHash('sha256').update(s.id).digest('base64url');
    expect(keys).to.include(`${prefix}:console:session:${digest}`);
    expect(keys.join()).to.not.contain(s.id);
    expect((await store.load(s.id))?.data.csrf).to.equal(s.data.csrf);
  });

  it('gives every session its own random id and CSRF token', async () => {
    const a = await store.create({ stage: 'password', customerId: 'c1' });
    const b = await store.create({ stage: 'password', customerId: 'c1' });
    expect(a.id).to.not.equal(b.id);
    expect(a.data.csrf).to.have.length.greaterThan(40).and.not.equal(b.data.csrf);
  });

  it('ends a session after 30 idle minutes, and keeps it alive while it is used', async () => {
    const s = await store.create({ stage: 'authenticated', customerId: 'c1' });
    for (let i = 0; i < 4; i++) {
      now += 25 * MIN;
      expect(await store.load(s.id), `request ${i}`).to.not.equal(null);
    }
    now += 31 * MIN;
    expect(await store.load(s.id)).to.equal(null);
  });

  it('lets Redis expire an idle session by itself (the TTL is the idle limit)', async () => {
    const s = await store.create({ stage: 'password', customerId: 'c1' });
    const ttl = await redis.pttl(`${prefix}:console:session:${crypto.createHash('sha256').update(s.id).digest('base64url')}`);
    expect(ttl)
      .to.be.greaterThan(29 * MIN)
      .and.at.most(30 * MIN);
  });

  it('ends a session 12 hours after sign-in however active it was', async () => {
    const s = await store.create({ stage: 'authenticated', customerId: 'c1' });
    for (let i = 0; i < 12 * 3; i++) {
      now += 20 * MIN;
      const alive = await store.load(s.id);
      if (i < 35) expect(alive, `at ${(i + 1) * 20} min`).to.not.equal(null);
      else expect(alive).to.equal(null);
    }
  });

  it('rotates to a new id and CSRF token; the old id is dead at once', async () => {
    const s = await store.create();
    const rotated = await store.rotate(s, { stage: 'password', customerId: 'c1' }, true);
    expect(rotated.id).to.not.equal(s.id);
    expect(rotated.data.csrf).to.not.equal(s.data.csrf);
    expect(await store.load(s.id)).to.equal(null);
    expect((await store.load(rotated.id))?.data).to.include({ stage: 'password', customerId: 'c1' });
  });

  it('restarts the absolute lifetime at sign-in but not at later rotations', async () => {
    const anon = await store.create();
    now += 11 * 60 * MIN;
    const signedIn = await store.rotate(anon, { stage: 'password', customerId: 'c1' }, true);
    expect(signedIn.data.createdAt).to.equal(now);
    now += 10 * MIN;
    const full = await store.rotate(signedIn, { stage: 'authenticated' });
    expect(full.data.createdAt).to.equal(signedIn.data.createdAt);
  });

  it('refuses ids that are unknown, empty or absurdly long', async () => {
    expect(await store.load(undefined)).to.equal(null);
    expect(await store.load('')).to.equal(null);
    expect(await store.load('x'.repeat(500))).to.equal(null);
    expect(await store.load(crypto.randomBytes(32).toString('base64url'))).to.equal(null);
  });

  it('finding 4: a visitor without an account gets a cookie id and a working CSRF token but no Redis key', async () => {
    const before = await keysUnder(redis, prefix);
    const visitor = store.anonymous();
    const again = store.anonymous(visitor.id);
    expect(again.data.csrf, 'the token is derived from the id, so the next request can check it').to.equal(visitor.data.csrf);
    expect(store.anonymous().data.csrf).to.not.equal(visitor.data.csrf);
    await store.save(visitor); // nothing to remember: stays unstored
    const signedOut = await store.create({ flash: { kind: 'info', text: 'You have signed out.' } });
    expect((await store.load(signedOut.id))?.data.flash?.text, 'a note is stored').to.equal('You have signed out.');
    const after = await keysUnder(redis, prefix);
    expect(after.filter((k) => !before.includes(k)).filter((k) => k.includes(':console:session:'))).to.have.length(1);
    expect(await redis.pttl(`${prefix}:console:session:${crypto.createHash('sha256').update(signedOut.id).digest('base64url')}`)).to.be.at.most(
      store.limits.anonymousTtlMs,
    );
  });

  it('finding 4: stores notes of anonymous visitors only up to the anonymous cap', async () => {
    // A cap of 3 instead of the shipped 10,000, so the test writes a handful of keys.
    const capped = new SessionStore(redis, `${prefix}-cap`, store.timeouts, () => now, { ...store.limits, anonymousCap: 3 });
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await capped.create({ flash: { kind: 'info', text: `note ${i}` } }));
    expect(made.map((s) => !s.transient)).to.deep.equal([true, true, true, false, false]);
    expect(await keysUnder(redis, `${prefix}-cap`, 'console:session:*')).to.have.length(3);
  });

  it('finding 4: keeps at most the per-account cap of sessions; a new one ends the oldest', async () => {
    const perAccount = store.limits.perAccount;
    const sessions = [];
    for (let i = 0; i <= perAccount; i++) {
      sessions.push(await store.create({ stage: 'authenticated', customerId: 'capped-account' }));
      now += 1000;
    }
    expect(await store.load(sessions[0]!.id), 'the oldest ended').to.equal(null);
    for (const s of sessions.slice(1)) expect(await store.load(s.id)).to.not.equal(null);
  });

  it('finding 3: endAllSessionsOf ends every session of one account and no other', async () => {
    const mine = [await store.create({ stage: 'authenticated', customerId: 'ending' }), await store.create({ stage: 'password', customerId: 'ending' })];
    const other = await store.create({ stage: 'authenticated', customerId: 'staying' });
    expect(await store.endAllSessionsOf('ending')).to.equal(2);
    for (const s of mine) expect(await store.load(s.id)).to.equal(null);
    expect(await store.load(other.id)).to.not.equal(null);
  });
});
