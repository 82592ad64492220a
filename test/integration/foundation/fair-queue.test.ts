// Fair queueing across tenants (shared/queues/fair-queue.ts) on real Redis and real BullMQ workers: a tenant's
// n-th waiting job runs after every other tenant's first, admission counts only the jobs ahead of a job in that
// order, a tenant alone still has every worker, a full queue gives a tenant with less waiting the place of the
// latest job of the tenant with the most (answered 503 at once, unrun), and a waiting job whose API process died
// leaves at its deadline.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { jobOutcomeSchema } from '../../../shared/queues/contracts';
import { CapacityError, JobTimeoutError, type Admission, type JobClient } from '../../../shared/queues/job-client';
import { waitUntilReady } from '../../../shared/redis';
import { AT_CAPACITY, TenantWaiting, type FairAdmissionRule } from '../../../shared/queues/fair-queue';
import { Deadline } from '../../../shared/deadline';
import type { JobHandler } from '../../../workers/runtime/job-runner';
import { startTestQueue, type TestQueue } from '../../support/test-queue';

interface Work {
  tenant: string;
  /** Tells one job from another in the start order (default: none). */
  label?: string;
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
  /** Jobs the workers reported as shed (answered unrun after an eviction): metrics count them apart from errors. */
  const shed: string[] = [];

  const handler: JobHandler<Work, { tenant: string }> = async ({ envelope }) => {
    started.push(envelope.input.label ?? envelope.input.tenant);
    mostAtOnce = Math.max(mostAtOnce, ++running);
    const until = performance.now() + envelope.input.computeMs;
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, envelope.input.waitMs));
    running--;
    return { tenant: envelope.input.tenant };
  };

  before(async () => {
    // Two workers (the shipped count on a 2-core machine), both in this process.
    queue = await startTestQueue('fair-queue', {
      outcomeSchema,
      handler,
      workers: 2,
      maxBacklogPerWorker: 500,
      expectedWorkers: 2,
      onFinished: (_outcome, envelope, _cpu, evicted) => {
        if (evicted) shed.push(envelope.requestId);
      },
    });
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

  describe('a full queue', () => {
    // One worker, 100 ms a job, 1 s usable and a 1 s quantum: ten jobs fit, all in the first round.
    const rule: FairAdmissionRule = { serviceMs: 100, scale: 1, workers: 1, usableMs: 1000, maxWaiting: 0, quantumMs: 1000 };
    let tenants: TenantWaiting;
    let n = 0;
    /** A fresh tenant name (and queue of rule tests) per test, so one test's waiting jobs are not the next one's. */
    const name = (t: string) => `${t}-${n}`;
    beforeEach(async () => {
      n++;
      const redis = queue.conn('producer');
      await waitUntilReady(redis);
      tenants = new TenantWaiting(redis, queue.prefix, `${queue.queueName}-rule-${n}`);
    });
    /** Admits jobs of `tenant` while they fit; their ids, in order of admission (and of deadline). */
    async function fill(tenant: string, max = 20): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < max; i++) {
        const id = randomUUID();
        const a = await tenants.admit(tenant, id, Date.now() + 60_000 + i, rule);
        if (a.verdict !== 'admitted') break;
        ids.push(id);
      }
      return ids;
    }

    it('gives a tenant with less waiting the place of the latest waiting job of the tenant with the most, until both wait alike', async () => {
      const heavy = await fill(name('heavy'));
      expect(heavy).to.have.length(10);
      // Its own next job finds no one with more waiting than it: refused.
      expect((await tenants.admit(name('heavy'), randomUUID(), Date.now() + 60_000, rule)).verdict).to.equal('expected_wait');
      const light: string[] = [];
      const evicted: string[] = [];
      for (let i = 0; i < 8; i++) {
        const id = randomUUID();
        const a = await tenants.admit(name('light'), id, Date.now() + 60_000, rule);
        if (a.verdict !== 'admitted') break;
        expect(a.evicted, `light's job ${i + 1}`).to.deep.equal([{ tenant: name('heavy'), jobId: heavy[heavy.length - 1 - i] }]);
        light.push(id);
        evicted.push(a.evicted[0]!.jobId);
      }
      // Five each: a sixth would leave the heavy tenant with less waiting than the light one.
      expect(light).to.have.length(5);
      for (const id of evicted) expect(await tenants.isEvicted(id)).to.equal(true);
      // A worker taking an evicted job hears that it must not run it; one taking a kept job, that it may.
      expect(await tenants.take(name('heavy'), evicted[0]!)).to.deep.equal({ evicted: true });
      expect(await tenants.take(name('heavy'), heavy[0]!)).to.deep.equal({ evicted: false });
    });

    it("never takes a tenant's only waiting job", async () => {
      const solo = { ...rule, usableMs: 150 };
      expect((await tenants.admit(name('solo'), randomUUID(), Date.now() + 60_000, solo)).verdict).to.equal('admitted');
      const other = await tenants.admit(name('other'), randomUUID(), Date.now() + 60_000, solo);
      expect(other.verdict).to.equal('expected_wait');
      expect(other.evicted).to.deep.equal([]);
    });

    it('takes as many places as make a job fit, at most a quantum of work per worker, or none', async () => {
      // Four tenants with five 100 ms jobs each, a 500 ms quantum: 2,000 ms of waiting work, all in the first round.
      const wide = { ...rule, usableMs: 3000, quantumMs: 500 };
      for (let h = 0; h < 4; h++) {
        for (let i = 0; i < 5; i++) expect((await tenants.admit(name(`h${h}`), randomUUID(), Date.now() + 60_000 + i, wide)).verdict).to.equal('admitted');
      }
      // 2,100 ms expected against 1,500: six jobs (600 ms) would have to go, more than the quantum: none goes.
      const refused = await tenants.admit(name('light'), randomUUID(), Date.now() + 60_000, { ...wide, usableMs: 1500 });
      expect(refused).to.deep.include({ verdict: 'expected_wait', evicted: [] });
      // Against 1,700: four jobs, one from each of the four (each in turn has the most).
      const admitted = await tenants.admit(name('light'), randomUUID(), Date.now() + 60_000, { ...wide, usableMs: 1700 });
      expect(admitted.verdict).to.equal('admitted');
      expect(admitted.evicted.map((e) => e.tenant).sort()).to.deep.equal([0, 1, 2, 3].map((h) => name(`h${h}`)));
    });

    it('answers the evicted job 503 at capacity ahead of the jobs queued before it, without running it', async () => {
      for (let i = 0; i < 4; i++) await submit('warm', 50);
      // A budget of 60 jobs' time: a quantum of 6, so every tenant's few jobs below are in the first round.
      const budgetMs = Math.ceil(client.serviceTimeMs! * 60);
      const counted: Admission[] = [];
      /** Admitted and counted as waiting, never enqueued (a body "still on its way"); the admission or its refusal. */
      const admit = (tenant: string) =>
        client.assertCapacity(Deadline.after(budgetMs), { tenant, jobId: randomUUID() }).then(
          (a) => (counted.push(a), a),
          (e: unknown) => e as CapacityError,
        );
      for (const r of queue.runners) await r.worker.pause();
      try {
        // Three jobs queued first; then a tenant with four waiting, its latest enqueued: the victim.
        const early = Array.from({ length: 3 }, (_, i) => runJob(`early-${n}`, `early-${i}`, budgetMs));
        for (let i = 0; i < 3; i++) await admit(`heavy-${n}`);
        // Deadlines are whole milliseconds, and a tie goes to the greatest id: the victim's must be strictly later.
        await new Promise((r) => setTimeout(r, 5));
        const victim = runJob(`heavy-${n}`, 'victim', budgetMs);
        await new Promise((r) => setTimeout(r, 100));
        // Tenants with three jobs each fill the queue; the first job that does not fit takes the victim's place.
        let taker: Admission | CapacityError | undefined;
        for (let t = 0; !taker && t < 1000; t++) {
          for (let i = 0; i < 3; i++) {
            const a = await admit(`filler-${n}-${t}`);
            if (a instanceof CapacityError || a.evicted?.length) {
              taker = a;
              break;
            }
          }
        }
        expect(taker).not.to.be.instanceOf(CapacityError);
        expect((taker as Admission).evicted).to.deep.equal([{ tenant: `heavy-${n}`, jobId: (await victim).requestId }]);
        for (const r of queue.runners) await r.worker.resume();
        const answered = await (await victim).result;
        const earlyStarted = started.filter((s) => s.startsWith('early-')).length;
        // Its outcome is a refusal like one at admission (not a timeout), which the API answers 503 and bills nothing.
        expect(answered).to.deep.include({ ok: false, error: { code: 'service_unavailable', message: AT_CAPACITY, httpStatus: 503 } });
        // Moved to the front: answered while the early jobs still ran or waited (two workers), and never run.
        expect(earlyStarted).to.be.at.most(2);
        for (const e of early) expect(await (await e).result).to.include({ ok: true });
        expect(started).not.to.include('victim');
        expect(shed).to.deep.equal([(await victim).requestId]);
      } finally {
        for (const r of queue.runners) await r.worker.resume();
        for (const a of counted) client.withdraw(a);
      }
    });
  });

  /** Admits and enqueues one job of `tenant` labelled `label`: its id, and its outcome or the error it ended with. */
  async function runJob(tenant: string, label: string, budgetMs: number) {
    const deadline = Deadline.after(budgetMs);
    const requestId = randomUUID();
    const admission = await client.assertCapacity(deadline, { tenant, jobId: requestId });
    const input = { tenant, label, computeMs: 50, waitMs: 0 };
    return { requestId, result: client.run({ requestId, input, payload: Buffer.from('x'), deadline, admission }).catch((err: unknown) => err) };
  }

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
