import { expect } from 'chai';
import { portrait } from '../../../dev/harness/sample-images';
import type { ServiceProcess } from '../../../dev/harness/processes';
import { eventually, postLiveness, PrivateDeployment, serverMs, sleep, startServices, type Ledger, type PrivateEngines } from '../../../dev/harness/harness';

interface Sample {
  phase: string;
  status: number;
  ms: number;
  code?: string;
  requestId: string | null;
}

async function health(port: number): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/health`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.json() };
}

// Redis, then MongoDB, stop and come back on the same port under a steady trickle of requests. The service
// processes are never restarted. Redis comes back empty (no persistence, the worst case): the credit
// counters are rebuilt from the usage events and the queue starts afresh.
describe('Faults: Redis and MongoDB restart under a trickle of liveness requests', function () {
  this.timeout(115_000);
  const BUDGET_MS = 3000;
  let deployment: PrivateDeployment;
  let engines: PrivateEngines;
  let ledger: Ledger;
  let procs: ServiceProcess[] = [];
  let account: { customerId: string; key: string };
  let face: string;
  let phase = 'up';
  let running = true;
  const samples: Sample[] = [];
  let trickle: Promise<void>;

  before(async () => {
    // A 3 s budget (not 10 s): requests sent while an engine is down must settle within the test's phases.
    deployment = await PrivateDeployment.start('restart', { LIVENESS_BUDGET_MS: String(BUDGET_MS) });
    engines = deployment.engines;
    procs = await startServices(['liveness-api', 'liveness-worker'], deployment.env);
    ledger = await deployment.openLedger();
    account = await ledger.account('business');
    face = (await portrait()).toString('base64');
    // One request every 150 ms, two at a time at most; each sample carries the phase it was sent in.
    const lane = async () => {
      while (running) {
        const sentIn = phase;
        const r = await postLiveness(procs[0]!.port, account.key, face, 'jpeg', 30_000);
        samples.push({ phase: sentIn, status: r.status, ms: r.ms, code: r.body?.error?.code, requestId: r.requestId });
        await sleep(150);
      }
    };
    trickle = Promise.all([lane(), sleep(75).then(lane)]).then(() => undefined);
  });

  after(async () => {
    running = false;
    await trickle?.catch(() => undefined);
    await deployment?.stop(procs);
  });

  const api = () => procs[0]!.port;
  const ofPhase = (p: string) => samples.filter((s) => s.phase === p);
  /** The request deadline bounds every step: budget + 1 s, timed by the API itself (its access log); +1.5 s
   *  because on a busy 2-core machine the API process can wait that long for a CPU. */
  const expectWithinDeadline = async (s: Sample) => {
    expect(await serverMs(procs[0]!, s.requestId), JSON.stringify(s)).to.be.at.most(BUDGET_MS + 1000 + 1500);
  };

  it('serves 200s while both engines are up', async () => {
    // Wait for a handful of answers (a state), however long a busy machine takes to give them.
    await eventually(async () => ofPhase('up').length > 5, 60_000);
    const up = ofPhase('up');
    expect(
      up.map((s) => s.status).every((s) => s === 200),
      JSON.stringify(up),
    ).to.equal(true);
  });

  it('fails fast with 503 while Redis is down, health says so, and recovers by itself', async () => {
    phase = 'redis-stopping';
    await engines.stopRedis();
    await eventually(async () => (await health(api())).status === 503, 10_000);
    expect((await health(api())).body).to.deep.equal({ status: 'error', message: 'queue unavailable' });
    phase = 'redis-down';
    await sleep(3000);
    phase = 'redis-starting';
    await engines.startRedisAgain();
    await eventually(async () => (await health(api())).status === 200, 30_000);
    phase = 'redis-back';
    await eventually(async () => ofPhase('redis-back').some((s) => s.status === 200), 30_000);

    const down = ofPhase('redis-down');
    expect(down.length).to.be.greaterThan(3);
    for (const s of down) {
      expect(s.status, JSON.stringify(s)).to.equal(503);
      await expectWithinDeadline(s);
    }
    // Anything sent around the transitions is either served or refused, never a 500 or a hang.
    for (const s of samples) {
      expect([200, 503], JSON.stringify(s)).to.include(s.status);
      await expectWithinDeadline(s);
    }
  });

  it('serves a known key while MongoDB is down (its event kept in the outbox), health says "database unavailable", and recovers by itself', async () => {
    await sleep(1500);
    phase = 'mongo-stopping';
    await engines.stopMongo();
    await eventually(async () => (await health(api())).status === 503, 15_000);
    expect((await health(api())).body).to.deep.equal({ status: 'error', message: 'database unavailable' });
    phase = 'mongo-down';
    await sleep(6000);
    phase = 'mongo-starting';
    await engines.startMongoAgain();
    await eventually(async () => (await health(api())).status === 200, 30_000);
    phase = 'mongo-back';
    await eventually(async () => ofPhase('mongo-back').some((s) => s.status === 200), 30_000);

    const down = ofPhase('mongo-down');
    console.log('      mongo-down samples (status/ms):', down.map((s) => `${s.status}/${Math.round(s.ms)}`).join(' '));
    expect(down.length).to.be.greaterThan(2);
    // A key in the auth cache is served: billing needs only Redis, and the usage event waits in the outbox
    // until MongoDB is back (the last test counts them). A call that needs the database is refused fast.
    for (const s of down) {
      // The key was used since Redis came back, so its authentication and its month's credits are in Redis:
      // a known key needs no database read on the hot path and is served while MongoDB is down.
      expect(s.status, JSON.stringify(s)).to.equal(200);
      await expectWithinDeadline(s);
    }
    for (const s of samples) {
      expect([200, 503], JSON.stringify(s)).to.include(s.status);
      await expectWithinDeadline(s);
    }
  });

  it('recorded every 200 exactly once as a usage event, and the credit counters agree', async () => {
    running = false;
    await trickle;
    const ok = samples.filter((s) => s.status === 200).length;
    // usageEvents() counts once the outbox is drained: events of calls served while MongoDB was down included.
    const events = await ledger.usageEvents(account.customerId).catch((err: Error) => {
      // What the worker warned of says why (its drainer's log lines).
      const warnings = procs[1]!.logs.filter((l) => /"level":(40|50)/.test(l) && !/ECONNREFUSED/.test(l)).slice(-10);
      throw new Error(`${err.message}; the worker's last warnings:\n${warnings.map((l) => l.slice(0, 600)).join('\n')}`);
    });
    expect(events).to.equal(ok);
    const credits = await ledger.credits(account.customerId);
    expect(credits.pending).to.deep.equal([]);
    expect(credits.used).to.equal(ok);
    expect(credits.calls).to.equal(ok);
  });
});
