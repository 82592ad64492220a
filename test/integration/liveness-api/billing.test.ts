import { expect } from 'chai';
import { portrait } from '../../../dev/harness/sample-images';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { rollUpOverage } from '../../../shared/billing/usage-events';
import { randomUUID } from 'node:crypto';
import { outboxDrained, settleReserved } from '../../support/billing';
import { CreditLedger, creditsKey } from '../../../shared/billing/credit-ledger';
import { outboxStreams } from '../../../shared/billing/usage-outbox';

describe('Liveness API v1 billing: credits, hard cap, overage, month boundary', () => {
  // A movable clock: the month boundary is crossed by moving it, not by waiting. Each test starts from the same
  // instant (beforeEach), so no test depends on where an earlier one left the clock.
  const START = '2026-01-31T23:59:30.000Z';
  let now = new Date(START);
  let stack: LivenessStack;
  let face: Buffer;

  before(async () => {
    stack = await startLivenessStack('billing', { clock: () => now });
    face = await portrait();
  });
  beforeEach(() => {
    now = new Date(START);
  });
  after(() => stack.stop());

  /** Usage events are written by the outbox drainers after the answer: count them once the outbox is empty. */
  const usageEvents = async (filter: Record<string, unknown>) => {
    await outboxDrained(stack.api.deps.redis, stack.prefix);
    return stack.api.deps.models.UsageEvent.countDocuments(filter);
  };

  it('keeps serving past the limit with the hard cap OFF and counts the extra calls as overage', async () => {
    const acc = await stack.createAccount('enterprise', { monthlyLimit: 3, hardCap: false });
    for (let i = 0; i < 5; i++) expect((await stack.check(acc.primaryKey, face)).status).to.equal(200);
    const usage = (await stack.usage(acc.primaryKey)).body;
    expect(usage.data).to.include({ total_calls: 5, monthly_limit: 3, remaining_calls: 0, over_limit_calls: 2, hard_cap_enabled: false });
    expect(usage.metadata).to.include({ remaining_calls: 0, over_limit_calls: 2 });
    expect(await usageEvents({ customerId: acc.customerId, overage: true })).to.equal(2);
    // Hourly metering records for the marketplace: recomputed from the events, so running twice changes nothing.
    const [event] = await stack.api.deps.models.UsageEvent.find({ customerId: acc.customerId, overage: true }).lean();
    await rollUpOverage(stack.api.deps.models, event!.hour);
    await rollUpOverage(stack.api.deps.models, event!.hour);
    const record = await stack.api.deps.models.MeteringRecord.findById(`${acc.customerId}:${event!.hour}`).lean();
    expect(record).to.include({ quantity: 2, dimension: 'overage_calls' });
    expect(record?.reportedAt ?? null, 'not reported yet').to.equal(null);
  });

  it('stops at the limit with 429 quota_exceeded when the hard cap is switched ON, charging nothing', async () => {
    now = new Date('2026-01-15T12:00:00.000Z');
    const acc = await stack.createAccount('enterprise', { monthlyLimit: 2, hardCap: false });
    await stack.api.deps.accounts.setHardCap(acc.customerId, true);
    expect((await stack.check(acc.primaryKey, face)).status).to.equal(200);
    expect((await stack.check(acc.primaryKey, face)).status).to.equal(200);
    const third = await stack.check(acc.primaryKey, face);
    expect(third.status).to.equal(429);
    expect(third.body.error.code).to.equal('quota_exceeded');
    // 16 days and 12 hours to 2026-02-01T00:00:00Z: 16 × 86400 + 43200 s.
    expect(third.headers.get('retry-after')).to.equal('1425600');
    expect(third.headers.get('x-quota-reset')).to.equal('2026-02-01T00:00:00.000Z');
    expect(third.headers.get('x-quota-remaining')).to.equal('0');
    expect(third.body.metadata).to.include({ remaining_calls: 0, date: '2026-01-15T12:00:00.000Z' });
    expect((await stack.usage(acc.primaryKey)).body.data).to.include({ total_calls: 2, over_limit_calls: 0, hard_cap_enabled: true });
  });

  it('grants a fresh month of credits at 00:00:00 UTC on the 1st, with no carry-over', async () => {
    const acc = await stack.createAccount('enterprise', { monthlyLimit: 1, hardCap: true });
    expect((await stack.check(acc.primaryKey, face)).status).to.equal(200);
    now = new Date('2026-01-31T23:59:59.000Z');
    const capped = await stack.check(acc.primaryKey, face);
    expect(capped.status).to.equal(429);
    expect(capped.headers.get('retry-after')).to.equal('1'); // one second to the 1st
    expect(capped.headers.get('x-quota-reset')).to.equal('2026-02-01T00:00:00.000Z');
    now = new Date('2026-02-01T00:00:00.000Z');
    const next = await stack.check(acc.primaryKey, face);
    expect(next.status).to.equal(200);
    expect(next.body.metadata.remaining_calls).to.equal(0);
    expect(next.headers.get('x-quota-reset')).to.equal('2026-03-01T00:00:00.000Z');
    expect((await stack.usage(acc.primaryKey)).body.data).to.include({ year_month: '2026-02', total_calls: 1, remaining_calls: 0 });
    // January's call stays in January's events: month, day and hour of its reservation.
    expect(await usageEvents({ customerId: acc.customerId, month: '2026-01', hour: '2026-01-31T23' })).to.equal(1);
    expect(await usageEvents({ customerId: acc.customerId, month: '2026-02', hour: '2026-02-01T00' })).to.equal(1);
  });

  it('applies an upgrade at once and schedules a downgrade for the month end', async () => {
    now = new Date('2026-02-10T12:00:00.000Z');
    const acc = await stack.createAccount('starter');
    const { accounts } = stack.api.deps;
    expect(await accounts.changePlan(acc.customerId, 'business')).to.deep.equal({ effective: 'now' });
    expect((await stack.usage(acc.primaryKey)).body.data).to.include({ plan: 'business', monthly_limit: 30000 });
    expect(await accounts.changePlan(acc.customerId, 'standard')).to.deep.equal({ effective: '2026-03' });
    expect((await stack.usage(acc.primaryKey)).body.data).to.include({ plan: 'business' });
    now = new Date('2026-03-01T00:00:00.000Z');
    expect((await stack.usage(acc.primaryKey)).body.data).to.include({ plan: 'standard', monthly_limit: 5000, year_month: '2026-03' });
  });

  it("rebuilds the month's counters from the usage events when Redis has lost them", async () => {
    const acc = await stack.createAccount('enterprise', { monthlyLimit: 2, hardCap: false });
    for (let i = 0; i < 3; i++) expect((await stack.check(acc.primaryKey, face)).status).to.equal(200);
    await outboxDrained(stack.api.deps.redis, stack.prefix);
    const before = (await stack.usage(acc.primaryKey)).body.data;
    await stack.api.deps.redis.del(creditsKey(stack.prefix, acc.customerId, now.toISOString().slice(0, 7)));
    const after = (await stack.usage(acc.primaryKey)).body.data;
    expect(after).to.deep.equal(before);
    expect(after).to.include({ total_calls: 3, over_limit_calls: 1 });
  });

  it("counts the outbox's undrained events too when it rebuilds lost counters, each request id once", async () => {
    // A ledger on a prefix no drainer serves: its events stay in the outbox, as while MongoDB is down.
    const prefix = `{undrained-${randomUUID().slice(0, 8)}}`;
    const ledger = new CreditLedger(stack.api.deps.redis, prefix, stack.api.deps.models, () => now);
    const plan = { plan: 'enterprise' as const, monthlyLimit: 2, hardCap: false };
    const customerId = randomUUID();
    for (let i = 0; i < 3; i++) {
      const requestId = randomUUID();
      const r = await ledger.reserve(customerId, plan, requestId);
      await settleReserved(ledger, prefix, { customerId, month: r.month, at: r.at, requestId, plan });
    }
    const before = await ledger.snapshot(customerId, plan);
    await stack.api.deps.redis.del(creditsKey(prefix, customerId, '2026-01'));
    const after = await ledger.snapshot(customerId, plan);
    expect(after).to.deep.equal(before);
    expect(after).to.include({ used: 3, overage: 1 });
    expect(after.daily).to.deep.equal({ '31': 3 });
    for (const k of [...outboxStreams(prefix), creditsKey(prefix, customerId, '2026-01')]) await stack.api.deps.redis.del(k);
  });

  it('replays the stored answer for a repeated Idempotency-Key without charging again', async () => {
    const acc = await stack.createAccount('starter');
    const first = await stack.check(acc.primaryKey, face, 'jpeg', { 'idempotency-key': 'order-42' });
    const again = await stack.check(acc.primaryKey, face, 'jpeg', { 'idempotency-key': 'order-42' });
    expect(first.status).to.equal(200);
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expect((await stack.usage(acc.primaryKey)).body.data.total_calls).to.equal(1);
    const otherBody = await stack.check(acc.primaryKey, await portrait('png'), 'png', { 'idempotency-key': 'order-42' });
    expect(otherBody.status).to.equal(422);
    expect(otherBody.body.error.code).to.equal('idempotency_key_reused');
  });
});

describe('Liveness API v1 billing under failure: nothing charged', () => {
  it('answers 503 service_unavailable within the budget when no worker answers, and charges nothing', async () => {
    // EXPECTED_LIVENESS_WORKERS makes the API enqueue although no worker is connected, so the budget runs out.
    const stack = await startLivenessStack('noworker', { withWorker: false, env: { LIVENESS_BUDGET_MS: '600', EXPECTED_LIVENESS_WORKERS: '1' } });
    try {
      const acc = await stack.createAccount('free');
      const res = await stack.check(acc.primaryKey, await portrait());
      expect(res.status).to.equal(503);
      expect(res.body.error.code).to.equal('service_unavailable');
      // The job was queued and the API gave up when its budget ran out (not a shed before queuing).
      expect(res.body.error.message).to.match(/No result within the time budget/);
      expect(res.headers.get('retry-after')).to.equal('2');
      expect((await stack.usage(acc.primaryKey)).body.data).to.include({ total_calls: 0, remaining_calls: 50 });
      const credits = await stack.api.deps.redis.hgetall(creditsKey(stack.prefix, acc.customerId, new Date().toISOString().slice(0, 7)));
      expect(credits.calls).to.equal('0');
      expect(Object.keys(credits).filter((f) => f.startsWith('p:'))).to.deep.equal([]);
    } finally {
      await stack.stop();
    }
  });

  it('answers 503 at once, charging nothing, when no worker is connected to the queue', async () => {
    const stack = await startLivenessStack('noworker2', { withWorker: false });
    try {
      const acc = await stack.createAccount('free');
      const res = await stack.check(acc.primaryKey, await portrait());
      expect(res.status).to.equal(503);
      expect(res.body.error.code).to.equal('service_unavailable');
      // Refused at admission, before anything is queued: no wait for the budget to run out.
      expect(res.body.error.message).to.match(/No worker is running/);
      expect(res.headers.get('retry-after')).to.equal('5');
      expect((await stack.usage(acc.primaryKey)).body.data.total_calls).to.equal(0);
    } finally {
      await stack.stop();
    }
  });

  it('throttles a key that exceeds the fair-use rate with 429 rate_limited and Retry-After', async () => {
    // A 3-call burst so the fair-use throttle is reached in a few calls (the shipped 60 is covered by config-defaults.test.ts).
    const stack = await startLivenessStack('throttle', { withWorker: false, env: { THROTTLE_BURST: '3', THROTTLE_RATE_PER_SEC: '0.5' } });
    try {
      const acc = await stack.createAccount('starter');
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push(await stack.usage(acc.primaryKey));
      expect(statuses.slice(0, 3).map((r) => r.status)).to.deep.equal([200, 200, 200]);
      const limited = statuses[4]!;
      expect(limited.status).to.equal(429);
      expect(limited.body.error.code).to.equal('rate_limited');
      expect(Number(limited.headers.get('retry-after'))).to.be.at.least(1);
    } finally {
      await stack.stop();
    }
  });
});
