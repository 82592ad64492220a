// End-to-end benchmark of the liveness API (`npm run bench:api [-- --seconds 8 --rounds 3 --warm-seconds 10 --width 1280]`):
// one API process and two worker processes (real processes, private Redis and FerretDB), a phone-sized selfie JPEG
// (1280x960, ~109 KB; `--width 640`: the 640x480 one of the earlier runs), p50/p99 at concurrency 1 and 16 and
// throughput, against the in-process engine (median ms, and two engines in two processes). Its two targets, from the
// same run: the handler's share of the service's CPU per call at c=16 and the time the service adds at the client at
// c=1 (client p50 minus the in-process engine's median on the same photo, taken just before each round). Then where
// the time goes, per stage, measured against the same engines.
// Also exports the process fixture that bench/scaling.ts uses.
import { execFileSync, fork } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import { startFerretDb, startRedis, type Engine } from '../dev/engines/local-engines';
import { spawnService, type ServiceKind, type ServiceProcess } from '../dev/harness/processes';
import { portrait, portraitAt } from '../dev/harness/sample-images';
import { connectMongo } from '../shared/db/mongo';
import { createModels, ensureIndexes, type Models } from '../shared/db/models';
import { AccountService } from '../shared/accounts/account-service';
import { ApiKeyService } from '../shared/accounts/api-keys';
import { systemClock } from '../shared/billing/month';
import { createRedis, closeRedis } from '../shared/redis';
import { loadConfig } from '../shared/config';
import { LivenessEngine } from '../workers/liveness/engine/index';
import { median, timeMedian } from './timing';
import { loadAvg, runMain } from './support/main';

export { median };

// autocannon ships no types; this is the part of its API used here.
interface AutocannonResult {
  latency: { p50: number; p99: number; average: number };
  requests: { average: number };
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;

export const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '-');
export const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};

export interface BenchStack {
  env: Record<string, string>;
  redisPort: number;
  mongoPort: number;
  models: Models;
  key: string;
  /** The account the key belongs to (an emotion token for it bills the same account). */
  customerId: string;
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  spawn(kind: ServiceKind): Promise<ServiceProcess>;
  close(): Promise<void>;
}

/**
 * Private Redis and FerretDB in a temp dir, an account on a paid plan, and a way to spawn the real processes.
 * `shipped`: the processes run on the shipped defaults (no throttle or backlog override), as bench:burst needs.
 */
export async function benchStack(label: string, o: { shipped?: boolean; env?: Record<string, string> } = {}): Promise<BenchStack> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lc-bench-${label}-`));
  const engines: Engine[] = [];
  const redis = await startRedis({ dir: path.join(dir, 'redis') });
  engines.push(redis);
  const mongo = await startFerretDb({ dataDir: path.join(dir, 'ferretdb') });
  engines.push(mongo);
  const dbName = `bench_${label}`;
  const env: Record<string, string> = {
    REDIS_URL: redis.url,
    MONGODB_URI: `${mongo.url}${dbName}`,
    QUEUE_PREFIX: `{bench-${label}}`,
    APP_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    LOG_LEVEL: 'warn',
    // One key drives all the load: the fair-use throttle and backlog shedding are not what is measured.
    ...(o.shipped ? {} : { THROTTLE_BURST: '1000000', THROTTLE_RATE_PER_SEC: '1000000', MAX_BACKLOG_PER_WORKER: '1000' }),
    ...o.env,
  };
  const conn: Connection = await connectMongo(mongo.url, dbName);
  const models = createModels(conn);
  await ensureIndexes(models);
  const created = await new ApiKeyService(models, systemClock, new AccountService(models, systemClock)).createAccountWithKeys({
    email: `bench-${label}@example.com`,
    plan: 'enterprise',
    monthlyLimit: 10_000_000,
  });
  const procs: ServiceProcess[] = [];
  const stack: BenchStack = {
    env,
    redisPort: redis.port,
    mongoPort: mongo.port,
    models,
    key: created.primaryKey!,
    customerId: created.account._id,
    apis: [],
    workers: [],
    async spawn(kind) {
      const p = await spawnService(kind, env);
      procs.push(p);
      await p.ready(120_000);
      (kind.endsWith('-api') ? stack.apis : stack.workers).push(p);
      return p;
    },
    async close() {
      await Promise.all(procs.map((p) => p.stop(15_000).catch(() => p.kill9())));
      await conn.close();
      for (const e of engines.reverse()) await e.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}

/** The 640x480 selfie JPEG of the tests, as the request body of POST /v1/check/liveness. */
export async function selfieBody(): Promise<{ jpeg: Buffer; body: string }> {
  const jpeg = await portrait();
  return { jpeg, body: JSON.stringify({ image: jpeg.toString('base64'), image_format: 'jpeg' }) };
}

/** The bench's photo: 640 = the tests' selfie; wider = the same portrait at that width, quality 92 (1280: ~109 KB, a phone's selfie). */
const benchPhoto = (width: number): Promise<Buffer> => (width === 640 ? portrait() : portraitAt(width, 92));

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  bad: number;
  /** Requests of the warm-up run before the measured one (their CPU lands in the same /proc counters). */
  warmup: number;
}

/** autocannon against one or more API processes (round-robin across them), after a short warm-up. */
export async function load(ports: number[], key: string, body: string, connections: number, seconds: number): Promise<LoadResult> {
  const opts = (duration: number) => ({
    url: ports.map((p) => `http://127.0.0.1:${p}/v1/check/liveness`),
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body,
    connections,
    duration,
    timeout: 30,
  });
  // autocannon with several urls splits connections across them; keep it even.
  const w = await autocannon(opts(2));
  const r = await autocannon(opts(seconds));
  return {
    rps: r['2xx'] / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    ok: r['2xx'],
    bad: r.non2xx + r.errors + r.timeouts,
    warmup: w['2xx'] + w.non2xx,
  };
}

/** The engine in this process, as a worker loads it. */
async function loadEngine(): Promise<LivenessEngine> {
  const cfg = loadConfig();
  return LivenessEngine.load({ modelsDir: cfg.MODELS_DIR, intraOpThreads: cfg.ORT_INTRA_OP_THREADS, fakeThreshold: cfg.FAKE_THRESHOLD });
}

/**
 * Concurrency 1 measured at the client to the tenth of a millisecond (autocannon's histogram counts whole ms): one
 * keep-alive connection, one call after another for `seconds`, each timed from its write to its last byte.
 */
async function sequentialCalls(port: number, key: string, body: string, seconds: number): Promise<{ ms: number[]; bad: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const payload = Buffer.from(body);
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/check/liveness',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': payload.length, 'x-api-key': key },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - t0 : -1));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const ms: number[] = [];
  let bad = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t = await one();
    if (t < 0) bad++;
    else ms.push(t);
  }
  agent.destroy();
  return { ms, bad };
}

/** CPU-ms one analysis costs this process (user + system, all threads), after warm-up. */
async function engineCpuMs(engine: LivenessEngine, jpeg: Buffer, runs: number): Promise<number> {
  for (let i = 0; i < 5; i++) await engine.analyze(jpeg, 'jpeg');
  const before = process.cpuUsage();
  for (let i = 0; i < runs; i++) await engine.analyze(jpeg, 'jpeg');
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / runs;
}

/** Median engine time in this process for the image (analyze), after warm-up. */
async function engineMs(engine: LivenessEngine, jpeg: Buffer, runs: number): Promise<number> {
  for (let i = 0; i < 5; i++) await engine.analyze(jpeg, 'jpeg');
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await engine.analyze(jpeg, 'jpeg');
    t.push(performance.now() - t0);
  }
  return median(t);
}

/** Child mode: analyze the image in a loop for `ms` after the parent's go, report how many were done. */
async function engineLoopChild(): Promise<void> {
  const engine = await loadEngine();
  const jpeg = await benchPhoto(arg('width', 1280));
  for (let i = 0; i < 5; i++) await engine.analyze(jpeg, 'jpeg');
  process.send!({ ready: true });
  process.once('message', async (m: { ms: number }) => {
    let n = 0;
    const end = performance.now() + m.ms;
    while (performance.now() < end) {
      await engine.analyze(jpeg, 'jpeg');
      n++;
    }
    process.send!({ n });
    process.exit(0);
  });
}

/** Two engines in two processes at once, the in-process ceiling of two workers on this machine (analyses/s). */
async function twoEnginesRps(ms: number, width: number): Promise<number> {
  const kids = [0, 1].map(() => fork(__filename, ['--engine-loop', '--width', String(width)], { execArgv: ['--require', 'tsx/cjs'], stdio: 'inherit' }));
  await Promise.all(kids.map((k) => new Promise((r) => k.once('message', r))));
  const counts = Promise.all(kids.map((k) => new Promise<number>((r) => k.once('message', (m: { n: number }) => r(m.n)))));
  for (const k of kids) k.send({ ms });
  const n = await counts;
  return (n[0]! + n[1]!) / (ms / 1000);
}

/** The pid listening on a loopback port (the engines do not expose theirs). */
function pidOnPort(port: number): number | null {
  try {
    const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** utime + stime of a process, in CPU-seconds. */
function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks; 100 Hz on Linux
  } catch {
    return NaN;
  }
}

/** CPU time per process over `fn`, as CPU-milliseconds per request served. */
export async function cpuPerRequest(
  procs: Array<[string, number | null]>,
  fn: () => Promise<LoadResult>,
): Promise<{ result: LoadResult; rows: Array<[string, number]> }> {
  const all: Array<[string, number | null]> = [...procs, ['load generator (this process)', process.pid]];
  const before = all.map(([, pid]) => (pid ? cpuSeconds(pid) : NaN));
  const result = await fn();
  // The CPU counters span the warm-up run too: divide by every request served in that time.
  const served = result.ok + result.bad + result.warmup;
  const rows = all.map(([name, pid], i): [string, number] => [name, pid ? ((cpuSeconds(pid) - before[i]!) * 1000) / served : NaN]);
  return { result, rows };
}

/** The processes of a stack, named, with their pids (engines found by their port). */
export function stackPids(stack: BenchStack): Array<[string, number | null]> {
  return [
    ...stack.apis.map((p, i): [string, number | null] => [`liveness API ${i + 1}`, p.proc.pid ?? null]),
    ...stack.workers.map((p, i): [string, number | null] => [`liveness worker ${i + 1}`, p.proc.pid ?? null]),
    ['redis-server', pidOnPort(stack.redisPort)],
    ['FerretDB', pidOnPort(stack.mongoPort)],
  ];
}

/** sum and count of a histogram in a Prometheus text page, matching label fragments (sum in seconds). */
function histSumCount(text: string, name: string, labels: string[] = []): { sum: number; count: number } {
  const pick = (suffix: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`${name}_${suffix}`) && labels.every((x) => l.includes(x)))
      .reduce((s, l) => s + Number(l.split(' ').pop()), 0);
  return { sum: pick('sum'), count: pick('count') };
}

interface C1Split {
  requestMs: number;
  engineMs: number;
}

/** Mean request time at the API and mean engine time (its total stage) in the workers, from the /metrics of both. */
async function requestAndEngine(stack: BenchStack): Promise<{ api: { sum: number; count: number }; stages: { sum: number; count: number } }> {
  const apiText = await (await fetch(`http://127.0.0.1:${stack.apis[0]!.port}/metrics`)).text();
  const api = histSumCount(apiText, 'http_request_duration_seconds', ['status="200"', 'check/liveness']);
  const stages = { sum: 0, count: 0 };
  for (const w of stack.workers) {
    const text = await (await fetch(`http://127.0.0.1:${w.port}/metrics`)).text();
    // The engine's own "total" stage: decode to verdict, one per analysis.
    const total = histSumCount(text, 'lc_inference_stage_seconds', ['stage="total"']);
    stages.sum += total.sum;
    stages.count += total.count;
  }
  return { api, stages };
}

/** Over `fn`: the API's mean time per answered request and the engine's mean time per analysis, both in ms. */
async function c1Split(stack: BenchStack, fn: () => Promise<LoadResult>): Promise<{ result: LoadResult; split: C1Split }> {
  const a = await requestAndEngine(stack);
  const result = await fn();
  const b = await requestAndEngine(stack);
  return {
    result,
    split: {
      requestMs: ((b.api.sum - a.api.sum) * 1000) / (b.api.count - a.api.count),
      engineMs: ((b.stages.sum - a.stages.sum) * 1000) / (b.stages.count - a.stages.count),
    },
  };
}

/** sum/count of a histogram in a Prometheus text page, matching label fragments; ms. */
export function histMeanMs(text: string, name: string, labels: string[] = []): number {
  const pick = (suffix: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`${name}_${suffix}`) && labels.every((x) => l.includes(x)))
      .reduce((s, l) => s + Number(l.split(' ').pop()), 0);
  const count = pick('count');
  return count ? (pick('sum') / count) * 1000 : NaN;
}

/** Sum of a counter over the stack's workers' /metrics pages (for lc_job_handler_cpu_seconds_total: CPU-seconds). */
export async function workersCounter(stack: BenchStack, name: string): Promise<number> {
  let sum = 0;
  for (const w of stack.workers) {
    const text = await (await fetch(`http://127.0.0.1:${w.port}/metrics`)).text();
    for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.split(' ').pop());
  }
  return sum;
}

/** The pieces of a request outside the engine, each timed alone against the bench's own Redis and FerretDB. */
async function stageCosts(stack: BenchStack, body: string, jpeg: Buffer): Promise<Array<[string, number]>> {
  const apiKeys = new ApiKeyService(stack.models, systemClock, new AccountService(stack.models, systemClock));
  const redis = createRedis(stack.env.REDIS_URL!, 'producer', 'bench-probe');
  const sub = createRedis(stack.env.REDIS_URL!, 'subscriber', 'bench-probe-sub');
  const channel = `{bench}:probe:${randomUUID()}`;
  let resolveMsg: (() => void) | null = null;
  sub.on('message', () => resolveMsg?.());
  await sub.subscribe(channel);
  const rows: Array<[string, number]> = [
    ['auth: API key + account lookups (2 MongoDB finds, FerretDB)', await timeMedian(100, () => apiKeys.authenticate(stack.key))],
    ['JSON.parse of the body + base64 decode', await timeMedian(200, () => Buffer.from((JSON.parse(body) as { image: string }).image, 'base64'))],
    ['Redis round trip (PING)', await timeMedian(200, () => redis.ping())],
    [
      'Redis SET of the image bytes + GETDEL',
      await timeMedian(200, async () => {
        await redis.set('{bench}:probe:payload', jpeg, 'PX', 10_000);
        await redis.getdelBuffer('{bench}:probe:payload');
      }),
    ],
    [
      'result bus: SET result + PUBLISH -> subscriber',
      await timeMedian(200, async () => {
        const got = new Promise<void>((r) => (resolveMsg = r));
        await redis.set('{bench}:probe:result', '{"ok":true}', 'PX', 10_000);
        await redis.publish(channel, '{"jobId":"x"}');
        await got;
      }),
    ],
    [
      'usage event insert (MongoDB, FerretDB)',
      await timeMedian(100, () =>
        stack.models.UsageEvent.create({
          _id: randomUUID(),
          service: 'liveness',
          month: '2099-01',
          hour: '2099-01-01T00',
          billable: false,
          latencyMs: 1,
          at: new Date(),
        }),
      ),
    ],
  ];
  await sub.quit();
  await closeRedis(redis);
  return rows;
}

async function main(): Promise<void> {
  const seconds = arg('seconds', 8);
  const rounds = arg('rounds', 3);
  const warmSeconds = arg('warm-seconds', 10);
  const width = arg('width', 1280);
  console.log(
    `bench:api: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}, ${warmSeconds} s of warm-up at c=16, then ${rounds} rounds of ${seconds} s per setting, medians shown; load ${loadAvg()}`,
  );
  const jpeg = await benchPhoto(width);
  const body = JSON.stringify({ image: jpeg.toString('base64'), image_format: 'jpeg' });
  console.log(`image: ${width}x${(width * 3) / 4} selfie JPEG, ${jpeg.length} bytes (${body.length} bytes of JSON)`);

  // The in-process figures first, on an idle machine.
  const inProcess = await loadEngine();
  const engine = await engineMs(inProcess, jpeg, 40);
  const engineCpu = await engineCpuMs(inProcess, jpeg, 40);
  const twoEstimate = 2 * (1000 / engine);
  const twoMeasured = await twoEnginesRps(6000, width);

  const stack = await benchStack('api');
  try {
    await stack.spawn('liveness-api');
    await Promise.all([stack.spawn('liveness-worker'), stack.spawn('liveness-worker')]);
    const port = stack.apis[0]!.port;
    const c1: LoadResult[] = [];
    const c16: LoadResult[] = [];
    const cpu: Array<Array<[string, number]>> = [];
    // The handler's CPU per job inside the workers during the c=16 rounds (same contention as the service total).
    const engineLoaded: number[] = [];
    // At c=1: the API's own mean request time and the engine's mean time in the workers, measured together.
    const c1Splits: C1Split[] = [];
    // At c=1, per round: the client's median minus the in-process engine's median on the same photo just before.
    const c1Added: Array<{ client: number; engine: number }> = [];
    const handlerCpu = () => workersCounter(stack, 'lc_job_handler_cpu_seconds_total');
    // Steady state, as a service that has run a while: the processes' JIT has compiled the request path. A fresh
    // process runs it in the interpreter for its first few hundred requests (about 1 ms more per request at c=1).
    if (warmSeconds > 0) await load([port], stack.key, body, 16, warmSeconds);
    for (let r = 0; r < rounds; r++) {
      const engineNow = await engineMs(inProcess, jpeg, 30);
      const one = await c1Split(stack, async () => {
        const seq = await sequentialCalls(port, stack.key, body, seconds);
        const sorted = [...seq.ms].sort((a, b) => a - b);
        return {
          rps: seq.ms.length / seconds,
          p50: median(seq.ms),
          p99: sorted[Math.floor(sorted.length * 0.99)] ?? NaN,
          ok: seq.ms.length,
          bad: seq.bad,
          warmup: 0,
        };
      });
      c1.push(one.result);
      c1Splits.push(one.split);
      c1Added.push({ client: one.result.p50, engine: engineNow });
      let cpuBefore = 0;
      const measured = await cpuPerRequest(stackPids(stack), async () => {
        cpuBefore = await handlerCpu();
        return load([port], stack.key, body, 16, seconds);
      });
      engineLoaded.push((((await handlerCpu()) - cpuBefore) * 1000) / (measured.result.ok + measured.result.bad + measured.result.warmup));
      c16.push(measured.result);
      cpu.push(measured.rows);
    }
    const m = (xs: LoadResult[], k: keyof LoadResult) => median(xs.map((x) => x[k]));
    const bad = [...c1, ...c16].reduce((s, x) => s + x.bad, 0);

    console.log(`\nin-process engine (LivenessEngine.analyze, the same ${width}-wide JPEG)`);
    console.log(
      `  median                         ${f1(engine)} ms (before the rounds; ${c1Added.map((x) => f1(x.engine)).join(', ')} ms just before each c=1 round)`,
    );
    console.log(`  two workers, estimate          ${f1(twoEstimate)} /s  (2 x 1000 / median)`);
    console.log(`  two engines in two processes   ${f1(twoMeasured)} /s  (measured, 6 s)`);
    console.log('\nthrough the API (1 API process, 2 worker processes; the clients on this machine too)');
    console.log('  concurrency     p50 ms   p99 ms    req/s   (per round: req/s)');
    console.log(
      `  c=1          ${f1(m(c1, 'p50')).padStart(9)}${f1(m(c1, 'p99')).padStart(9)}${f1(m(c1, 'rps')).padStart(9)}   ${c1.map((x) => f1(x.rps)).join(', ')}   (one keep-alive connection, timed to 0.1 ms)`,
    );
    console.log(
      `  c=16         ${f1(m(c16, 'p50')).padStart(9)}${f1(m(c16, 'p99')).padStart(9)}${f1(m(c16, 'rps')).padStart(9)}   ${c16.map((x) => f1(x.rps)).join(', ')}   (autocannon)`,
    );
    console.log(`  non-2xx or errors: ${bad}`);
    const ratioMeasured = m(c16, 'rps') / twoMeasured;
    const ratioEstimate = m(c16, 'rps') / twoEstimate;
    console.log(`  c=16 req/s / two engines: ${(ratioMeasured * 100).toFixed(0)} % of measured, ${(ratioEstimate * 100).toFixed(0)} % of estimate`);

    // Where the time goes: the processes' own histograms over the whole run, then each piece alone.
    const apiText = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const workerTexts = await Promise.all(stack.workers.map(async (w) => (await fetch(`http://127.0.0.1:${w.port}/metrics`)).text()));
    const wmean = (name: string, labels: string[] = []) => median(workerTexts.map((t) => histMeanMs(t, name, labels)));
    console.log("\nper stage, mean over the whole run from the processes' /metrics (ms; c=16 dominates the mix)");
    console.log(
      `  API http_request_duration (POST /v1/check/liveness, 200)  ${f1(histMeanMs(apiText, 'http_request_duration_seconds', ['status="200"', 'check/liveness']))}`,
    );
    console.log(`  worker lc_job_wait_seconds (queueing)                      ${f1(wmean('lc_job_wait_seconds'))}`);
    console.log(`  worker lc_job_processing_seconds (take -> publish)         ${f1(wmean('lc_job_processing_seconds', ['outcome="ok"']))}`);
    for (const stage of ['decode', 'detect', 'spoof']) {
      console.log(`    inference stage ${stage.padEnd(8)}                                 ${f1(wmean('lc_inference_stage_seconds', [`stage="${stage}"`]))}`);
    }
    console.log('\nCPU time per request at c=16, per process (CPU-ms per request; median of rounds; 2 cores = 2000 CPU-ms/s)');
    let total = 0;
    for (let i = 0; i < cpu[0]!.length; i++) {
      const v = median(cpu.map((rows) => rows[i]![1]));
      // The service's CPU: every process the supervisor would run, not the load generator.
      if (!cpu[0]![i]![0].startsWith('load generator')) total += Number.isFinite(v) ? v : 0;
      console.log(`  ${cpu[0]![i]![0].padEnd(32)} ${f1(v).padStart(7)}`);
    }
    console.log(`  ${'service total (without the load generator)'.padEnd(32)} ${f1(total).padStart(7)}   -> at most ${f1(2000 / total)} req/s on 2 cores`);
    const engineInWorkers = median(engineLoaded);
    const workersCpu = median(cpu.map((rows) => rows.filter(([n]) => n.startsWith('liveness worker')).reduce((sum, [, v]) => sum + v, 0)));
    console.log(
      `    of which the handler (lc_job_handler_cpu_seconds_total)  ${f1(engineInWorkers)};  worker glue outside it ${f1(workersCpu - engineInWorkers)}`,
    );
    console.log(
      `  in-process engine alone, idle machine: ${f1(engineCpu)} CPU-ms per analysis (${((engineCpu / total) * 100).toFixed(0)} % of the service total)`,
    );
    const addedSame = median(c1Splits.map((x) => x.requestMs - x.engineMs));
    console.log(
      `  at c=1, inside the service: API mean request ${f1(median(c1Splits.map((x) => x.requestMs)))} ms - engine in the workers (its total stage) ${f1(median(c1Splits.map((x) => x.engineMs)))} ms = ${f1(addedSame)} ms`,
    );
    // The two targets, from this run: what the capacity model multiplies (docs/operations.md).
    const handlerShare = engineInWorkers / total;
    const added = median(c1Added.map((x) => x.client - x.engine));
    const addedShare = added / median(c1Added.map((x) => x.engine));
    console.log('\ntargets (this run)');
    console.log(
      `  handler share of the service's CPU per call at c=16: ${(handlerShare * 100).toFixed(1)} %  (${f1(engineInWorkers)} of ${f1(total)} CPU-ms; target >= 85 %: ${handlerShare >= 0.85 ? 'met' : 'MISSED'})`,
    );
    console.log(
      `  added at the client at c=1: ${f1(added)} ms = ${(addedShare * 100).toFixed(1)} % of the engine's median  (client p50 - in-process engine median, per round: ${c1Added.map((x) => f1(x.client - x.engine)).join(', ')} ms; target <= 15 %: ${addedShare <= 0.15 ? 'met' : 'MISSED'})`,
    );
    console.log(`  load average now: ${loadAvg()} (other sessions share this machine)`);
    console.log('\neach piece alone, median ms (this machine, idle processes)');
    for (const [name, ms] of await stageCosts(stack, body, jpeg)) console.log(`  ${name.padEnd(60)} ${ms.toFixed(2)}`);
  } finally {
    await stack.close();
  }
}

if (process.argv.includes('--engine-loop')) {
  void engineLoopChild();
} else if (require.main === module) {
  runMain(main);
}
