// Owns `npm run bench:chaos [-- --seconds 180] [-- --kill-every 20] [-- --customers 8]`: the liveness service as
// real processes on private engines (one API, LIVENESS_WORKERS workers: the shipped default, one per core and at
// least 2), eight customers calling in closed loops, and a random liveness worker SIGKILLed every 20 s. Dead
// workers are restarted the way `npm start` does (dev/restart-policy.ts). Prints 200s, 503s, billed calls,
// usage events, billed-but-unanswered and lost/doubled events, and per kill the seconds until the replacement
// is ready and until the killed worker's share of calls is served again.
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { portrait } from '../dev/harness/sample-images';
import { spawnService, type ServiceProcess } from '../dev/harness/processes';

import { parseConfig } from '../shared/config';
import { HEALTHY_RUN_MS, restartDelayMs } from '../dev/restart-policy';
import { isolationIds, Ledger, outboxDrained, postLiveness, PrivateEngines, rssOf, serviceEnv, sleep, startServices, stopAll } from '../dev/harness/harness';
import { runMain } from './support/main';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const SECONDS = arg('--seconds', 180);
const KILL_EVERY_S = arg('--kill-every', 20);
const CUSTOMERS = arg('--customers', 8);
const WORKERS = arg('--workers', parseConfig({}).LIVENESS_WORKERS);

interface Slot {
  name: string;
  proc: ServiceProcess | null;
  crashLoop: number;
  startedAt: number;
}

interface Kill {
  at: number;
  worker: string;
  readyAfterS: number | null;
  first200AfterS: number | null;
}

const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

async function main(): Promise<void> {
  console.log(`bench:chaos — ${SECONDS} s, ${CUSTOMERS} customers, ${WORKERS} liveness workers, a SIGKILL every ${KILL_EVERY_S} s`);
  console.log(`load at start: ${load()}`);
  const engines = await PrivateEngines.start('chaos');
  const { prefix, dbName } = isolationIds('chaos');
  const env = serviceEnv(engines, dbName, prefix, { LOG_LEVEL: 'warn' });
  const [api] = await startServices(['liveness-api'], env);
  const ledger = await Ledger.open(engines, dbName, prefix);
  const redis = new Redis(engines.redis.url);
  const slots: Slot[] = Array.from({ length: WORKERS }, (_, i) => ({ name: `liveness-worker-${i + 1}`, proc: null, crashLoop: 0, startedAt: 0 }));
  let stopping = false;
  const kills: Kill[] = [];

  // The supervisor's restart rule, applied to the entry points directly.
  const launch = async (slot: Slot): Promise<void> => {
    const proc = await spawnService('liveness-worker', env);
    slot.proc = proc;
    slot.startedAt = Date.now();
    await proc.ready(120_000).catch((err) => console.log(`${slot.name} not ready: ${(err as Error).message.slice(0, 400)}`));
    const pendingKill = kills.find((k) => k.worker === slot.name && k.readyAfterS === null);
    if (pendingKill) pendingKill.readyAfterS = (Date.now() - pendingKill.at) / 1000;
    void proc.exited.then(() => {
      if (stopping) return;
      slot.crashLoop = Date.now() - slot.startedAt >= HEALTHY_RUN_MS ? 0 : slot.crashLoop + 1;
      setTimeout(() => void (!stopping && launch(slot)), restartDelayMs(slot.crashLoop));
    });
  };
  await Promise.all(slots.map(launch));

  const customers = await Promise.all(Array.from({ length: CUSTOMERS }, () => ledger.account('business')));
  const face = (await portrait()).toString('base64');
  const tally = new Map<string, { ok: number; codes: Map<number, number> }>();
  for (const c of customers) tally.set(c.customerId, { ok: 0, codes: new Map() });
  const until = Date.now() + SECONDS * 1000;

  const lanes = customers.map(async (c) => {
    const t = tally.get(c.customerId)!;
    while (Date.now() < until) {
      const r = await postLiveness(api!.port, c.key, face);
      t.codes.set(r.status, (t.codes.get(r.status) ?? 0) + 1);
      if (r.status === 200) {
        t.ok++;
        for (const k of kills) if (k.first200AfterS === null && Date.now() > k.at) k.first200AfterS = (Date.now() - k.at) / 1000;
      } else if (r.status === 503) {
        await sleep(Number(r.retryAfter ?? 1) * 100); // a polite client backs off a little
      }
    }
  });

  const killer = (async () => {
    while (Date.now() + KILL_EVERY_S * 1000 < until) {
      await sleep(KILL_EVERY_S * 1000);
      const alive = slots.filter((s) => s.proc && s.proc.proc.exitCode === null && s.proc.proc.signalCode === null);
      const victim = alive[Math.floor(Math.random() * alive.length)];
      if (!victim) continue;
      kills.push({ at: Date.now(), worker: victim.name, readyAfterS: null, first200AfterS: null });
      await victim.proc!.kill9();
    }
  })();

  // Memory of the default worker count: the workers' summed RSS, sampled every 5 s under load.
  let peakWorkersRss = 0;
  const sampler = setInterval(() => {
    const total = slots.reduce((sum, s) => sum + (s.proc?.proc.pid ? (rssOf(s.proc.proc.pid) ?? 0) : 0), 0);
    peakWorkersRss = Math.max(peakWorkersRss, total);
  }, 5000);
  await Promise.all([...lanes, killer]);
  clearInterval(sampler);
  const endRss = slots.map((s) => (s.proc?.proc.pid ? (rssOf(s.proc.proc.pid) ?? 0) : 0));
  stopping = true;
  await outboxDrained(redis, prefix, 60_000).catch((err) => console.log(`outbox: ${(err as Error).message}`));

  let ok = 0;
  let billed = 0;
  let events = 0;
  let pending = 0;
  const codes = new Map<number, number>();
  for (const c of customers) {
    const t = tally.get(c.customerId)!;
    ok += t.ok;
    for (const [code, n] of t.codes) codes.set(code, (codes.get(code) ?? 0) + n);
    const credits = await ledger.credits(c.customerId);
    billed += credits.used;
    pending += credits.pending.length;
    events += await ledger.usageEvents(c.customerId);
  }
  const distinct = (await ledger.models.UsageEvent.distinct('_id', { service: 'liveness' })).length;
  console.log(`load at end: ${load()}`);
  console.log(
    `answers: ${[...codes]
      .sort(([a], [b]) => a - b)
      .map(([c, n]) => `${n} × ${c}`)
      .join(', ')}`,
  );
  console.log(
    `200s: ${ok}  503s: ${codes.get(503) ?? 0}  billed: ${billed}  usage events: ${events} (distinct ids ${distinct})  reservations left: ${pending}`,
  );
  console.log(
    `billed but unanswered: ${billed - ok}  answered but unbilled: ${ok - billed}  events lost: ${billed - events}  events doubled: ${events - distinct}`,
  );
  const mb = (b: number) => (b / 2 ** 20).toFixed(0);
  console.log(`liveness workers' RSS at the end: ${endRss.map(mb).join(' + ')} MB; peak sum under load ${mb(peakWorkersRss)} MB (${WORKERS} workers)`);
  for (const k of kills) {
    console.log(
      `kill ${k.worker} at +${((k.at - (until - SECONDS * 1000)) / 1000).toFixed(0)} s: replacement ready after ${k.readyAfterS?.toFixed(1) ?? '—'} s, first 200 after the kill ${k.first200AfterS?.toFixed(1) ?? '—'} s`,
    );
  }
  redis.disconnect();
  await stopAll([api, ...slots.map((s) => s.proc ?? undefined)]);
  await ledger.close();
  await engines.stop();
}

runMain(main);
