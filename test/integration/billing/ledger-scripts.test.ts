import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRedis, closeRedis, waitUntilReady } from '../../../shared/redis';
import { CreditLedger, creditsKey, STALE_RESERVATION_MS } from '../../../shared/billing/credit-ledger';
import { orphansKey, OUTBOX_GROUP, outboxKey, outboxStreams, usageDocOf } from '../../../shared/billing/usage-outbox';
import { partitionPrefix, PARTITIONS } from '../../../shared/redis-partitions';
import { queueKeys } from '../../../shared/queues/keys';
import type { PlanView } from '../../../shared/billing/plans';
import type { Models } from '../../../shared/db/models';
import { DONE_TTL_MS, IdempotencyStore, PENDING_MARGIN_MS } from '../../../api/liveness/idempotency';
import { isolation, testRedisUrl } from '../../support/engines';
import { pendingOutboxEntries, settleReserved } from '../../support/billing';

/** Whole ms since `t0`, rounded up: a TTL read back can have lost at most this much (however busy the machine). */
const elapsedSince = (t0: number) => Math.ceil(performance.now() - t0) + 1;

// The ledger's and the idempotency store's Lua scripts against Redis alone: every month hash is created with
// seedFrom (no document store), and the test clock makes every instant, day and TTL exact.
describe('credit ledger and idempotency scripts against Redis alone', () => {
  let redis: Redis;
  let prefix: string;
  let now = new Date('2026-01-15T12:00:00.000Z');
  let ledger: CreditLedger;
  const free: PlanView = { plan: 'free', monthlyLimit: 50, hardCap: true };

  before(async () => {
    redis = createRedis(testRedisUrl(), 'producer');
    await waitUntilReady(redis);
  });
  beforeEach(() => {
    // A fresh prefix and clock per test: no test depends on another's data or on the order they run in.
    prefix = isolation('ledger').prefix;
    now = new Date('2026-01-15T12:00:00.000Z');
    ledger = new CreditLedger(redis, prefix, null as unknown as Models, () => now);
  });
  after(() => closeRedis(redis));

  const customer = async (plan: PlanView = free, month = '2026-01') => {
    const id = randomUUID();
    await ledger.seedFrom(id, month, []);
    return { id, plan };
  };
  const hash = (id: string, month = '2026-01') => redis.hgetall(creditsKey(prefix, id, month));
  const reserveAndSettle = async (c: { id: string; plan: PlanView }) => {
    const rid = randomUUID();
    const r = await ledger.reserve(c.id, c.plan, rid);
    if (!r.ok) return { rid, reserved: false, committed: false };
    const s = await settleReserved(ledger, prefix, { customerId: c.id, month: r.month, at: r.at, requestId: rid, plan: c.plan });
    return { rid, reserved: true, committed: s.committed, stored: s.stored };
  };

  it('settles a reservation in one step: the credit, the stored answer with the committed counts, and one outbox event', async () => {
    const c = await customer();
    const rid = randomUUID();
    const r = await ledger.reserve(c.id, c.plan, rid);
    expect(r).to.deep.equal({ ok: true, month: '2026-01', at: Date.parse('2026-01-15T12:00:00.000Z') });
    expect(await hash(c.id)).to.include({ calls: '1', used: '0', [`p:${rid}`]: String(r.at) });
    const s = await settleReserved(ledger, prefix, { customerId: c.id, month: r.month, at: r.at, requestId: rid, plan: c.plan });
    expect(s.committed).to.equal(true);
    const stored = JSON.parse(s.stored);
    expect(stored.value.usage).to.deep.equal({ remaining: 49, overLimit: 0, monthlyLimit: 50, used: 1, overage: false });
    expect(await redis.get(queueKeys(prefix).result(rid, c.id))).to.equal(s.stored);
    const h = await hash(c.id);
    expect(h).to.deep.include({ calls: '1', used: '1', overage: '0', 'd:15': '1' });
    expect(Object.keys(h).filter((f) => f.startsWith('p:'))).to.deep.equal([]);
    const [entry, ...rest] = await pendingOutboxEntries(redis, prefix);
    expect(rest).to.deep.equal([]);
    const doc = usageDocOf(entry!);
    expect(doc).to.deep.include({ _id: rid, service: 'liveness', customerId: c.id, month: '2026-01', hour: '2026-01-15T12', billable: true, overage: false });
    expect((doc.at as Date).toISOString()).to.equal('2026-01-15T12:00:00.000Z');
  });

  it('bills nothing when the API released first (the race at the budget), and keeps the first stored outcome', async () => {
    const c = await customer();
    const rid = randomUUID();
    const r = await ledger.reserve(c.id, c.plan, rid);
    expect(await ledger.release(c.id, r.month, rid)).to.equal(true);
    const s = await settleReserved(ledger, prefix, { customerId: c.id, month: r.month, at: r.at, requestId: rid, plan: c.plan });
    expect(s.committed).to.equal(false);
    expect(JSON.parse(s.stored).error.code).to.equal('abandoned');
    expect(await hash(c.id)).to.deep.include({ calls: '0', used: '0' });
    expect(await pendingOutboxEntries(redis, prefix)).to.deep.equal([]);
  });

  it('makes the release a no-op once the worker committed (the other order of the race), and a second settle bills nothing', async () => {
    const c = await customer();
    const { rid, committed, stored } = await reserveAndSettle(c);
    expect(committed).to.equal(true);
    expect(await ledger.release(c.id, '2026-01', rid)).to.equal(false);
    const again = await settleReserved(ledger, prefix, { customerId: c.id, month: '2026-01', at: now.getTime(), requestId: rid, plan: c.plan });
    expect(again).to.deep.equal({ committed: false, stored });
    expect(await hash(c.id)).to.deep.include({ calls: '1', used: '1' });
    expect(await pendingOutboxEntries(redis, prefix)).to.have.length(1);
  });

  it('refuses the 51st reservation of the free plan, frees reservations older than 120 s when full, and keeps fresh ones', async () => {
    const c = await customer();
    for (let i = 0; i < 49; i++) expect((await reserveAndSettle(c)).committed).to.equal(true);
    const stale = randomUUID();
    expect((await ledger.reserve(c.id, c.plan, stale)).ok).to.equal(true); // 50th, never settled (its API crashed)
    expect((await ledger.reserve(c.id, c.plan, randomUUID())).ok).to.equal(false);
    now = new Date(now.getTime() + STALE_RESERVATION_MS); // exactly 120 s: not yet stale
    expect((await ledger.reserve(c.id, c.plan, randomUUID())).ok).to.equal(false);
    now = new Date(now.getTime() + 1); // 120.001 s: stale, released when seen
    const fresh = randomUUID();
    expect((await ledger.reserve(c.id, c.plan, fresh)).ok).to.equal(true);
    const h = await hash(c.id);
    expect(h).to.include({ calls: '50', used: '49' });
    expect(h).to.not.have.property(`p:${stale}`);
    // The stale call's worker, should it still finish, finds no reservation and bills nothing.
    const late = await settleReserved(ledger, prefix, { customerId: c.id, month: '2026-01', at: now.getTime(), requestId: stale, plan: c.plan });
    expect(late.committed).to.equal(false);
  });

  it('bills 10 concurrent calls with a limit of 3 and the hard cap off as 10 used and exactly 7 overage', async () => {
    const c = await customer({ plan: 'enterprise', monthlyLimit: 3, hardCap: false });
    const results = await Promise.all(Array.from({ length: 10 }, () => reserveAndSettle(c)));
    expect(results.every((r) => r.committed)).to.equal(true);
    expect(await hash(c.id)).to.deep.include({ calls: '10', used: '10', overage: '7' });
    const entries = await pendingOutboxEntries(redis, prefix);
    expect(entries.filter((e) => e.overage === '1')).to.have.length(7);
    expect(results.map((r) => JSON.parse(r.stored!).value.usage.used).sort((a, b) => a - b)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('finding 10: bills a call reserved at 23:59:59.900 on the 31st and finished after midnight wholly to January: month, day and hour', async () => {
    now = new Date('2026-01-31T23:59:59.900Z');
    const c = await customer();
    await ledger.seedFrom(c.id, '2026-02', []);
    const rid = randomUUID();
    const r = await ledger.reserve(c.id, c.plan, rid);
    now = new Date('2026-02-01T00:00:00.400Z'); // the engine finishes in the new month
    await settleReserved(ledger, prefix, { customerId: c.id, month: r.month, at: r.at, requestId: rid, plan: c.plan });
    expect(await hash(c.id, '2026-01')).to.deep.include({ used: '1', 'd:31': '1' });
    expect(await hash(c.id, '2026-02')).to.deep.include({ used: '0' });
    const doc = usageDocOf((await pendingOutboxEntries(redis, prefix))[0]!);
    expect(doc).to.include({ month: '2026-01', hour: '2026-01-31T23' });
    expect((doc.at as Date).toISOString()).to.equal('2026-01-31T23:59:59.900Z');
  });

  // A drainer that counted calls after Redis lost their outbox entries records them (usage-drainer-redis-loss.test.ts
  // drives the whole path); each reaches the month hash once, whichever of the hash's rebuild and the record is first.
  it('adds a call counted after Redis lost its entry to a hash built before, and a hash built after takes it from the record, once', async () => {
    const lostCall = (requestId: string, overage = false) => ({ requestId, overage, day: '15' });
    // The hash exists (built from revision 0 of the document): the record adds the call now, once.
    const c = await customer();
    expect(await ledger.addOrphanedCalls(c.id, '2026-01', 4, [lostCall('r-1', true)])).to.equal(1);
    expect(await ledger.addOrphanedCalls(c.id, '2026-01', 5, [lostCall('r-1', true)])).to.equal(0);
    expect(await hash(c.id)).to.deep.include({ calls: '1', used: '1', overage: '1', 'd:15': '1' });
    // No hash yet: the record waits, and the rebuild from an older revision adds it.
    const d = { id: randomUUID(), plan: free };
    expect(await ledger.addOrphanedCalls(d.id, '2026-01', 4, [lostCall('r-2'), lostCall('r-3')])).to.equal(0);
    await ledger.seedFrom(d.id, '2026-01', [{ at: now, overage: false }]);
    expect(await hash(d.id)).to.deep.include({ used: '3', overage: '0', 'd:15': '3', rev: '0' });
    // The records live as long as the hash would.
    expect(await redis.pttl(orphansKey(partitionPrefix(prefix, d.id), d.id, '2026-01'))).to.be.greaterThan(24 * 3600 * 1000);
  });

  describe('Idempotency-Key entries', () => {
    const BUDGET_MS = 10_000;
    let store: IdempotencyStore;
    beforeEach(() => {
      store = new IdempotencyStore(redis, prefix, BUDGET_MS);
    });

    it('finding 8: a pending marker lives the budget plus 15 s, not 24 h; a final answer lives 24 h', async () => {
      const t0 = performance.now();
      const claim = await store.claim('cust-a', 'k-1', 'body', 'rid-1');
      expect(claim.kind).to.equal('new');
      if (claim.kind !== 'new') return;
      const pendingTtl = await redis.pttl(claim.entryKey);
      expect(pendingTtl).to.be.within(BUDGET_MS + PENDING_MARGIN_MS - elapsedSince(t0), BUDGET_MS + PENDING_MARGIN_MS);
      expect(BUDGET_MS + PENDING_MARGIN_MS).to.equal(25_000);
      const t1 = performance.now();
      await claim.finish({ status: 200, body: { ok: 1 } });
      expect(await redis.pttl(claim.entryKey)).to.be.within(DONE_TTL_MS - elapsedSince(t1), DONE_TTL_MS);
      expect(DONE_TTL_MS).to.equal(86_400_000);
    });

    it('answers 409 to a concurrent request with the same key and body, 422 to another body, and scopes keys per customer', async () => {
      const claims = await Promise.allSettled([1, 2, 3].map((i) => store.claim('cust-a', 'k-2', 'body', `rid-${i}`)));
      expect(claims.filter((c) => c.status === 'fulfilled' && c.value.kind === 'new')).to.have.length(1);
      const refused = claims.filter((c): c is PromiseRejectedResult => c.status === 'rejected');
      expect(refused.map((c) => [c.reason.code, c.reason.httpStatus])).to.deep.equal([
        ['request_in_progress', 409],
        ['request_in_progress', 409],
      ]);
      try {
        await store.claim('cust-a', 'k-2', 'other body', 'rid-4');
        expect.fail('a different body must be refused');
      } catch (err) {
        expect((err as { code: string; httpStatus: number }).httpStatus).to.equal(422);
      }
      expect((await store.claim('cust-b', 'k-2', 'body', 'rid-5')).kind).to.equal('new');
    });

    it('frees a key whose call ended 5xx or 429 unbilled, and replays a stored 4xx', async () => {
      const first = await store.claim('cust-a', 'k-3', 'body', 'rid-1');
      if (first.kind !== 'new') throw new Error('expected a new claim');
      await first.finish(null);
      const second = await store.claim('cust-a', 'k-3', 'body', 'rid-2');
      expect(second.kind).to.equal('new');
      if (second.kind !== 'new') return;
      await second.finish({ status: 400, body: { error: { code: 'invalid_image' } } });
      expect(await store.claim('cust-a', 'k-3', 'body', 'rid-3')).to.deep.equal({
        kind: 'replay',
        response: { status: 400, body: { error: { code: 'invalid_image' } } },
      });
    });

    it('finding 7: a committed call answered 503 keeps its key, which replays the committed answer', async () => {
      const c = await customer();
      const rid = randomUUID();
      const claim = await store.claim(c.id, 'k-4', 'body', rid);
      if (claim.kind !== 'new') throw new Error('expected a new claim');
      const r = await ledger.reserve(c.id, c.plan, rid);
      const t0 = performance.now();
      const s = await settleReserved(ledger, prefix, {
        customerId: c.id,
        month: r.month,
        at: r.at,
        requestId: rid,
        plan: c.plan,
        idempotency: { key: claim.entryKey, ttlMs: DONE_TTL_MS },
      });
      expect(s.committed).to.equal(true);
      await claim.finish(null); // the API answered 503 (or never answered)
      expect(await store.claim(c.id, 'k-4', 'body', randomUUID())).to.deep.equal({ kind: 'committed', outcomeJson: s.stored });
      expect(await redis.pttl(claim.entryKey)).to.be.within(DONE_TTL_MS - elapsedSince(t0), DONE_TTL_MS);
      expect(await hash(c.id)).to.deep.include({ used: '1', calls: '1' });
    });

    it("does not let another request's settle or finish touch an entry it did not claim", async () => {
      // The same customer's entry (an entry and the settle's other keys share its partition's slot on a cluster).
      const c = await customer();
      const claim = await store.claim(c.id, 'k-5', 'body', 'rid-1');
      if (claim.kind !== 'new') throw new Error('expected a new claim');
      const r = await ledger.reserve(c.id, c.plan, 'rid-other');
      await settleReserved(ledger, prefix, {
        customerId: c.id,
        month: r.month,
        at: r.at,
        requestId: 'rid-other',
        plan: c.plan,
        idempotency: { key: claim.entryKey, ttlMs: DONE_TTL_MS },
      });
      expect(await redis.hget(claim.entryKey, 'state')).to.equal('pending');
    });
  });

  it("keeps each account's outbox under its partition's hash tag, with one consumer group for the drainers", () => {
    expect(outboxKey('{lc}')).to.equal('{lc}:outbox:usage');
    expect(outboxStreams('{lc}')).to.have.length(PARTITIONS + 1);
    expect(outboxStreams('{lc}')[7]).to.equal('{lc:p07}:outbox:usage');
    expect(OUTBOX_GROUP).to.equal('usage-drainers');
  });
});
