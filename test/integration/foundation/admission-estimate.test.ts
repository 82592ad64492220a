// The admission estimate (shared/queues/admission.ts, service-time.ts) is fed by the cycle each worker reports
// with its outcome (workers/runtime/job-runner.ts): no sample from a worker's warm-up jobs (nor from a job answered
// 503 unrun, which does not even stand in before the first sample), a sample from a job its
// handler refused (the work was done), and a backlog measured settle to settle, one job's work per cycle, not the
// round trip the API sees. Before any outcome, the workers' warm-up time stands in (shared/queues/warm-up-time.ts).
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { jobOutcomeSchema } from '../../../shared/queues/contracts';
import { InvalidInputError } from '../../../shared/errors';
import type { JobClient } from '../../../shared/queues/job-client';
import { Deadline } from '../../../shared/deadline';
import { WARM_UP_JOBS, type JobHandler } from '../../../workers/runtime/job-runner';
import { CapacityError } from '../../../shared/queues/admission';
import { WarmUpTime } from '../../../shared/queues/warm-up-time';
import { AT_CAPACITY, TenantWaiting } from '../../../shared/queues/fair-queue';
import { startTestQueue, type TestQueue } from '../../support/test-queue';
import { waitUntilReady } from '../../../shared/redis';

interface SleepInput {
  sleepMs: number;
  /** Compute (keep the CPU busy) this long, like the real engines, instead of waiting. */
  computeMs?: number;
  reject?: boolean;
}
const outcomeSchema = jobOutcomeSchema(z.object({ slept: z.number() }));

/** Computes, sleeps, then answers or (like an image without a face) refuses after the work. */
const sleeper: JobHandler<SleepInput, { slept: number }> = async ({ envelope }) => {
  const until = performance.now() + (envelope.input.computeMs ?? 0);
  while (performance.now() < until);
  await new Promise((r) => setTimeout(r, envelope.input.sleepMs));
  if (envelope.input.reject) throw new InvalidInputError('invalid_image', 'rejected by the test processor');
  return { slept: envelope.input.sleepMs };
};

describe("admission estimate from the workers' cycle times", () => {
  let client: JobClient;
  let queue: TestQueue<SleepInput, { slept: number }>;

  before(async () => {
    queue = await startTestQueue('admission', { outcomeSchema, handler: sleeper, expectedWorkers: 1 });
    client = queue.clients[0]!;
  });

  after(() => queue.close());

  const run = (input: SleepInput) => client.run({ requestId: randomUUID(), input, payload: Buffer.from('x'), deadline: Deadline.after(10_000) });

  it('takes nothing from a job answered 503 before its handler ran: an evicted job did no work to stand in', async () => {
    expect(client.serviceTimeMs).to.equal(null);
    const redis = queue.conn('producer');
    await waitUntilReady(redis); // a fresh fail-fast connection (a cluster's takes a few round trips to be ready)
    const tenants = new TenantWaiting(redis, queue.prefix, queue.queueName);
    const runner = queue.runners[0]!;
    // Counted as waiting without a job behind them; taken out again below, so the next tests see an empty queue.
    const bystanders = { victim: randomUUID(), other: randomUUID() };
    await runner.worker.pause();
    try {
      // Two waiting jobs of one tenant, the later one enqueued; another tenant's job that does not fit takes its place.
      const rule = { serviceMs: 100, scale: 1, workers: 1, usableMs: 250, maxWaiting: 0, quantumMs: 1000 };
      await tenants.admit('victim', bystanders.victim, Date.now() + 5_000, rule);
      const deadline = Deadline.after(10_000);
      const requestId = randomUUID();
      const admission = await client.assertCapacity(deadline, { tenant: 'victim', jobId: requestId });
      let queued!: () => void;
      const inQueue = new Promise<void>((resolve) => (queued = resolve));
      const victim = client.run({ requestId, input: { sleepMs: 0 }, payload: Buffer.from('x'), deadline, admission, onQueued: queued });
      await inQueue;
      expect((await tenants.admit('other', bystanders.other, Date.now() + 5_000, rule)).evicted).to.deep.equal([{ tenant: 'victim', jobId: requestId }]);
      await runner.worker.resume();
      expect(await victim).to.deep.include({ ok: false, error: { code: 'service_unavailable', message: AT_CAPACITY, httpStatus: 503 } });
      expect(client.serviceTimeMs).to.equal(null);
    } finally {
      await runner.worker.resume();
      await Promise.all(Object.entries(bystanders).map(([tenant, jobId]) => tenants.leave(tenant, jobId)));
    }
  });

  it("lets a worker's warm-up jobs stand in until the first cycle sample, which replaces them", async () => {
    expect(client.serviceTimeMs).to.equal(null);
    for (let i = 0; i < WARM_UP_JOBS; i++) await run({ sleepMs: 400 });
    expect(client.serviceTimeMs).to.be.at.least(400);
    await run({ sleepMs: 40 });
    // Replaced, not averaged in: an EWMA step from 400 would stay above 300.
    expect(client.serviceTimeMs).to.be.within(40, 300);
  });

  it('takes a sample from a job its handler refused after the work, as from an answered one', async () => {
    for (let i = 0; i < 10; i++) await run({ sleepMs: 0, computeMs: 40 });
    const before = client.serviceTimeMs!;
    // A refusal that took 300 ms of CPU (a 40 MP image without a face): the estimate moves a fifth of the way to it.
    const outcome = await run({ sleepMs: 0, computeMs: 300, reject: true });
    expect(outcome.ok).to.equal(false);
    expect(client.serviceTimeMs).to.be.greaterThan(before + 30);
    // Back to cheap jobs for the next test.
    for (let i = 0; i < 15; i++) await run({ sleepMs: 0, computeMs: 40 });
  });

  it('measures a backlog settle to settle: one job of work per cycle, not the round trip', async () => {
    // Twelve 40 ms computations at once on one worker: the last one's round trip holds eleven others (~480 ms),
    // its cycle only its own.
    await Promise.all(Array.from({ length: 12 }, () => run({ sleepMs: 0, computeMs: 40 })));
    expect(client.serviceTimeMs).to.be.within(30, 120);
    const admission = await client.assertCapacity(Deadline.after(10_000), { tenant: 'a', jobId: randomUUID() });
    client.withdraw(admission);
    expect(admission.serviceMs).to.equal(client.serviceTimeMs);
    // Nothing ahead: its own time (whole milliseconds).
    expect(admission.expectedWaitMs).to.be.closeTo(client.serviceTimeMs!, 1);
  });

  it("admits a cold burst with the workers' warm-up time before the first outcome: what would not fit is refused at once", async () => {
    const cold = await startTestQueue('admission-cold', { outcomeSchema, handler: sleeper, expectedWorkers: 1 });
    try {
      const api = cold.clients[0]!;
      const waiting = new TenantWaiting(cold.producer, cold.prefix, cold.queueName);
      const burst = async () => {
        const admitted = [];
        let refused = 0;
        for (let i = 0; i < 8; i++) {
          try {
            admitted.push(await api.assertCapacity(Deadline.after(2_000), { tenant: 'cold', jobId: randomUUID() }));
          } catch (err) {
            expect(err).to.be.instanceOf(CapacityError);
            refused++;
          }
        }
        // Out of the waiting count before the next burst (withdraw() does not wait for Redis; leave() does).
        await Promise.all(admitted.map((a) => waiting.leave(a.tenant, a.jobId)));
        return { admitted, refused };
      };
      // Nothing to go by: every job is admitted (only a count ceiling could refuse one).
      const blind = await burst();
      expect([blind.admitted.length, blind.refused]).to.deep.equal([8, 0]);
      // A worker warmed up at 500 ms a job: one worker does three in the 1.8 s the budget leaves for waiting.
      await new WarmUpTime(cold.producer, cold.prefix, cold.queueName).publish(500);
      const estimated = await burst();
      expect(estimated.admitted.map((a) => a.expectedWaitMs)).to.deep.equal([500, 1000, 1500]);
      expect(estimated.refused).to.equal(5);
      expect(api.serviceTimeMs).to.equal(500);
      // A second worker warmed up slower (it started beside the first): the lower figure stands.
      await new WarmUpTime(cold.producer, cold.prefix, cold.queueName).publish(900);
      expect(await new WarmUpTime(cold.producer, cold.prefix, cold.queueName).read()).to.equal(500);
    } finally {
      await cold.close();
    }
  });
});
