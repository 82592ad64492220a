// Work, not requests, is what customers share (issue 27), on the shipped defaults (no throttle, budget, backlog or
// worker override): a free key flooding 40-megapixel images without a face (unbilled 400s that cost the workers
// several selfies each) does not take the service from another customer, and its refused calls spend its fair-use
// allowance like billed ones, plus the worker time they took.
import { expect } from 'chai';
import sharp from 'sharp';
import { portrait } from '../../../dev/harness/sample-images';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import type { HttpResult } from '../../support/http';
import { sendAll } from '../../support/buckets';
import { randomUUID } from 'node:crypto';
import { Deadline } from '../../../shared/deadline';
import { QUEUE_NAMES } from '../../../shared/queues/contracts';
import { WarmUpTime } from '../../../shared/queues/warm-up-time';
import { throttleKey } from '../../../api/http/throttle';

/**
 * 7744 × 5163 (just under the 40 MP limit), flat grey, no face: 235 KB to send, decoded and searched in full by the
 * worker (3–6 selfies' worker time), then 400 invalid_image.
 */
function noFace40Mp(): Promise<Buffer> {
  return sharp({ create: { width: 7744, height: 5163, channels: 3, background: { r: 120, g: 130, b: 140 } } })
    .jpeg({ quality: 80 })
    .toBuffer();
}

describe('POST /v1/check/liveness: one customer never takes the service from another', function () {
  this.timeout(300_000);
  let stack: LivenessStack;
  let face: Buffer;
  let big: Buffer;

  before(async () => {
    stack = await startLivenessStack('fair-share');
    [face, big] = await Promise.all([portrait(), noFace40Mp()]);
  });
  after(() => stack?.stop());

  it("admits before its first outcome with the worker's warm-up time (a cold burst is not admitted blind)", async () => {
    const jobs = await stack.api.deps.jobsFor(QUEUE_NAMES.liveness);
    expect(jobs.serviceTimeMs, 'no call answered yet').to.equal(null);
    const warmUpMs = await new WarmUpTime(stack.api.deps.redis, stack.prefix, QUEUE_NAMES.liveness).read();
    // The engine's least CPU time of a warm run on the fixture (orientation search included).
    expect(warmUpMs).to.be.within(5, 1000);
    const admission = await jobs.assertCapacity(Deadline.after(10_000), { tenant: 'cold-check', jobId: randomUUID() });
    jobs.withdraw(admission);
    expect([admission.serviceMs, admission.expectedWaitMs]).to.deep.equal([warmUpMs, warmUpMs]);
  });

  it("answers another customer's calls within the budget (≥ 95 % × 200) while a free key floods 40 MP images without a face", async () => {
    const flooder = await stack.createAccount('free');
    const polite = await stack.createAccount('starter');
    // One call first, so the API has measured a service time (before that only the count ceiling applies).
    expect((await stack.check(polite.primaryKey, face)).status).to.equal(200);

    let flooding = true;
    const flood: HttpResult[] = [];
    // 24 calls in flight at all times: without fair queueing, the polite calls would wait behind them all.
    const floodLoops = Array.from({ length: 24 }, async () => {
      while (flooding) flood.push(await stack.check(flooder.primaryKey, big));
    });
    // Until the flood has filled the queue (its refused calls are answered at the workers' pace).
    while (flood.length < 24) await new Promise((r) => setTimeout(r, 50));
    const calls = await sendAll(20, 2, () => stack.check(polite.primaryKey, face));
    flooding = false;
    await Promise.all(floodLoops);

    const served = calls.filter((r) => r.status === 200).length;
    const tally = JSON.stringify({ polite: codes(calls), flooder: codes(flood) });
    console.log(`      flood of 40 MP no-face images: ${tally}`);
    expect(served, tally).to.be.at.least(19);
    // Refused (no face), throttled, or shed / timed out (503, uncharged): its jobs wait behind everyone's first ones.
    for (const r of flood) expect(['400 invalid_image', '429 rate_limited', '503'], tally).to.include(r.status === 503 ? '503' : code(r));
    expect(
      flood.some((r) => r.status === 400),
      'the flood was served (its refusals are the work)',
    ).to.equal(true);
    // Unbilled: the flooder's refused calls cost it no credit.
    expect((await stack.usage(flooder.primaryKey)).body.data.total_calls).to.equal(0);
  });

  it("spends the account's fair-use allowance on refused work like on a billed call, plus the worker time beyond a call's", async () => {
    const acc = await stack.createAccount('free');
    // One bucket per account, shared by its keys (issue 41).
    const bucket = throttleKey(stack.prefix, `account:${acc.customerId}`);
    const n = 10;
    const started = Date.now();
    for (let i = 0; i < n; i++) {
      const r = await stack.check(acc.primaryKey, big);
      expect(code(r)).to.equal('400 invalid_image');
    }
    // The debt is charged after the answer (not awaited by it): give it a moment to land.
    await new Promise((r) => setTimeout(r, 200));
    const [tokens, at] = await stack.api.deps.redis.hmget(bucket, 't', 'ts');
    // Reads the shipped throttle defaults (this stack overrides nothing) to tell the level the calls alone leave.
    const { THROTTLE_BURST: burst, THROTTLE_RATE_PER_SEC: rate } = stack.api.deps.config;
    const refilled = ((Number(at) - started) * rate) / 1000;
    expect(Number(tokens), 'at least one token per refused call').to.be.at.most(burst - n + refilled);
    expect((await stack.usage(acc.primaryKey)).body.data.total_calls, 'and no credit').to.equal(0);
  });
});

function code(r: HttpResult): string {
  return `${r.status}${r.body?.error?.code ? ` ${r.body.error.code}` : ''}`;
}

function codes(results: HttpResult[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const r of results) tally[code(r)] = (tally[code(r)] ?? 0) + 1;
  return tally;
}
