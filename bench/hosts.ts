// Owns `npm run bench:hosts [-- --lanes 4 --accounts 6 --steady 40 --no-build]` (root, Linux): the liveness service
// as seven hosts, each a network namespace with its own address on 10.77.0.0/24 and its own folder (VAR_DIR,
// TMPDIR, data): Redis (AOF on), the document store (FerretDB on SQLite), two front-ends and three workers, each
// started by its production entry point (`node dist/...`, after `npm run -s build`) with only environment
// configuration. A client in the root namespace calls both front-ends the way a real client does (an
// Idempotency-Key per call; a 503, 409, 429 or a lost connection retried with the same key, on the other
// front-end), through a steady phase and then one fault at a time: a worker host cut off mid-burst, a front-end
// drained (SIGTERM) and restarted, Redis restarted, the document store unreachable for 30 s. Once the usage outbox
// is drained it reconciles every call with the store's usage events (through the front-ends' access logs, which
// pair our request ids with the client's X-Request-Id) and prints per phase: calls, answers within the budget,
// 503s, attempts without an answer, calls billed twice, usage events lost, and the time to recover. Everything
// (processes, namespaces, bridge, folders) is removed on exit, Ctrl-C or error. docs/operations.md, "Across hosts".
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { ferretDbBinary } from '../dev/engines/local-engines';
import { Ledger, sleep } from '../dev/harness/harness';
import { phonePhoto } from '../dev/harness/sample-images';
import { monthOf } from '../shared/billing/month';
import { outboxLength } from '../shared/billing/usage-outbox';
import { projectRoot } from '../shared/paths';
import { call, type Shot } from './support/measure';
import { HostNetwork, waitForListener, type Host, type HostProcess } from './support/netns';
import { loadAvg, runMain } from './support/main';

const argValue = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const LANES = argValue('lanes', 4);
const ACCOUNTS = argValue('accounts', 6);
const STEADY_S = argValue('steady', 40);
const BUILD = !process.argv.includes('--no-build');
/** `--logs DIR`: every process's output, the store's files (store-data/) and the calls without a usage event (lost.txt) are written there at the end (the hosts' own folders are removed). */
const LOGS = process.argv.includes('--logs') ? process.argv[process.argv.indexOf('--logs') + 1] : undefined;

const SUBNET = '10.77.0';
const PREFIX = '{lc}';
const DB = 'lc';
const BUDGET_MS = 10_000;
/** A real client's patience: it retries a call this many times, for at most this long, then gives up. */
const MAX_ATTEMPTS = 6;
const GIVE_UP_MS = 60_000;
const ATTEMPT_TIMEOUT_MS = BUDGET_MS + 5_000;
const API_PORT = 8080;
const OPS_PORT = 9100;
const STORE_DOWN_MS = 30_000;
/** Calls sent at once when the worker host is cut off. */
const BURST = 12;

interface Attempt {
  clientId: string;
  fe: number;
  sentAt: number;
  shot: Shot;
}

interface Call {
  key: string;
  /** The call's number: which account makes it, and which front-end its first attempt goes to. */
  index: number;
  apiKey: string;
  startedAt: number;
  attempts: Attempt[];
  okAt: number | null;
}

interface Phase {
  name: string;
  from: number;
  /** When the fault ended (link up, process ready again). */
  faultEnd: number | null;
  /** Seconds from the fault's end until it was served again, as the phase defines it. */
  recoverS: number | null;
  recoverNote: string;
}

/** The service's seven hosts and how each process is started; everything here is one host's own. */
class Deployment {
  redis!: HostProcess;
  store!: HostProcess;
  readonly fronts: HostProcess[] = [];
  readonly workers: HostProcess[] = [];
  /** Every process started, in order (for --logs). */
  readonly all: HostProcess[] = [];
  /** Every front-end process ever started (a restarted one's lines stay here for the reconciliation). */
  readonly frontLogs: string[][] = [];
  readonly hosts: Record<'redis' | 'store' | 'fe1' | 'fe2' | 'w1' | 'w2' | 'w3', Host>;
  private readonly redisPassword = randomBytes(16).toString('hex');
  private readonly appSecret = randomBytes(36).toString('base64');
  private readonly marketplaceSecret = randomBytes(36).toString('base64');

  constructor(readonly net: HostNetwork) {
    this.hosts = {
      redis: net.addHost('redis', 2),
      store: net.addHost('store', 3),
      fe1: net.addHost('fe1', 11),
      fe2: net.addHost('fe2', 12),
      w1: net.addHost('w1', 21),
      w2: net.addHost('w2', 22),
      w3: net.addHost('w3', 23),
    };
  }

  get redisUrl(): string {
    return `redis://:${this.redisPassword}@${this.hosts.redis.address}:6379`;
  }

  get mongoUrl(): string {
    return `mongodb://${this.hosts.store.address}:27017/`;
  }

  private baseEnv(host: Host): Record<string, string> {
    return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: host.dir, TMPDIR: path.join(host.dir, 'tmp') };
  }

  async startRedis(): Promise<void> {
    const h = this.hosts.redis;
    const args = ['--bind', h.address, '--port', '6379', '--protected-mode', 'no', '--requirepass', this.redisPassword];
    const data = ['--dir', path.join(h.dir, 'data'), '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--maxmemory-policy', 'noeviction'];
    fs.mkdirSync(path.join(h.dir, 'data'), { recursive: true });
    this.redis = this.spawn(h, ['redis-server', ...args, ...data], this.baseEnv(h));
    await waitForListener(h.address, 6379, 20_000, () => this.redis.proc.exitCode !== null);
  }

  async startStore(): Promise<void> {
    const h = this.hosts.store;
    const data = path.join(h.dir, 'data');
    fs.mkdirSync(data, { recursive: true });
    const args = [`--listen-addr=${h.address}:27017`, '--handler=sqlite', `--sqlite-url=file:${data}/`, `--state-dir=${data}`];
    this.store = this.spawn(h, [ferretDbBinary(), ...args, '--debug-addr=-', '--telemetry=disable', '--log-level=warn'], this.baseEnv(h));
    await waitForListener(h.address, 27017, 20_000, () => this.store.proc.exitCode !== null);
  }

  /** What compose gives every app container, with this deployment's addresses and the host's own folders. */
  private appEnv(h: Host): Record<string, string> {
    return {
      ...this.baseEnv(h),
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      HOST: '0.0.0.0',
      VAR_DIR: path.join(h.dir, 'var'),
      REDIS_URL: this.redisUrl,
      MONGODB_URI: `${this.mongoUrl}${DB}`,
      QUEUE_PREFIX: PREFIX,
      LIVENESS_BUDGET_MS: String(BUDGET_MS),
      ORT_INTRA_OP_THREADS: '1',
      EXPECTED_LIVENESS_WORKERS: '3',
      APP_SECRET: this.appSecret,
      MARKETPLACE_SECRET: this.marketplaceSecret,
      PUBLIC_BASE_URL: 'https://liveness.example',
      SECURE_COOKIES: 'true',
      LIVENESS_PORT: String(API_PORT),
      WORKER_METRICS_PORT: String(OPS_PORT),
    };
  }

  private spawn(h: Host, argv: string[], env: Record<string, string>): HostProcess {
    const p = this.net.spawn(h, argv, env, h.dir);
    this.all.push(p);
    return p;
  }

  /** Writes every process's output to `dir` (host-n.log), and what each host's folder holds (files.txt). */
  writeLogs(dir: string): void {
    fs.mkdirSync(dir, { recursive: true });
    this.all.forEach((p, n) => fs.writeFileSync(path.join(dir, `${p.host.name}-${n}.log`), p.lines.join('\n') + '\n'));
    const files = Object.values(this.hosts).flatMap((h) => (fs.readdirSync(h.dir, { recursive: true }) as string[]).map((f) => `${h.name}/${f}`));
    fs.writeFileSync(path.join(dir, 'files.txt'), files.sort().join('\n') + '\n');
    // The store's files as the run left them (FerretDB's SQLite), to read what it holds after the hosts are gone.
    fs.cpSync(path.join(this.hosts.store.dir, 'data'), path.join(dir, 'store-data'), { recursive: true });
  }

  private spawnApp(h: Host, entry: string): HostProcess {
    return this.spawn(h, [process.execPath, path.join(projectRoot, 'dist', entry)], this.appEnv(h));
  }

  async startFront(i: number): Promise<HostProcess> {
    const h = i === 0 ? this.hosts.fe1 : this.hosts.fe2;
    const p = this.spawnApp(h, 'api/liveness/main.js');
    this.fronts[i] = p;
    this.frontLogs.push(p.lines);
    await ready(p, API_PORT, 120_000);
    return p;
  }

  async startWorker(i: number): Promise<HostProcess> {
    const h = [this.hosts.w1, this.hosts.w2, this.hosts.w3][i]!;
    const p = this.spawnApp(h, 'workers/liveness/main.js');
    this.workers[i] = p;
    await ready(p, OPS_PORT, 240_000);
    return p;
  }

  frontUrl(i: number): string {
    return `http://${(i === 0 ? this.hosts.fe1 : this.hosts.fe2).address}:${API_PORT}`;
  }
}

/** Resolves when the process's /readyz (on its host's address) answers 200. */
async function ready(p: HostProcess, port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (p.proc.exitCode !== null) throw new Error(`${p.host.name} exited (${p.proc.exitCode}): ${p.lines.slice(-5).join('\n')}`);
    const r = await call(`http://${p.host.address}:${port}/readyz`, { network: SUBNET, timeoutMs: 2000 });
    if (r.status === 200) return;
    if (Date.now() > until) throw new Error(`${p.host.name} not ready within ${timeoutMs} ms: ${p.lines.slice(-5).join('\n')}`);
    await sleep(250);
  }
}

/** The worker's own count of jobs it finished with an answer (lc_jobs_total, outcome ok), from its /metrics. */
async function jobsOk(p: HostProcess): Promise<number | null> {
  const r = await call(`http://${p.host.address}:${OPS_PORT}/metrics`, { network: SUBNET, timeoutMs: 2000 });
  if (r.status !== 200) return null;
  return [...r.body.matchAll(/^lc_jobs_total\{[^}]*outcome="ok"[^}]*\} (\d+)/gm)].reduce((s, m) => s + Number(m[1]), 0);
}

/** The liveness queue's jobs by state, as a front-end's /metrics reads them at scrape time (lc_queue_jobs). */
async function queueJobs(d: Deployment): Promise<Record<string, number>> {
  const r = await call(`${d.frontUrl(1)}/metrics`, { network: SUBNET, timeoutMs: 2000 });
  const out: Record<string, number> = {};
  for (const m of r.body.matchAll(/^lc_queue_jobs\{queue="liveness",state="(\w+)"\} (\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

const RETRIED = new Set([0, 409, 429, 500, 502, 503, 504]);

/** One call as a real client makes it: same Idempotency-Key on every attempt, the other front-end on a retry. */
async function oneCall(d: Deployment, c: Call, body: string): Promise<void> {
  for (let n = 0; n < MAX_ATTEMPTS && Date.now() - c.startedAt < GIVE_UP_MS; n++) {
    const fe = (c.index + n) % 2;
    const clientId = `${c.key}.${n}`;
    const sentAt = Date.now();
    const shot = await call(`${d.frontUrl(fe)}/v1/check/liveness`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': c.apiKey, 'idempotency-key': c.key, 'x-request-id': clientId },
      body,
      timeoutMs: ATTEMPT_TIMEOUT_MS,
      network: SUBNET,
    });
    c.attempts.push({ clientId, fe, sentAt, shot });
    if (shot.status === 200) {
      c.okAt = Date.now();
      return;
    }
    if (!RETRIED.has(shot.status)) return;
    const retryAfterS = Number(shot.headers['retry-after'] ?? NaN);
    await sleep(Math.min(4000, Number.isFinite(retryAfterS) ? retryAfterS * 1000 : 500 * 2 ** n));
  }
}

function table(rows: string[][]): string {
  return rows.map((r) => `| ${r.join(' | ')} |`).join('\n');
}

async function main(): Promise<void> {
  const t0 = Date.now();
  console.log(`bench:hosts — ${LANES} client lanes, ${ACCOUNTS} accounts; load average at start: ${loadAvg()}`);
  if (BUILD) execFileSync('npm', ['run', '-s', 'build'], { cwd: projectRoot, stdio: 'inherit' });
  const net = new HostNetwork('lch', SUBNET, fs.mkdtempSync(path.join(os.tmpdir(), 'lc-hosts-')));
  let cleaning: Promise<void> | null = null;
  const cleanup = () => (cleaning ??= net.destroy());
  const onSignal = (signal: NodeJS.Signals) => {
    console.log(`\n${signal}: removing the hosts`);
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let ledger: Ledger | null = null;
  let redis: Redis | null = null;
  let deployment: Deployment | null = null;
  try {
    const d = new Deployment(net);
    deployment = d;
    await Promise.all([d.startRedis(), d.startStore()]);
    // Workers first (they create the indexes), both front-ends beside them; a host's start is its own.
    await Promise.all([0, 1, 2].map((i) => d.startWorker(i)));
    await Promise.all([0, 1].map((i) => d.startFront(i)));
    console.log(`7 hosts up after ${((Date.now() - t0) / 1000).toFixed(0)} s (load ${loadAvg()})`);
    ledger = await Ledger.open({ redis: { url: d.redisUrl }, mongo: { url: d.mongoUrl } }, DB, PREFIX);
    redis = new Redis(d.redisUrl, { maxRetriesPerRequest: 3 });
    redis.on('error', () => undefined); // Redis restarts in phase (c): the reconnects are expected
    const accounts = await Promise.all(Array.from({ length: ACCOUNTS }, () => ledger!.account('business')));
    const photo = await phonePhoto();
    const body = JSON.stringify({ image: photo.toString('base64'), image_format: 'jpeg' });
    console.log(`client: ${accounts.length} business accounts, a ${(photo.length / 1024).toFixed(0)} KB phone photo per call`);

    const run = randomBytes(3).toString('hex');
    const calls: Call[] = [];
    const phases: Phase[] = [];
    let stop = false;
    const newCall = (): Call => {
      const index = calls.length;
      const c: Call = { key: `hosts-${run}-${index}`, index, apiKey: accounts[index % accounts.length]!.key, startedAt: Date.now(), attempts: [], okAt: null };
      calls.push(c);
      return c;
    };
    const phase = (name: string): Phase => {
      const p: Phase = { name, from: Date.now(), faultEnd: null, recoverS: null, recoverNote: '' };
      phases.push(p);
      console.log(`${new Date().toISOString().slice(11, 19)} ${name} (load ${loadAvg()})`);
      return p;
    };
    /** Seconds from `from` until an attempt sent after it (to front-end `fe`, when given) was answered 200. */
    const firstOkAfter = async (from: number, fe: number | null, waitMs: number): Promise<number | null> => {
      const until = Date.now() + waitMs;
      for (;;) {
        const ok = calls
          .flatMap((c) => c.attempts)
          .filter((a) => a.sentAt >= from && a.shot.status === 200 && (fe === null || a.fe === fe))
          .map((a) => a.sentAt + a.shot.ms);
        if (ok.length > 0) return (Math.min(...ok) - from) / 1000;
        if (Date.now() > until) return null;
        await sleep(200);
      }
    };

    phase('steady');
    const lanes = Array.from({ length: LANES }, async () => {
      while (!stop) {
        await oneCall(d, newCall(), body);
        await sleep(50);
      }
    });
    await sleep(STEADY_S * 1000);

    // (a) A worker host cut off mid-burst: its jobs in flight are lost to it; the others serve the retries.
    const pa = phase('worker host cut off mid-burst (link down 20 s)');
    await sleep(3000);
    // The burst: BURST calls at once on top of the lanes, so every worker holds a job and more wait when the link goes.
    const burst = Array.from({ length: BURST }, () => oneCall(d, newCall(), body));
    // Cut once every worker holds a job and more wait (so the cut worker surely holds one), or after 10 s.
    for (let until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
      const q = await queueJobs(d);
      if ((q.active ?? 0) >= 3 && (q.waiting ?? 0) >= 1) break;
    }
    net.cut(d.hosts.w1);
    await sleep(20_000);
    net.restore(d.hosts.w1);
    pa.faultEnd = Date.now();
    const before = await jobsOk(d.workers[0]!);
    for (let until = Date.now() + 30_000; Date.now() < until; await sleep(250)) {
      const now = await jobsOk(d.workers[0]!);
      if (before !== null && now !== null && now > before) {
        pa.recoverS = (Date.now() - pa.faultEnd) / 1000;
        break;
      }
    }
    pa.recoverNote = 'link up → the cut worker finishes a job again';
    await sleep(Math.max(0, pa.faultEnd + 15_000 - Date.now()));

    // (b) A front-end drained (SIGTERM: not ready, finishes what it holds, exits) and started again.
    const pb = phase('front-end drained and restarted');
    await sleep(3000);
    await net.stop(d.fronts[0]!, BUDGET_MS + 5000);
    await d.startFront(0);
    pb.faultEnd = Date.now();
    pb.recoverS = await firstOkAfter(pb.faultEnd, 0, 30_000);
    pb.recoverNote = 'ready again → its first 200';
    await sleep(Math.max(0, pb.faultEnd + 15_000 - Date.now()));

    // (c) Redis restarted (SIGTERM: the AOF is flushed; the same folder on start).
    const pc = phase('Redis restarted (AOF)');
    await sleep(3000);
    await net.stop(d.redis);
    await d.startRedis();
    pc.faultEnd = Date.now();
    pc.recoverS = await firstOkAfter(pc.faultEnd, null, 30_000);
    pc.recoverNote = 'listening again → first 200';
    await sleep(Math.max(0, pc.faultEnd + 15_000 - Date.now()));

    // (d) The document store unreachable for 30 s (its link down), then back.
    const pd = phase('document store unreachable (30 s)');
    await sleep(3000);
    net.cut(d.hosts.store);
    await sleep(STORE_DOWN_MS);
    net.restore(d.hosts.store);
    pd.faultEnd = Date.now();
    pd.recoverS = await firstOkAfter(pd.faultEnd, null, 30_000);
    pd.recoverNote = 'link up → first 200';
    await sleep(Math.max(0, pd.faultEnd + 20_000 - Date.now()));
    stop = true;
    await Promise.all([...lanes, ...burst]);
    const loadAtEnd = loadAvg();

    // Reconcile once the drainers wrote every event (the outbox is empty).
    const drainFrom = Date.now();
    // Every partition's stream (shared/redis-partitions.ts), and the one of the layout before partitions.
    while ((await outboxLength(redis, PREFIX)) > 0 && Date.now() - drainFrom < 120_000) await sleep(250);
    const outboxLeft = await outboxLength(redis, PREFIX);
    console.log(`outbox drained in ${((Date.now() - drainFrom) / 1000).toFixed(1)} s (${outboxLeft} entries left)`);
    const ids = accounts.map((a) => a.customerId);
    const events = await ledger.models.UsageEvent.find({ service: 'liveness', customerId: { $in: ids } }, { _id: 1 }).lean();
    const counters = await ledger.models.UsageCounter.find({ service: 'liveness', owner: { $in: ids }, month: monthOf(new Date()) }, { used: 1 }).lean();
    const credits = await Promise.all(ids.map((id) => ledger!.credits(id)));
    // Our request id of every attempt that reached a front-end, by the client's X-Request-Id (from the access logs).
    const serverIds = new Map<string, string[]>();
    for (const line of d.frontLogs.flat()) {
      if (!line.includes('clientRequestId')) continue;
      try {
        const e = JSON.parse(line) as { requestId?: string; clientRequestId?: string };
        if (!e.requestId || !e.clientRequestId) continue;
        const key = e.clientRequestId.slice(0, e.clientRequestId.lastIndexOf('.'));
        const list = serverIds.get(key) ?? [];
        if (!list.includes(e.requestId)) list.push(e.requestId);
        serverIds.set(key, list);
      } catch {
        // not a JSON line
      }
    }
    const eventIds = new Set(events.map((e) => String(e._id)));
    const matched = new Set<string>();
    const chargesOf = (c: Call): number => {
      const mine = new Set([...(serverIds.get(c.key) ?? []), ...c.attempts.map((a) => a.shot.requestId).filter((x): x is string => !!x)]);
      let n = 0;
      for (const id of mine)
        if (eventIds.has(id)) {
          n++;
          matched.add(id);
        }
      return n;
    };

    const rows: string[][] = [
      [
        'Phase',
        'Calls',
        '200 within 10 s',
        '200 later',
        'Calls without a 200',
        '503 answers',
        'Attempts without an answer',
        'Billed twice',
        'Events lost',
        'Billed, no 200',
        'Recovered after',
      ],
      ['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---'],
    ];
    const details: string[] = [];
    let totalOk = 0;
    for (const [i, p] of phases.entries()) {
      const to = phases[i + 1]?.from ?? Infinity;
      const mine = calls.filter((c) => c.startedAt >= p.from && c.startedAt < to);
      const ok = mine.filter((c) => c.okAt !== null);
      totalOk += ok.length;
      const attempts = mine.flatMap((c) => c.attempts);
      const charges = mine.map((c) => ({ c, n: chargesOf(c) }));
      const codes = new Map<string, number>();
      for (const a of attempts) {
        const k = `${a.shot.status}${a.shot.code ? ` ${a.shot.code}` : ''}`;
        codes.set(k, (codes.get(k) ?? 0) + 1);
      }
      rows.push([
        p.name,
        String(mine.length),
        String(ok.filter((c) => c.okAt! - c.startedAt <= BUDGET_MS).length),
        String(ok.filter((c) => c.okAt! - c.startedAt > BUDGET_MS).length),
        String(mine.length - ok.length),
        String(attempts.filter((a) => a.shot.status === 503).length),
        String(attempts.filter((a) => a.shot.status === 0).length),
        String(charges.filter(({ n }) => n > 1).length),
        String(charges.filter(({ c, n }) => c.okAt !== null && n === 0).length),
        String(charges.filter(({ c, n }) => c.okAt === null && n > 0).length),
        p.recoverS === null ? (p.faultEnd === null ? '—' : 'not within 30 s') : `${p.recoverS.toFixed(1)} s (${p.recoverNote})`,
      ]);
      details.push(
        `- ${p.name}: ${attempts.length} attempts: ${[...codes]
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `${n} × ${k}`)
          .join(', ')}`,
      );
    }
    if (LOGS) {
      // Our request ids of the calls answered 200 without a usage event, one call per line (to look up in the logs and the store's copy).
      const lost = calls.filter((c) => c.okAt !== null && chargesOf(c) === 0).map((c) => (serverIds.get(c.key) ?? []).join(' '));
      fs.mkdirSync(LOGS, { recursive: true });
      fs.writeFileSync(path.join(LOGS, 'lost.txt'), lost.join('\n') + (lost.length > 0 ? '\n' : ''));
    }
    const used = credits.reduce((s, c) => s + c.used, 0);
    const counted = counters.reduce((s, c) => s + (c.used ?? 0), 0);
    const unmatched = [...eventIds].filter((id) => !matched.has(id)).length;
    const reservationsLeft = credits.reduce((s, c) => s + c.pending.length, 0);
    // A reservation left behind: which phase's call made it (its release met a fault; never charged).
    const phaseOfRequest = (rid: string): string => {
      const key = [...serverIds].find(([, list]) => list.includes(rid))?.[0];
      const c = calls.find((x) => x.key === key);
      return c ? ([...phases].reverse().find((p) => p.from <= c.startedAt)?.name ?? '?') : 'no call';
    };
    const leftBy = credits.flatMap((c) => c.pending.map((f) => phaseOfRequest(f.slice(2))));
    console.log(`\nload average at the end of the load: ${loadAtEnd}; run took ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
    console.log(table(rows));
    console.log(`\n${details.join('\n')}`);
    console.log(
      `\nledger: ${totalOk} calls answered 200; ${events.length} usage events in the store (${unmatched} not matched to a call); ` +
        `credits used (Redis) ${used}; usage counters (store) ${counted}; reservations left ${reservationsLeft}${leftBy.length > 0 ? ` (${leftBy.join(', ')})` : ''}; outbox entries left ${outboxLeft}`,
    );
    const ledgerOk = events.length === totalOk && used === totalOk && counted === totalOk && unmatched === 0 && outboxLeft === 0;
    const perCall = rows.slice(2).every((r) => r[7] === '0' && r[8] === '0');
    console.log(ledgerOk && perCall ? 'billing: every 200 has exactly one usage event, and nothing else was charged' : 'billing: MISMATCH (see above)');
    if (!(ledgerOk && perCall)) process.exitCode = 1;
  } finally {
    if (LOGS) deployment?.writeLogs(LOGS);
    redis?.disconnect();
    await ledger?.close().catch(() => undefined);
    await cleanup();
    console.log(`hosts removed; load average ${loadAvg()}`);
  }
}

runMain(main);
