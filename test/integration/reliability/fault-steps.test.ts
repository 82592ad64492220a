import { expect } from 'chai';
import { Redis } from 'ioredis';
import { portrait } from '../../../dev/harness/sample-images';
import { spawnService, type ServiceProcess } from '../../../dev/harness/processes';
import { outboxDrained } from '../../support/billing';
import { eventually, postLiveness, PrivateDeployment, startServices, type Ledger } from '../../../dev/harness/harness';
import { outboxStreams } from '../../../shared/billing/usage-outbox';

// A liveness worker SIGKILLed exactly at each step of settling a call (FAULT_KILL_AT, the test-only hook):
// whatever the step, the calls billed equal the 200 answers, no usage event is lost and none is written twice.
// Each step runs with its own account and a worker armed for that step as the only worker; a clean worker
// started at the end drains the outbox (taking over the dead drainers' entries) and serves again.
describe('Faults: a liveness worker killed at every step between the engine and the usage record', function () {
  this.timeout(300_000);
  // A short budget keeps the steps that wait it out quick; the properties do not depend on its length.
  const BUDGET_MS = 4000;
  let deployment: PrivateDeployment;
  let ledger: Ledger;
  let redis: Redis;
  let api: ServiceProcess;
  let env: Record<string, string>;
  let prefix: string;
  let face: string;
  const procs: ServiceProcess[] = [];
  const byStep = new Map<string, { account: { customerId: string; key: string }; statuses: number[] }>();

  before(async () => {
    deployment = await PrivateDeployment.start('faults', {
      // A 4 s budget (not 10 s): each killed call waits out its budget before its 503; four steps would take 40 s otherwise.
      LIVENESS_BUDGET_MS: String(BUDGET_MS),
      // The API must enqueue although the only worker just died (the next one is armed and starting).
      EXPECTED_LIVENESS_WORKERS: '1',
      // A dead drainer's entries are taken over after this idle time; 1 s instead of 10 s keeps the suite short.
      OUTBOX_CLAIM_IDLE_MS: '1000',
    });
    ({ prefix, env } = deployment);
    api = (await startServices(['liveness-api'], env))[0]!;
    ledger = await deployment.openLedger();
    redis = new Redis(deployment.engines.redis.url);
    face = (await portrait()).toString('base64');
  });

  after(async () => {
    redis?.disconnect();
    await deployment?.stop([api, ...procs]);
  });

  // in_drainer first: its worker dies on its first write, so the outbox must hold only its own call's event.
  const steps: Array<{ step: string; expected: number }> = [
    { step: 'in_drainer', expected: 200 },
    { step: 'after_engine', expected: 503 },
    { step: 'after_commit', expected: 200 },
    { step: 'after_publish', expected: 200 },
  ];
  for (const { step, expected } of steps) {
    it(`FAULT_KILL_AT=${step}: the worker dies exactly there and the caller gets ${expected}`, async () => {
      const account = await ledger.account('business');
      const worker = await spawnService('liveness-worker', { ...env, FAULT_KILL_AT: step });
      procs.push(worker);
      await worker.ready(120_000);
      const res = await postLiveness(api.port, account.key, face);
      await worker.exited;
      expect(worker.proc.signalCode).to.equal('SIGKILL');
      expect(
        worker.logs.some((l) => l.includes('fault hook: SIGKILL') && l.includes(`"step":"${step}"`)),
        'died at the step',
      ).to.equal(true);
      expect(res.status, JSON.stringify(res.body)).to.equal(expected);
      if (expected === 503) expect(res.body.error.code).to.equal('service_unavailable');
      byStep.set(step, { account, statuses: [res.status] });
    });
  }

  it('after a clean worker starts: billed calls == 200 answers, every event written once, nothing left reserved', async () => {
    const worker = await spawnService('liveness-worker', env);
    procs.push(worker);
    await worker.ready(120_000);
    await outboxDrained(redis, prefix, 30_000);
    for (const [step, { account, statuses }] of byStep) {
      const more = await postLiveness(api.port, account.key, face);
      expect(more.status, step).to.equal(200);
      statuses.push(more.status);
    }
    await outboxDrained(redis, prefix, 30_000);
    for (const [step, { account, statuses }] of byStep) {
      const ok = statuses.filter((s) => s === 200).length;
      const credits = await ledger.credits(account.customerId);
      expect(credits, step).to.deep.equal({ used: ok, calls: ok, pending: [] });
      expect(await ledger.usageEvents(account.customerId), `${step}: events`).to.equal(ok);
    }
    // The consumer group holds nothing unacknowledged: no event is waiting to be written a second time.
    await eventually(async () => {
      const pending = (await Promise.all(outboxStreams(prefix).map((k) => redis.xpending(k, 'usage-drainers').catch(() => [0])))) as Array<
        [number, ...unknown[]]
      >;
      return pending.every((p) => p[0] === 0);
    }, 15_000);
  });
});
