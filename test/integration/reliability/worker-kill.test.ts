import { expect } from 'chai';
import { Queue } from 'bullmq';
import { createRedis, closeRedis } from '../../../shared/redis';
import { QUEUE_NAMES } from '../../../shared/queues/contracts';
import { portrait } from '../../../dev/harness/sample-images';
import type { ServiceProcess } from '../../../dev/harness/processes';
import { spawnService } from '../../../dev/harness/processes';
import { eventually, postLiveness, PrivateDeployment, serverMs, startServices, type Ledger } from '../../../dev/harness/harness';

// kill -9 of a liveness worker while requests wait: the API answers 503 inside its budget, charges nothing for
// them, recovers once a new worker process starts (whose drainer writes the usage events the dead one left in
// the outbox), and the killed worker's half-done job is never billed
// (BullMQ hands it back after the lock expires; the new worker skips it because its deadline has passed).
describe('Faults: a liveness worker killed with SIGKILL in the middle of jobs', function () {
  this.timeout(110_000);
  const BUDGET_MS = 3000;
  let deployment: PrivateDeployment;
  let ledger: Ledger;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let replacement: ServiceProcess | undefined;
  let env: Record<string, string>;
  let account: { customerId: string; key: string };
  let face: string;
  let queue: Queue;
  let queueRedis: ReturnType<typeof createRedis>;
  const outcomes: Array<{ status: number; ms: number }> = [];

  before(async () => {
    // A short budget so the killed worker's waiting calls give up within the test; a backlog ceiling of 100 (not 500) because the test counts what is shed while no worker is connected.
    deployment = await PrivateDeployment.start('kill', { LIVENESS_BUDGET_MS: String(BUDGET_MS), MAX_BACKLOG_PER_WORKER: '100' });
    env = deployment.env;
    const started = await startServices(['liveness-api', 'liveness-worker'], env);
    api = started[0]!;
    worker = started[1]!;
    ledger = await deployment.openLedger();
    queueRedis = createRedis(env.REDIS_URL!, 'worker', 'worker-kill-test');
    queue = new Queue(QUEUE_NAMES.liveness, { connection: queueRedis, prefix: deployment.prefix });
    account = await ledger.account('business');
    face = (await portrait()).toString('base64');
    // Warm the worker (first inference allocates the sessions' buffers).
    expect((await postLiveness(api.port, account.key, face)).status).to.equal(200);
    outcomes.push({ status: 200, ms: 0 });
  });

  after(async () => {
    await queue?.close();
    if (queueRedis) await closeRedis(queueRedis);
    await deployment?.stop([api, worker, replacement]);
  });

  it('answers the waiting requests 503 within the budget and does not charge them', async () => {
    const inFlight = Array.from({ length: 10 }, () => postLiveness(api.port, account.key, face));
    // Kill right after the first answer of the batch, once the worker holds the next job (BullMQ's active list):
    // on a busy machine the API may still be reading the other photos, and a worker killed between jobs leaves
    // no job of its own behind (the last test needs one).
    await Promise.race(inFlight);
    await eventually(async () => (await queue.getActiveCount()) > 0, 10_000, 2);
    await worker.kill9();
    const results = await Promise.all(inFlight);
    outcomes.push(...results);
    const statuses = results.map((r) => r.status);
    expect(
      statuses.every((s) => s === 200 || s === 503),
      statuses.join(','),
    ).to.equal(true);
    expect(statuses.filter((s) => s === 503).length).to.be.greaterThan(0);
    for (const r of results.filter((x) => x.status === 503)) {
      expect(r.body.error.code).to.equal('service_unavailable');
      // Waited out the budget for the dead worker, or shed at admission behind the queued batch; never a 500.
      expect(r.body.error.message).to.match(/No result within the time budget|at capacity/);
      expect(r.retryAfter).to.match(/^\d+$/);
      // Budget + 1 s is the rule, timed by the API itself; +1.5 s because on a busy 2-core machine the API process can wait that long for a CPU.
      expect(await serverMs(api, r.requestId)).to.be.at.most(BUDGET_MS + 1000 + 1500);
    }
    // Billing: one credit per 200, and nothing left reserved. The usage events of these calls wait in the outbox
    // until a worker's drainer runs again; the last test counts them.
    const ok = outcomes.filter((o) => o.status === 200).length;
    const credits = await ledger.credits(account.customerId);
    expect(credits).to.deep.equal({ used: ok, calls: ok, pending: [] });
  });

  it('sheds with 503 at once while no worker is connected, without charging', async () => {
    // BullMQ sees the dead worker's connections close; the API stops queuing work nobody will take.
    const shed = (r: Awaited<ReturnType<typeof postLiveness>>) => r.status === 503 && /No worker is running/.test(r.body?.error?.message ?? '');
    await eventually(async () => {
      const r = await postLiveness(api.port, account.key, face);
      outcomes.push(r);
      return shed(r);
    }, 15_000);
    // Refused at admission, before anything is queued: not a wait for the budget to run out.
    const r = await postLiveness(api.port, account.key, face);
    outcomes.push(r);
    expect(r.status).to.equal(503);
    expect(r.body.error.code).to.equal('service_unavailable');
    expect(r.body.error.message).to.match(/No worker is running/);
    expect(r.retryAfter).to.equal('5');
    expect(await ledger.credits(account.customerId)).to.include({ used: outcomes.filter((o) => o.status === 200).length });
  });

  it('recovers by itself once a new worker process starts, and never bills the killed job twice', async () => {
    replacement = await spawnService('liveness-worker', env);
    await replacement.ready(90_000);
    await eventually(
      async () => {
        const r = await postLiveness(api.port, account.key, face);
        outcomes.push(r);
        return r.status === 200;
      },
      20_000,
      500,
    );
    const after = await Promise.all(Array.from({ length: 4 }, () => postLiveness(api.port, account.key, face)));
    expect(after.map((r) => r.status)).to.deep.equal([200, 200, 200, 200]);

    // The killed job's lock expires (lockDuration 15 s); the stalled-job check gives it to the new worker,
    // which must skip it (deadline passed) rather than run and bill it.
    await eventually(async () => replacement!.logs.some((l) => l.includes('deadline passed')), 70_000, 1000);
    const usedBefore = (await ledger.credits(account.customerId)).used;
    expect(await ledger.usageEvents(account.customerId)).to.equal(usedBefore);
    const credits = await ledger.credits(account.customerId);
    expect(credits.pending).to.deep.equal([]);
    expect(credits.calls).to.equal(credits.used);
    expect(credits.used).to.equal(outcomes.filter((o) => o.status === 200).length + 4);
    expect(replacement.proc.exitCode).to.equal(null);
  });
});
