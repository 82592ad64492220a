// Owns `npm run bench:capacity`: the capacity model's measured inputs and the model itself (docs/operations.md,
// "Capacity model", quotes what this prints). For liveness (a phone-sized ~109 KB JPEG) and emotion (15 s of speech,
// 16 kHz WAV), each on its own private Redis and FerretDB with the real API and worker processes, a closed loop of
// keep-alive clients at a steady concurrency; per answered call, over the measured window plus the usage outbox's
// drain after it: front-end, worker (and handler), Redis and store CPU-ms; store commands; bytes client <-> API and
// through Redis; Redis commands; Redis memory and API RSS per call in flight. Then the model: calls/s per core and
// per host at a target utilisation, the hosts needed for each rate, one Redis primary's ceiling, the first tier to
// saturate, and what the workers' KEDA settings mean in calls/s. Every per-call figure is net of what the idle
// stack does meanwhile (pollers, timers, Redis's cron: measured for --idle-seconds first), so a short run on a slow
// machine does not charge the calls for the time they took. Options (defaults): --seconds 20, --warm-seconds 6,
// --idle-seconds 5, --liveness-c 8, --emotion-c 2, --liveness-workers 2, --emotion-workers 1, --emotion-seconds 15,
// --only liveness|emotion, --utilisation 0.7, --fe-cores 4, --worker-cores 8, --store-cores 8, --nic-gbps 10,
// --rates 100,1000,10000. Figures: bench/results/capacity.md.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Socket } from 'node:net';
import { parseAllDocuments } from 'yaml';
import type { Redis } from 'ioredis';
import { portraitAt } from '../dev/harness/sample-images';
import { outboxDrained } from '../dev/harness/harness';
import { FixtureDir } from '../dev/harness/emotion/audio';
import { ANALYSIS_PATH } from '../shared/contracts/http/emotion';
import { EmotionTokenService } from '../shared/accounts/emotion-tokens';
import { USAGE_BATCH_MIN_RATE_PER_S } from '../workers/runtime/usage-drainer';
import { createRedis, closeRedis } from '../shared/redis';
import { projectRoot } from '../shared/paths';
import { loadConfig } from '../shared/config';
import { arg, benchStack, histMeanMs, median, stackPids, workersCounter, type BenchStack } from './api';
import { processTreeCpuMs } from './support/cpu';
import { rssMiB } from './support/service';
import { pct } from './support/measure';
import { loadAvg, runMain } from './support/main';

type Kind = 'liveness' | 'emotion';

interface Workload {
  kind: Kind;
  describe: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  concurrency: number;
  workers: number;
}

// ---------------------------------------------------------------------------------------------------------------
// The client: a closed loop of `concurrency` keep-alive connections, counting the bytes on their sockets.

interface Drive {
  ok: number;
  other: Map<string, number>;
  seconds: number;
  sent: number;
  received: number;
  ms: number[];
}

async function drive(port: number, w: Workload, seconds: number): Promise<Drive> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: w.concurrency });
  const sockets = new Set<Socket>();
  const out: Drive = { ok: 0, other: new Map(), seconds, sent: 0, received: 0, ms: [] };
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = http.request(
        { host: '127.0.0.1', port, path: w.path, method: 'POST', agent, headers: { ...w.headers, 'content-length': String(w.body.length) } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) {
              out.ok++;
              out.ms.push(performance.now() - t0);
            } else out.other.set(String(res.statusCode), (out.other.get(String(res.statusCode)) ?? 0) + 1);
            resolve();
          });
        },
      );
      req.on('socket', (s: Socket) => sockets.add(s));
      req.setTimeout(30_000, () => req.destroy(new Error('client_timeout')));
      req.on('error', (err) => {
        out.other.set(err.message, (out.other.get(err.message) ?? 0) + 1);
        resolve();
      });
      req.end(w.body);
    });
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: w.concurrency }, async () => {
      while (performance.now() < end) await one();
    }),
  );
  out.seconds = (performance.now() - t0) / 1000;
  for (const s of sockets) {
    out.sent += s.bytesWritten;
    out.received += s.bytesRead;
  }
  agent.destroy();
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Readings of every tier, taken before and after the measured window.

/** `INFO <sections>` as key -> value (commandstats lines kept whole). */
async function info(redis: Redis, ...sections: string[]): Promise<Map<string, string>> {
  const text = (await redis.call('INFO', ...sections)) as string;
  const out = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) out.set(line.slice(0, i), line.slice(i + 1));
  }
  return out;
}

/**
 * Every counter of the stack at one moment, by name: `cpu.<tier>` (CPU-ms), `redis.in` / `redis.out` (bytes),
 * `cmd.<name>` (Redis calls, our own INFO excluded), `store.<name>` (document-store commands, from FerretDB's
 * serverStatus metrics.commands), `usageEvents` (documents), and `at` (ms, the clock).
 */
type Reading = Map<string, number>;

const WRITE_COMMANDS = new Set(['insert', 'update', 'delete', 'findAndModify', 'findandmodify']);
const TIERS = ['api', 'workers', 'handler', 'redis', 'store', 'client'] as const;
type Tier = (typeof TIERS)[number];

async function reading(stack: BenchStack, redis: Redis): Promise<Reading> {
  const pids = stackPids(stack);
  const storePid = pids.find(([n]) => n === 'FerretDB')?.[1] ?? null;
  const sumCpu = (list: Array<{ proc: { pid?: number } }>) => list.reduce((s, p) => s + processTreeCpuMs(p.proc.pid), 0);
  const r = await info(redis, 'cpu', 'stats', 'commandstats');
  const status = (await stack.models.UsageEvent.db.db!.admin().command({ serverStatus: 1 })) as {
    metrics?: { commands?: Record<string, { total: number }> };
  };
  const out: Reading = new Map<string, number>([
    ['at', performance.now()],
    ['cpu.api', sumCpu(stack.apis)],
    ['cpu.workers', sumCpu(stack.workers)],
    ['cpu.handler', (await workersCounter(stack, 'lc_job_handler_cpu_seconds_total')) * 1000],
    ['cpu.redis', (Number(r.get('used_cpu_sys')) + Number(r.get('used_cpu_user'))) * 1000],
    ['cpu.store', storePid ? processTreeCpuMs(storePid) : NaN],
    ['cpu.client', processTreeCpuMs()],
    ['redis.in', Number(r.get('total_net_input_bytes'))],
    ['redis.out', Number(r.get('total_net_output_bytes'))],
    ['usageEvents', await stack.models.UsageEvent.countDocuments()],
  ]);
  for (const [k, v] of r) {
    const m = /^cmdstat_(.+)$/.exec(k);
    if (m && m[1] !== 'info') out.set(`cmd.${m[1]!}`, Number(/calls=(\d+)/.exec(v)?.[1] ?? 0));
  }
  for (const [k, v] of Object.entries(status.metrics?.commands ?? {})) if (k !== 'serverStatus' && k !== 'unknown') out.set(`store.${k}`, v.total);
  return out;
}

/** b − a for every counter, per second of the clock between them. */
function rates(a: Reading, b: Reading): Reading {
  const s = (b.get('at')! - a.get('at')!) / 1000;
  return new Map([...b].filter(([k]) => k !== 'at').map(([k, v]): [string, number] => [k, (v - (a.get(k) ?? 0)) / s]));
}

/**
 * Per answered call, what the calls added: b − a, less what the idle stack does in the same time (pollers, timers,
 * Redis's cron; `idle` per second), divided by the calls. `gross` keeps the idle part in.
 */
function perCall(a: Reading, b: Reading, idle: Reading, calls: number, gross = false): Reading {
  const s = (b.get('at')! - a.get('at')!) / 1000;
  return new Map(
    [...b]
      .filter(([k]) => k !== 'at')
      .map(([k, v]): [string, number] => [k, (v - (a.get(k) ?? 0) - (gross || k === 'usageEvents' ? 0 : (idle.get(k) ?? 0) * s)) / calls]),
  );
}

/** Waits until the drainers have written every usage event of the outbox to the store (at most 30 s; then reads what is there). */
async function drained(stack: BenchStack, redis: Redis): Promise<void> {
  await outboxDrained(redis, stack.env.QUEUE_PREFIX!, 30_000).catch(() => undefined);
}

/** Redis used_memory and the front-ends' RSS, sampled every 200 ms while `during` runs. */
async function sampled<T>(stack: BenchStack, redis: Redis, during: Promise<T>): Promise<{ value: T; redis: number[]; rss: number[] }> {
  const samples = { redis: [] as number[], rss: [] as number[] };
  let done = false;
  const value = during.finally(() => (done = true));
  while (!done) {
    samples.redis.push(Number((await info(redis, 'memory')).get('used_memory')));
    samples.rss.push(stack.apis.reduce((s, p) => s + rssMiB(p.proc.pid!), 0));
    await Promise.race([value, new Promise((r) => setTimeout(r, 200))]);
  }
  return { value: await value, ...samples };
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------------
// One workload measured: the per-call inputs of the model.

interface Inputs {
  kind: Kind;
  describe: string;
  concurrency: number;
  calls: number;
  callsPerSecond: number;
  other: string;
  p50: number;
  p99: number;
  /** CPU-ms per answered call, net of the idle stack's; `gross` with it. */
  cpu: Record<Tier, number>;
  gross: Record<Tier, number>;
  /** The idle stack's CPU-ms per second, by tier, and its Redis commands per second. */
  idleCpu: Record<Tier, number>;
  idleCommands: number;
  storeWrites: number;
  storeReads: number;
  storeByCommand: string;
  usageEvents: number;
  clientSent: number;
  clientReceived: number;
  redisIn: number;
  redisOut: number;
  redisCommands: number;
  topCommands: string;
  /** Redis used_memory above idle while the calls ran, mean and peak, bytes per call in flight (÷ concurrency). */
  redisMemMean: number;
  redisMemPeak: number;
  /** Mean used_memory above idle ÷ calls/s: what Redis holds per call per second of rate (Little's law). */
  redisByteSeconds: number;
  apiRssPerCall: number;
  jobMs: number;
  loadBefore: string;
  loadAfter: string;
}

async function measure(w: Workload, o: { seconds: number; warmSeconds: number; idleSeconds: number }): Promise<Inputs> {
  // The fair-use ceilings lifted: one token sends the same recording many times a second.
  const stack = await benchStack(`capacity-${w.kind}`, { env: { EMOTION_FAIR_USE_BURST_SECONDS: '1000000', EMOTION_FAIR_USE_SECONDS_PER_SEC: '1000000' } });
  const redis = createRedis(stack.env.REDIS_URL!, 'producer', 'bench-capacity');
  try {
    if (w.kind === 'emotion') {
      const { token } = await new EmotionTokenService(stack.models).create('bench-capacity', stack.customerId);
      w.headers.authorization = `Bearer ${token}`;
    } else w.headers['x-api-key'] = stack.key;
    await stack.spawn(`${w.kind}-api`);
    await Promise.all(Array.from({ length: w.workers }, () => stack.spawn(`${w.kind}-worker`)));
    const port = stack.apis[0]!.port;
    // Warm: the processes' JIT has compiled the request path, then the outbox is empty and the engines idle.
    if (o.warmSeconds > 0) await drive(port, w, o.warmSeconds);
    await drained(stack, redis);
    // What the warm-up leaves running (collections, compilations) ends before the idle window.
    await sleep(2000);
    // The idle stack's own rates (its pollers and timers), taken off the calls' figures below.
    const i0 = await reading(stack, redis);
    const idle = await sampled(stack, redis, sleep(o.idleSeconds * 1000));
    const a = await reading(stack, redis);
    const idleRates = rates(i0, a);
    const loadBefore = loadAvg();
    const run = await sampled(stack, redis, drive(port, w, o.seconds));
    const loadAfter = loadAvg();
    await drained(stack, redis);
    const b = await reading(stack, redis);
    const d = run.value;
    const net = perCall(a, b, idleRates, d.ok);
    const gross = perCall(a, b, idleRates, d.ok, true);
    const tiers = (m: Reading) => Object.fromEntries(TIERS.map((t) => [t, m.get(`cpu.${t}`) ?? NaN])) as Record<Tier, number>;
    // A tier whose idle CPU is most of what it used (the store at a few calls per second) has a net figure that is
    // mostly noise, even below zero: the model takes its gross figure then, an upper bound.
    const modelCpu = (netCpu: Record<Tier, number>, grossCpu: Record<Tier, number>) =>
      Object.fromEntries(TIERS.map((t) => [t, netCpu[t] >= grossCpu[t] / 2 ? netCpu[t] : grossCpu[t]])) as Record<Tier, number>;
    const named = (prefix: string) =>
      [...net]
        .filter(([k, v]) => k.startsWith(prefix) && v > 0.0005)
        .map(([k, v]): [string, number] => [k.slice(prefix.length), v])
        .sort((p, q) => q[1] - p[1]);
    const cmds = named('cmd.');
    const store = named('store.');
    const rate = d.ok / d.seconds;
    const workerText = await Promise.all(stack.workers.map(async (p) => (await fetch(`http://127.0.0.1:${p.port}/metrics`)).text()));
    const ms = [...d.ms].sort((x, y) => x - y);
    const n = d.ok + [...d.other.values()].reduce((s, x) => s + x, 0);
    return {
      kind: w.kind,
      describe: w.describe,
      concurrency: w.concurrency,
      calls: d.ok,
      callsPerSecond: rate,
      other: n === d.ok ? 'none' : [...d.other].map(([k, v]) => `${v} × ${k}`).join(', '),
      p50: pct(ms, 50),
      p99: pct(ms, 99),
      cpu: modelCpu(tiers(net), tiers(gross)),
      gross: tiers(gross),
      idleCpu: tiers(idleRates),
      idleCommands: [...idleRates].filter(([k]) => k.startsWith('cmd.')).reduce((s, [, v]) => s + v, 0),
      storeWrites: store.filter(([k]) => WRITE_COMMANDS.has(k)).reduce((s, [, v]) => s + v, 0),
      storeReads: store.filter(([k]) => !WRITE_COMMANDS.has(k)).reduce((s, [, v]) => s + v, 0),
      storeByCommand: store.map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', '),
      usageEvents: net.get('usageEvents')!,
      clientSent: d.sent / d.ok,
      clientReceived: d.received / d.ok,
      redisIn: net.get('redis.in')!,
      redisOut: net.get('redis.out')!,
      redisCommands: cmds.reduce((s, [, v]) => s + v, 0),
      topCommands: cmds
        .slice(0, 8)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(', '),
      redisMemMean: (mean(run.redis) - mean(idle.redis)) / w.concurrency,
      redisMemPeak: (Math.max(...run.redis) - mean(idle.redis)) / w.concurrency,
      redisByteSeconds: (mean(run.redis) - mean(idle.redis)) / rate,
      apiRssPerCall: ((mean(run.rss) - mean(idle.rss)) * 1024 * 1024) / w.concurrency,
      jobMs: median(workerText.map((t) => histMeanMs(t, 'lc_job_processing_seconds', ['outcome="ok"']))),
      loadBefore,
      loadAfter,
    };
  } finally {
    await closeRedis(redis);
    await stack.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The model: the one place its arithmetic lives (docs/operations.md quotes the tables below).

interface HostSizes {
  utilisation: number;
  feCores: number;
  workerCores: number;
  storeCores: number;
  nicGbps: number;
}

interface Ceilings {
  feCore: number;
  feHost: number;
  workerProcess: number;
  workerHost: number;
  redisCpu: number;
  redisNic: number;
  redisPrimary: number;
  storePrimary: number;
}

/** Calls/s each unit carries at the target utilisation: 1000 ÷ CPU-ms per call × cores × utilisation. */
function ceilings(x: Inputs, h: HostSizes): Ceilings {
  const perCore = (cpuMs: number) => (1000 / cpuMs) * h.utilisation;
  const nicBytesPerS = (h.nicGbps * 1e9) / 8;
  // Redis runs commands on one thread: one primary is one core, whatever its host has. A NIC is full duplex: the
  // larger direction bounds it.
  const redisCpu = perCore(x.cpu.redis);
  const redisNic = (nicBytesPerS * h.utilisation) / Math.max(x.redisIn, x.redisOut);
  return {
    feCore: perCore(x.cpu.api),
    feHost: perCore(x.cpu.api) * h.feCores,
    workerProcess: perCore(x.cpu.workers),
    workerHost: perCore(x.cpu.workers) * h.workerCores,
    redisCpu,
    redisNic,
    redisPrimary: Math.min(redisCpu, redisNic),
    storePrimary: perCore(x.cpu.store) * h.storeCores,
  };
}

interface Plan {
  rate: number;
  feHosts: number;
  workerHosts: number;
  redisPrimaries: number;
  storePrimaries: number;
  clientGbps: number;
  redisGbps: number;
  redisMemMiB: number;
}

function plan(x: Inputs, h: HostSizes, rate: number): Plan {
  const c = ceilings(x, h);
  return {
    rate,
    feHosts: Math.ceil(rate / c.feHost),
    workerHosts: Math.ceil(rate / c.workerHost),
    redisPrimaries: Math.ceil(rate / c.redisPrimary),
    storePrimaries: Math.ceil(rate / c.storePrimary),
    clientGbps: (rate * (x.clientSent + x.clientReceived) * 8) / 1e9,
    redisGbps: (rate * (x.redisIn + x.redisOut) * 8) / 1e9,
    // Little's law: what Redis holds = rate × (bytes × seconds each call keeps there).
    redisMemMiB: (rate * x.redisByteSeconds) / 2 ** 20,
  };
}

/** The worker settings the KEDA ScaledObject of a queue holds (threshold = waiting jobs per replica). */
function keda(kind: Kind): { threshold: number; maxReplicas: number } {
  const so = manifest(`${kind}-worker.yaml`, 'ScaledObject') as { spec: { maxReplicaCount: number; triggers: Array<{ metadata: { threshold: string } }> } };
  return { threshold: Number(so.spec.triggers[0]!.metadata.threshold), maxReplicas: so.spec.maxReplicaCount };
}

/** The front-end's HPA: its CPU target (share of the pod's CPU request, in cores) and its replica ceiling. */
function hpa(kind: Kind): { cores: number; target: number; maxReplicas: number } {
  const deployment = manifest(`${kind}-api.yaml`, 'Deployment') as {
    spec: { template: { spec: { containers: Array<{ resources: { requests: { cpu: string } } }> } } };
  };
  const cpu = deployment.spec.template.spec.containers[0]!.resources.requests.cpu;
  const h = manifest(`${kind}-api.yaml`, 'HorizontalPodAutoscaler') as {
    spec: { maxReplicas: number; metrics: Array<{ resource: { target: { averageUtilization: number } } }> };
  };
  return {
    cores: cpu.endsWith('m') ? Number(cpu.slice(0, -1)) / 1000 : Number(cpu),
    target: h.spec.metrics[0]!.resource.target.averageUtilization / 100,
    maxReplicas: h.spec.maxReplicas,
  };
}

function manifest(file: string, kind: string): unknown {
  for (const doc of parseAllDocuments(fs.readFileSync(path.join(projectRoot, 'deploy', 'k8s', file), 'utf8'))) {
    const js = doc.toJS() as { kind?: string };
    if (js.kind === kind) return js;
  }
  throw new Error(`deploy/k8s/${file}: no ${kind}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Printing: markdown tables, to paste into bench/results/capacity.md.

const fx = (v: number, d = 1) => (Number.isFinite(v) ? v.toLocaleString('en', { minimumFractionDigits: d, maximumFractionDigits: d }) : '-');
const kb = (v: number) => `${fx(v / 1000)} KB`;
const row = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;

function printInputs(xs: Inputs[]): void {
  console.log(
    '\nmeasured inputs, per answered call, over the measured window and the usage outbox drain after it, net of what the ' +
      'idle stack does in that time (CPU: net (gross; the idle stack per second)); the model uses the net figures, or the gross one where the idle stack is over half of it\n',
  );
  console.log(row(['input', ...xs.map((x) => x.kind)]));
  console.log(row(['---', ...xs.map(() => '---')]));
  const line = (name: string, f: (x: Inputs) => string) => console.log(row([name, ...xs.map(f)]));
  line('call', (x) => x.describe);
  line('concurrency; answered (calls/s); other answers', (x) => `c=${x.concurrency}; ${x.calls} (${fx(x.callsPerSecond)}/s); ${x.other}`);
  line('client p50 / p99 ms; worker job mean ms', (x) => `${fx(x.p50, 0)} / ${fx(x.p99, 0)}; ${fx(x.jobMs)}`);
  const cpu = (name: string, t: Tier) => line(name, (x) => `${fx(x.cpu[t], 2)} (${fx(x.gross[t], 2)}; idle ${fx(x.idleCpu[t], 1)}/s)`);
  cpu('front-end CPU-ms (API processes)', 'api');
  cpu('worker CPU-ms (with ffmpeg children)', 'workers');
  cpu('  of it the handler (lc_job_handler_cpu_seconds_total)', 'handler');
  cpu('Redis CPU-ms (INFO used_cpu_sys + used_cpu_user)', 'redis');
  cpu('store CPU-ms (FerretDB/SQLite process)', 'store');
  line("handler share of the service's CPU", (x) => `${fx((100 * x.cpu.handler) / (x.cpu.api + x.cpu.workers + x.cpu.redis + x.cpu.store), 0)} %`);
  line('store write commands (insert, update, delete, findAndModify)', (x) => fx(x.storeWrites, 3));
  line('store read commands', (x) => fx(x.storeReads, 3));
  line('store commands by name', (x) => x.storeByCommand || '-');
  line('usage-event documents written', (x) => fx(x.usageEvents, 3));
  line('client → API bytes / API → client bytes', (x) => `${kb(x.clientSent)} / ${kb(x.clientReceived)}`);
  line('Redis network in / out (all clients: APIs, workers, drainers)', (x) => `${kb(x.redisIn)} / ${kb(x.redisOut)}`);
  line('Redis commands (INFO commandstats; idle stack per second)', (x) => `${fx(x.redisCommands)} (idle ${fx(x.idleCommands)}/s)`);
  line('  most frequent', (x) => x.topCommands);
  line('Redis used_memory per call in flight, mean / peak', (x) => `${kb(x.redisMemMean)} / ${kb(x.redisMemPeak)}`);
  line('Redis memory per call/s (mean used_memory ÷ calls/s)', (x) => `${kb(x.redisByteSeconds)}·s`);
  line('front-end RSS growth under load ÷ c (heap headroom, not held per call)', (x) => kb(x.apiRssPerCall));
  line('load generator CPU-ms (not in the model)', (x) => fx(x.gross.client, 2));
  line('load average before / after', (x) => `${x.loadBefore} / ${x.loadAfter}`);
}

function printModel(xs: Inputs[], h: HostSizes, rates: number[]): void {
  const u = `${fx(h.utilisation * 100, 0)} %`;
  console.log(
    `\nthe model: each tier at ${u} of its CPU; front-end hosts ${h.feCores} cores (one API process per core), worker hosts ${h.workerCores} cores (one worker ` +
      `process per core), store primary ${h.storeCores} cores, one Redis primary = one core (commands run on one thread), NICs ${h.nicGbps} Gbit/s\n`,
  );
  console.log(row(['calls/s one unit carries', ...xs.map((x) => x.kind)]));
  console.log(row(['---', ...xs.map(() => '---')]));
  const cs = xs.map((x) => ceilings(x, h));
  const line = (name: string, f: (c: Ceilings) => number) => console.log(row([name, ...cs.map((c) => fx(f(c), 0))]));
  line('one front-end core', (c) => c.feCore);
  line(`front-end host (${h.feCores} cores)`, (c) => c.feHost);
  line('one worker process (one core)', (c) => c.workerProcess);
  line(`worker host (${h.workerCores} cores)`, (c) => c.workerHost);
  line('one Redis primary, by its CPU', (c) => c.redisCpu);
  line(`one Redis primary, by its NIC (${h.nicGbps} Gbit/s)`, (c) => c.redisNic);
  line(`one store primary (${h.storeCores} cores, FerretDB's CPU-ms)`, (c) => c.storePrimary);

  console.log('\nhosts needed\n');
  console.log(
    row(['API', 'calls/s', 'front-end hosts', 'worker hosts', 'Redis primaries', 'store primaries', 'client ↔ API Gbit/s', 'Redis Gbit/s', 'Redis memory MiB']),
  );
  console.log(row(Array<string>(9).fill('---')));
  for (const x of xs) {
    for (const rate of rates) {
      const p = plan(x, h, rate);
      console.log(
        row([
          x.kind,
          rate.toLocaleString('en'),
          p.feHosts,
          p.workerHosts,
          p.redisPrimaries,
          p.storePrimaries,
          fx(p.clientGbps, 2),
          fx(p.redisGbps, 2),
          fx(p.redisMemMiB, 0),
        ]),
      );
    }
  }
  console.log('');
  for (const x of xs) {
    if (x.callsPerSecond < USAGE_BATCH_MIN_RATE_PER_S)
      console.log(
        `note, ${x.kind}: ${fx(x.callsPerSecond)} calls/s is under the usage drainer's batching rate (${USAGE_BATCH_MIN_RATE_PER_S}/s), so its events ` +
          'were written one by one; at the rates above they are batched (one insertMany and one counter update per batch), ' +
          'and its store writes and store CPU-ms are an upper bound',
      );
  }
  for (const [i, x] of xs.entries()) {
    const c = cs[i]!;
    // The front-ends and workers grow by adding hosts; one Redis primary and one store primary do not.
    const single = [
      { tier: `one Redis primary (${c.redisCpu <= c.redisNic ? 'its CPU' : 'its NIC'})`, at: c.redisPrimary },
      { tier: 'one store primary', at: c.storePrimary },
    ].sort((p, q) => p.at - q.at);
    console.log(
      `first tier to saturate, ${x.kind}: ${single[0]!.tier} at ${fx(single[0]!.at, 0)} calls/s (then ${single[1]!.tier} at ${fx(single[1]!.at, 0)}); ` +
        `front-ends and workers scale out by hosts`,
    );
  }

  console.log('\nautoscaling (KEDA on queue depth: replicas = ceil(waiting jobs ÷ threshold); deploy/k8s/<queue>-worker.yaml)\n');
  console.log(
    row([
      'queue',
      'calls/s per worker replica (one core)',
      'replicas per 100 calls/s',
      'job mean ms',
      'threshold',
      'wait at threshold ms (share of the budget)',
      'maxReplicaCount → calls/s',
    ]),
  );
  console.log(row(Array<string>(7).fill('---')));
  const cfg = loadConfig();
  for (const [i, x] of xs.entries()) {
    const k = keda(x.kind);
    const c = cs[i]!;
    const budget = x.kind === 'liveness' ? cfg.LIVENESS_BUDGET_MS : cfg.EMOTION_BUDGET_MS;
    console.log(
      row([
        x.kind,
        fx(c.workerProcess, 1),
        fx(Math.ceil(100 / c.workerProcess), 0),
        fx(x.jobMs, 0),
        k.threshold,
        `${fx(k.threshold * x.jobMs, 0)} (${fx((100 * k.threshold * x.jobMs) / budget, 0)} % of ${budget / 1000} s)`,
        `${k.maxReplicas} → ${fx(k.maxReplicas * c.workerProcess, 0)}`,
      ]),
    );
  }
  console.log('\nfront-ends (HPA on CPU: a replica is added when the pods average the target share of their CPU request)\n');
  console.log(row(['API', 'CPU request × target', 'calls/s per replica at the target', 'replicas per 100 calls/s', 'maxReplicas → calls/s']));
  console.log(row(Array<string>(5).fill('---')));
  for (const x of xs) {
    const a = hpa(x.kind);
    // A pod may use more than its request when the node has room; the HPA counts against the request.
    const perReplica = ((1000 * a.cores) / x.cpu.api) * a.target;
    console.log(
      row([
        x.kind,
        `${a.cores} core × ${fx(a.target * 100, 0)} %`,
        fx(perReplica, 1),
        fx(Math.ceil(100 / perReplica), 0),
        `${a.maxReplicas} → ${fx(a.maxReplicas * perReplica, 0)}`,
      ]),
    );
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function workloads(): Promise<{ list: Workload[]; cleanup: () => void }> {
  const jpeg = await portraitAt(1280, 92);
  const fx0 = new FixtureDir();
  const seconds = arg('emotion-seconds', 15);
  fx0.speak('voice.wav');
  // A sentence with a pause after it, repeated to the length asked: speech as a caller records it, 16 kHz mono.
  fx0.sox(
    ['voice.wav'],
    'speech.wav',
    ['pad', '0', '0.7', 'repeat', String(Math.ceil(seconds / 4)), 'trim', '0', String(seconds)],
    ['-b', '16', '-r', '16000', '-c', '1'],
  );
  const wav = fx0.read('speech.wav');
  const liveness: Workload = {
    kind: 'liveness',
    describe: `POST /v1/check/liveness, 1280x960 JPEG ${kb(jpeg.length)} (base64 JSON)`,
    path: '/v1/check/liveness',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ image: jpeg.toString('base64'), image_format: 'jpeg' })),
    concurrency: arg('liveness-c', 8),
    workers: arg('liveness-workers', 2),
  };
  const emotion: Workload = {
    kind: 'emotion',
    describe: `POST ${ANALYSIS_PATH}, ${seconds} s of speech, 16 kHz WAV ${kb(wav.length)}`,
    path: ANALYSIS_PATH,
    headers: { 'content-type': 'audio/wav' },
    body: wav,
    concurrency: arg('emotion-c', 2),
    workers: arg('emotion-workers', 1),
  };
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
  return { list: [liveness, emotion].filter((w) => only === null || w.kind === only), cleanup: () => fx0.remove() };
}

async function main(): Promise<void> {
  const seconds = arg('seconds', 20);
  const warmSeconds = arg('warm-seconds', 6);
  const idleSeconds = arg('idle-seconds', 5);
  const h: HostSizes = {
    utilisation: arg('utilisation', 0.7),
    feCores: arg('fe-cores', 4),
    workerCores: arg('worker-cores', 8),
    storeCores: arg('store-cores', 8),
    nicGbps: arg('nic-gbps', 10),
  };
  const i = process.argv.indexOf('--rates');
  const rates = i === -1 ? [100, 1000, 10_000] : process.argv[i + 1]!.split(',').map(Number);
  console.log(
    `bench:capacity: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}, ${new Date().toISOString()}, ` +
      `load average ${loadAvg()}; per API: ${warmSeconds} s warm-up, ${seconds} s measured; private Redis and FerretDB, one API process`,
  );
  const { list, cleanup } = await workloads();
  try {
    const xs: Inputs[] = [];
    for (const w of list) {
      console.log(`${w.kind}: ${w.describe}, 1 API + ${w.workers} worker process(es), c=${w.concurrency} ...`);
      xs.push(await measure(w, { seconds, warmSeconds, idleSeconds }));
    }
    printInputs(xs);
    printModel(xs, h, rates);
    console.log(`\nload average at the end: ${loadAvg()}`);
  } finally {
    cleanup();
  }
}

runMain(main);
