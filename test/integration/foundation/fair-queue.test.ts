// Fair queueing across tenants (shared/queues/fair-queue.ts) on real Redis and real BullMQ workers: a tenant's
// n-th waiting job runs after every other tenant's first, admission counts only the jobs ahead of a job in that
// order, a tenant alone still has every worker, a full queue gives a tenant with less waiting the place of the
// latest job of the tenant with the most (answered 503 at once, unrun), and a waiting job whose API process died
// leaves at its deadline.
import { expect } from 'chai';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { eventually } from '../../../dev/harness/harness';
import { jobOutcomeSchema } from '../../../shared/queues/contracts';
import { JobTimeoutError, type JobClient } from '../../../shared/queues/job-client';
import { CapacityError } from '../../../shared/queues/admission';
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
    });
    client = queue.clients[0]!;
  });

  after(() => queue.close());

  beforeEach(() => {
    started = [];
    mostAtOnce = 0;
  });

  interface JobSpec {
    computeMs?: number;
    waitMs?: number;
    /** The request's budget from now (default 20 s), or its deadline. */
    budgetMs?: number;
    deadline?: Deadline;
    /** Tells this job from its tenant's others in the start order. */
    label?: string;
  }

  /**
   * Admits one job of `tenant` and enqueues it; resolves once it is in the queue (or refused), with its id and its
   * outcome still to come. A refused admission's CapacityError and a timeout are the outcome, not thrown (both
   * workers compute in this one process, so admitted flood jobs may outlive their short budgets).
   */
  async function enqueue(tenant: string, job: JobSpec = {}, via: JobClient = client) {
    const deadline = job.deadline ?? Deadline.after(job.budgetMs ?? 20_000);
    const requestId = randomUUID();
    let admission;
    try {
      admission = await via.assertCapacity(deadline, { tenant, jobId: requestId });
    } catch (err) {
      if (err instanceof CapacityError) return { requestId, admission: null, outcome: Promise.resolve(err) };
      throw err;
    }
    const input = { tenant, computeMs: job.computeMs ?? 50, waitMs: job.waitMs ?? 0, ...(job.label ? { label: job.label } : {}) };
    let queued!: () => void;
    const inQueue = new Promise<void>((resolve) => (queued = resolve));
    const outcome = via.run({ requestId, input, payload: Buffer.from('x'), deadline, admission, onQueued: queued }).catch((err: unknown) => {
      if (err instanceof JobTimeoutError) return err;
      throw err;
    });
    await Promise.race([inQueue, outcome]);
    return { requestId, admission, outcome };
  }

  /** Admits and runs one job of `tenant`: its outcome, its refusal at admission or its timeout. */
  async function submit(tenant: string, computeMs: number, budgetMs = 20_000, waitMs = 0) {
    return (await enqueue(tenant, { computeMs, budgetMs, waitMs })).outcome;
  }

  const pauseWorkers = async (q: TestQueue<Work, { tenant: string }> = queue) => {
    for (const r of q.runners) await r.worker.pause();
  };
  const resumeWorkers = async (q: TestQueue<Work, { tenant: string }> = queue) => {
    for (const r of q.runners) await r.worker.resume();
  };

  it("runs a polite tenant's first job before a flooding tenant's backlog beyond its first quantum", async () => {
    // Measured first (about 50 ms a job), so the flood's work is known.
    for (let i = 0; i < 4; i++) await submit('warm', 50);
    // A 3 s budget: a 300 ms quantum, about six of the flood's jobs per round. The whole flood is queued before the
    // polite tenant's one job while the workers are held; then one worker takes them, so they start in queue order.
    await pauseWorkers();
    const flood: Array<Awaited<ReturnType<typeof enqueue>>> = [];
    try {
      for (let i = 0; i < 20; i++) flood.push(await enqueue('flooder', { computeMs: 50, budgetMs: 3000 }));
      const polite = await enqueue('polite', { computeMs: 50, budgetMs: 3000 });
      await queue.runners[0]!.worker.resume();
      await Promise.all([...flood.map((j) => j.outcome), polite.outcome]);
    } finally {
      await resumeWorkers();
    }
    // Before it: the warm-up and the flood's first round (its first quantum of work); never its whole backlog.
    const firstRound = flood.filter((j) => j.admission?.round === 1).length;
    expect(firstRound).to.be.within(1, 19);
    expect(started.indexOf('polite') - 4, started.join(',')).to.equal(firstRound);
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
    // The whole flood admitted (each counts as waiting once admitted), then the polite tenant's job.
    const flood = await Promise.all(Array.from({ length: 60 }, () => enqueue('flooder', { computeMs: 100, budgetMs })));
    const polite = await submit('polite', 100, budgetMs);
    expect(polite, 'admitted and answered').to.include({ ok: true });
    await Promise.all(flood.map((j) => j.outcome));
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
      // A queue of its own whose backlog ceiling (ten waiting jobs, instead of the time rule's hundreds) is what is
      // full, so exactly one job has to give its place, whatever the time per job reads on this machine.
      const jobsShed: Array<{ requestId: string; startedBefore: string[] }> = [];
      const full = await startTestQueue('fair-queue-full', {
        outcomeSchema,
        handler,
        workers: 2,
        maxBacklogPerWorker: 5,
        expectedWorkers: 2,
        onFinished: (_outcome, envelope, _cpu, evicted) => {
          if (evicted) jobsShed.push({ requestId: envelope.requestId, startedBefore: [...started] });
        },
      });
      const via = full.clients[0]!;
      const jobs = new Queue(full.queueName, { connection: full.producer, prefix: full.prefix });
      try {
        for (let i = 0; i < 4; i++) await (await enqueue('warm', { computeMs: 50 }, via)).outcome;
        await pauseWorkers(full);
        // Three jobs queued first; then a tenant with four waiting, of which only its latest is enqueued: the victim.
        const early = [];
        for (let i = 0; i < 3; i++) early.push(await enqueue('early', { label: `early-${i}` }, via));
        const heavy: Deadline[] = [];
        for (let i = 0; i < 3; i++) {
          heavy.push(Deadline.after(20_000));
          // Admitted and counted as waiting, never enqueued (a body "still on its way").
          await via.assertCapacity(heavy[i]!, { tenant: 'heavy', jobId: randomUUID() });
        }
        // A tenant's latest job is the one with the latest deadline: one millisecond after its others'.
        const victim = await enqueue('heavy', { label: 'victim', deadline: Deadline.after(1, heavy[2]!.at) }, via);
        // Another tenant's three jobs make ten waiting; the next tenant's first job takes the victim's place.
        for (let i = 0; i < 3; i++) await via.assertCapacity(Deadline.after(20_000), { tenant: 'filler', jobId: randomUUID() });
        const taker = await via.assertCapacity(Deadline.after(20_000), { tenant: 'taker', jobId: randomUUID() });
        expect(taker.evicted).to.deep.equal([{ tenant: 'heavy', jobId: victim.requestId }]);
        // The evicting process moves it to the front of the queue; then one worker takes the jobs in queue order.
        await eventually(async () => (await jobs.getJobState(victim.requestId)) === 'waiting', 10_000, 10);
        await full.runners[0]!.worker.resume();
        // Its outcome is a refusal like one at admission (not a timeout), which the API answers 503 and bills nothing.
        expect(await victim.outcome).to.deep.include({ ok: false, error: { code: 'service_unavailable', message: AT_CAPACITY, httpStatus: 503 } });
        // Answered before any of the jobs queued before it started, and never run.
        expect(jobsShed).to.deep.equal([{ requestId: victim.requestId, startedBefore: ['warm', 'warm', 'warm', 'warm'] }]);
        for (const e of early) expect(await e.outcome).to.include({ ok: true });
        expect(started).not.to.include('victim');
      } finally {
        await jobs.close();
        await resumeWorkers(full);
        await full.close();
      }
    });
  });

  it("drops a waiting job whose API process died at the job's deadline: the tenant's count heals by itself", async () => {
    const redis = queue.conn('producer');
    await waitUntilReady(redis);
    const tenants = new TenantWaiting(redis, queue.prefix, queue.queueName);
    const rule = { serviceMs: 10, scale: 1, workers: 2, usableMs: 10_000, maxWaiting: 0, quantumMs: 1000 };
    // Admitted, then never enqueued nor withdrawn (its process "died"): it counts until its deadline. The
    // admissions' clock is moved rather than waited for.
    const t0 = Date.now();
    const minute = 60_000;
    expect((await tenants.admit('crashed', randomUUID(), t0 + minute, rule, t0)).rank).to.equal(1);
    expect((await tenants.admit('crashed', randomUUID(), t0 + 2 * minute, rule, t0 + minute - 1)).rank).to.equal(2);
    // At the first one's deadline it no longer counts; at the others', neither do they.
    expect((await tenants.admit('crashed', randomUUID(), t0 + 3 * minute, rule, t0 + minute)).rank).to.equal(2);
    expect((await tenants.admit('crashed', randomUUID(), t0 + 4 * minute, rule, t0 + 3 * minute)).rank).to.equal(1);
  });
});
