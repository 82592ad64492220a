// Fair queueing across tenants (shared/queues/fair-queue.ts) on real Redis and real BullMQ workers: a tenant's
// n-th waiting job runs after every other tenant's first, admission counts only the jobs ahead of a job in that
// order, a tenant alone still has every worker, and a waiting job whose API process died leaves at its deadline.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { jobOutcomeSchema } from '../../../shared/queues/contracts';
import { CapacityError, JobTimeoutError, type JobClient } from '../../../shared/queues/job-client';
import { waitUntilReady } from '../../../shared/redis';
import { TenantWaiting } from '../../../shared/queues/fair-queue';
import { Deadline } from '../../../shared/deadline';
import type { JobHandler } from '../../../workers/runtime/job-runner';
import { startTestQueue, type TestQueue } from '../../support/test-queue';

interface Work {
  tenant: string;
  /** Computing (the estimate measures CPU time, like the real engines') or waiting (so two workers overlap). */
  computeMs: number;
  waitMs: number;
}
const outcomeSchema = jobOutcomeSchema(z.object({ tenant: z.string() }));

describe('fair queueing across tenants', function () {
  this.timeout(60_000);
  let queue: TestQueue<Work, { tenant: string }>;
  let client: JobClient;
  /** Tenants in the order their jobs started, and the most jobs that ran at once. */
  let started: string[] = [];
  let running = 0;
  let mostAtOnce = 0;

  const handler: JobHandler<Work, { tenant: string }> = async ({ envelope }) => {
    started.push(envelope.input.tenant);
    mostAtOnce = Math.max(mostAtOnce, ++running);
    const until = performance.now() + envelope.input.computeMs;
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, envelope.input.waitMs));
    running--;
    return { tenant: envelope.input.tenant };
  };

  before(async () => {
    // Two workers (the shipped count on a 2-core machine), both in this process.
    queue = await startTestQueue('fair-queue', { outcomeSchema, handler, workers: 2, maxBacklogPerWorker: 500, expectedWorkers: 2 });
    client = queue.clients[0]!;
  });

  after(() => queue.close());

  beforeEach(() => {
    started = [];
    mostAtOnce = 0;
  });

  /**
   * Admits and runs one job of `tenant`; a refused admission's CapacityError and a timeout are returned, not thrown
   * (both workers compute in this one process, so admitted flood jobs may outlive their short budgets).
   */
  async function submit(tenant: string, computeMs: number, budgetMs = 20_000, waitMs = 0) {
    const deadline = Deadline.after(budgetMs);
    const requestId = randomUUID();
    let admission;
    try {
      admission = await client.assertCapacity(deadline, { tenant, jobId: requestId });
    } catch (err) {
      if (err instanceof CapacityError) return err;
      throw err;
    }
    return client.run({ requestId, input: { tenant, computeMs, waitMs }, payload: Buffer.from('x'), deadline, admission }).catch((err: unknown) => {
      if (err instanceof JobTimeoutError) return err;
      throw err;
    });
  }

  it("runs a polite tenant's first job before a flooding tenant's backlog beyond its first quantum", async () => {
    // Measured first (about 50 ms a job), so the flood's work is known.
    for (let i = 0; i < 4; i++) await submit('warm', 50);
    // A 3 s budget: a 300 ms quantum, about six of the flood's jobs per round.
    const flood = Array.from({ length: 20 }, () => submit('flooder', 50, 3000));
    // Once the flood is queued (admission counts it at once), the polite tenant's one job.
    await new Promise((r) => setTimeout(r, 100));
    const polite = submit('polite', 50, 3000);
    await Promise.all([...flood, polite]);
    const place = started.indexOf('polite');
    // Before it: the warm-up, the jobs the workers had taken and the flood's first round; never its whole backlog.
    expect(place - 4, started.join(',')).to.be.within(0, 10);
    expect(started.filter((t) => t === 'flooder')).to.have.length(20);
  });

  it("sheds a flooding tenant's late jobs at admission: the jobs ahead of them in fair order would not fit the budget", async () => {
    // Measure the service time first (about 100 ms a job).
    for (let i = 0; i < 4; i++) await submit('warm', 100);
    const serviceMs = client.serviceTimeMs!;
    // Only that an estimate exists: it is built from CPU time and the clock/CPU floor, so on a busy machine it can
    // read well below the jobs' 100 ms; the budget below is set from it, whatever it is.
    expect(serviceMs).to.be.within(1, 1000);
    // A budget of about ten jobs' time per worker: the flooder's 60 cannot all fit, one polite job can.
    const budgetMs = Math.ceil(serviceMs * 10);
    const flood = await Promise.all(Array.from({ length: 60 }, () => submit('flooder', 100, budgetMs)));
    const shed = flood.filter((r): r is CapacityError => r instanceof CapacityError);
    expect(shed.length, 'the flood is shed at admission').to.be.greaterThan(20);
    for (const r of shed) expect(r.admission.rank).to.be.greaterThan(1);
  });

  it("meanwhile admits a polite tenant's first job, which counts at most a quantum of work per busy tenant ahead of it, and answers it", async () => {
    for (let i = 0; i < 4; i++) await submit('warm', 100);
    const budgetMs = Math.ceil(client.serviceTimeMs! * 10);
    const flood = Array.from({ length: 60 }, () => submit('flooder', 100, budgetMs));
    await new Promise((r) => setTimeout(r, 100));
    const polite = await submit('polite', 100, budgetMs);
    expect(polite, 'admitted and answered').to.include({ ok: true });
    await Promise.all(flood);
  });

  it("estimates each tenant's job at that tenant's own cost: a dear tenant's flood does not make a cheap tenant's job look dear", async () => {
    for (let i = 0; i < 6; i++) await submit('dear', 300);
    for (let i = 0; i < 12; i++) await submit('cheap', 20);
    const serviceMs = client.serviceTimeMs!;
    const cheap = await client.assertCapacity(Deadline.after(20_000), { tenant: 'cheap', jobId: randomUUID() });
    const dear = await client.assertCapacity(Deadline.after(20_000), { tenant: 'dear', jobId: randomUUID() });
    client.withdraw(cheap);
    client.withdraw(dear);
    expect(cheap.expectedWaitMs, `average ${serviceMs} ms`).to.be.below(serviceMs);
    // The dear one waits for the cheap one's job (admitted first, half a worker's share of it) and its own.
    expect(dear.expectedWaitMs).to.be.above(serviceMs);
    expect(dear.expectedWaitMs! - cheap.expectedWaitMs!).to.be.above(150);
  });

  it('lets a tenant alone use every worker', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => submit('alone', 0, 20_000, 300)));
    for (const r of results) expect(r).to.include({ ok: true });
    expect(mostAtOnce).to.equal(2);
  });

  it("drops a waiting job whose API process died at the job's deadline: the tenant's count heals by itself", async () => {
    const redis = queue.conn('producer');
    await waitUntilReady(redis);
    const tenants = new TenantWaiting(redis, queue.prefix, queue.queueName);
    const rule = { serviceMs: 10, scale: 1, workers: 2, usableMs: 10_000, maxWaiting: 0, quantumMs: 1000 };
    // Admitted, then never enqueued nor withdrawn (its process "died"): it counts until its deadline.
    expect((await tenants.admit('crashed', randomUUID(), Date.now() + 300, rule)).rank).to.equal(1);
    expect((await tenants.admit('crashed', randomUUID(), Date.now() + 1000, rule)).rank).to.equal(2);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await tenants.admit('crashed', randomUUID(), Date.now() + 1000, rule)).rank).to.equal(1);
  });
});
