// Bursts on the shipped defaults (no throttle, backlog or budget override): the quota answers before the
// fair-use throttle and before capacity, and admission sheds only what the measured wait says cannot be
// served within the budget.
import { expect } from 'chai';
import { portrait } from '../../../dev/harness/sample-images';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import type { HttpResult } from '../../support/http';
import { outboxDrained } from '../../support/billing';
import { throttleKey } from '../../../api/http/throttle';

describe('Liveness API v1 bursts on the shipped defaults', function () {
  this.timeout(180_000);
  let stack: LivenessStack;
  let face: Buffer;

  before(async () => {
    stack = await startLivenessStack('bursts');
    face = await portrait();
  });
  after(() => stack.stop());

  it('gives exactly 50 × 200 and 20 × 429 quota_exceeded to 70 simultaneous calls on a fresh free account, and usage then shows 50/0/0', async () => {
    // A 60 s budget (not 10 s): this test is about the quota; on a busy 2-core machine 50 inferences can take over
    // 10 s, and admission then rightly sheds some (503 at capacity, uncharged), which frees quota for others.
    const roomy = await startLivenessStack('bursts-quota', { env: { LIVENESS_BUDGET_MS: '60000' } });
    try {
      await quotaBurst(roomy);
    } finally {
      await roomy.stop();
    }
  });

  it('on the shipped 10 s budget, bills a free account at most its 50 calls for 70 at once: 200, 429 quota_exceeded or 503 at capacity, billed = 200s', async () => {
    const acc = await stack.createAccount('free');
    const results = await Promise.all(Array.from({ length: 70 }, () => stack.check(acc.primaryKey, face)));
    const tally = JSON.stringify(codes(results));
    const served = results.filter((r) => r.status === 200).length;
    for (const r of results) {
      expect([200, 429, 503], tally).to.include(r.status);
      if (r.status === 429) expect(r.body.error.code).to.equal('quota_exceeded');
      if (r.status === 503) expect(r.body.error.message, tally).to.match(/at capacity/); // shed at admission, uncharged
    }
    expect(served, tally).to.be.at.most(50);
    // Without shedding (a machine not overloaded by others), the split is the exact one of the test above.
    if (!results.some((r) => r.status === 503)) expect(served, tally).to.equal(50);
    expect((await stack.usage(acc.primaryKey)).body.data.total_calls).to.equal(served);
    await outboxDrained(stack.api.deps.redis, stack.prefix);
    expect(await stack.api.deps.models.UsageEvent.countDocuments({ customerId: acc.customerId })).to.equal(served);
  });

  async function quotaBurst(stack: LivenessStack): Promise<void> {
    const acc = await stack.createAccount('free');
    const results = await Promise.all(Array.from({ length: 70 }, () => stack.check(acc.primaryKey, face)));
    const statuses = results.map((r) => r.status);
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(codes(results)),
    ).to.have.length(50);
    expect(statuses.filter((s) => s === 429)).to.have.length(20);
    for (const r of results.filter((x) => x.status === 429)) {
      expect(r.body.error.code).to.equal('quota_exceeded');
      expect(r.body.metadata.remaining_calls).to.equal(0);
      expect(Number(r.headers.get('retry-after'))).to.be.greaterThan(0);
    }
    const usage = (await stack.usage(acc.primaryKey)).body.data;
    expect(usage).to.include({ total_calls: 50, remaining_calls: 0, over_limit_calls: 0, monthly_limit: 50, plan: 'free', hard_cap_enabled: true });
    await outboxDrained(stack.api.deps.redis, stack.prefix);
    expect(await stack.api.deps.models.UsageEvent.countDocuments({ customerId: acc.customerId })).to.equal(50);
  }

  it('spends no fair-use token on calls refused for the quota: a capped key keeps its whole throttle burst', async () => {
    const acc = await stack.createAccount('enterprise', { monthlyLimit: 1, hardCap: true });
    expect((await stack.check(acc.primaryKey, face)).status).to.equal(200);
    // More capped calls than the shipped burst (60): each asks the quota and the throttle at once, and gives the token back.
    for (let i = 0; i < 70; i++) {
      const capped = await stack.check(acc.primaryKey, face);
      expect(capped.status).to.equal(429);
      expect(capped.body.error.code).to.equal('quota_exceeded');
    }
    // One bucket per account, shared by its keys (issue 41); a bucket refilled to full has expired (null: full).
    const [tokens, at] = await stack.api.deps.redis.hmget(throttleKey(stack.prefix, `account:${acc.customerId}`), 't', 'ts');
    // Reads the shipped throttle defaults (this stack overrides nothing), to compute the bucket's level now.
    const { THROTTLE_BURST: burst, THROTTLE_RATE_PER_SEC: rate } = stack.api.deps.config;
    const now = Math.min(burst, Number(tokens) + ((Date.now() - Number(at)) * rate) / 1000);
    expect(now).to.be.at.least(burst - 1);
  });

  it('serves 300 calls at once from 30 customers, shedding only what the measured wait says cannot fit the budget, billing exactly the 200s', async () => {
    const customers = await Promise.all(Array.from({ length: 30 }, () => stack.createAccount('starter')));
    // One call first, so the API has measured a service time (before that only the count ceiling applies).
    expect((await stack.check(customers[0]!.primaryKey, face)).status).to.equal(200);
    const calls = customers.flatMap((c) => Array.from({ length: 10 }, () => ({ c, answer: stack.check(c.primaryKey, face) })));
    const results = await Promise.all(calls.map(async ({ c, answer }) => ({ c, r: await answer })));
    const tally = codes(results.map((x) => x.r));
    for (const { r } of results) {
      expect([200, 503], JSON.stringify(tally)).to.include(r.status);
      if (r.status === 503) {
        // Shed at admission (the expected wait did not fit), with a Retry-After: never a timeout after waiting.
        expect(r.body.error.code).to.equal('service_unavailable');
        expect(r.body.error.message, JSON.stringify(tally)).to.match(/at capacity/);
        expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
      }
    }
    // Billed exactly what was answered 200, per customer.
    for (const c of customers) {
      const served = results.filter((x) => x.c === c && x.r.status === 200).length + (c === customers[0] ? 1 : 0);
      expect((await stack.usage(c.primaryKey)).body.data.total_calls).to.equal(served);
    }
    // How the answers were shared across customers, for the reader (push-out, fair-queue.ts). Not asserted here: ten
    // calls each are about one quantum of work, so when the time per job reads high at admission a customer's last
    // calls fall in a later round, where push-out cannot take them, and the burst is first come, first served by
    // customer (one full run: 13 customers with none). The rule itself is proven in fair-queue.test.ts.
    const perCustomer = customers.map((c) => results.filter((x) => x.c === c && x.r.status === 200).length).sort((a, b) => a - b);
    console.log(`      300-call burst: ${JSON.stringify(tally)}; 200s per customer ${perCustomer.join(' ')}`);
  });
});

function codes(results: HttpResult[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const r of results) {
    const error = r.body?.error;
    const k = `${r.status}${error?.code ? ` ${error.code}` : ''}${r.status === 503 ? ` (${String(error?.message).slice(0, 40)})` : ''}`;
    tally[k] = (tally[k] ?? 0) + 1;
  }
  return tally;
}
