// Burst benchmark (`npm run bench:burst`), issue 18: on the shipped defaults (real processes, private Redis
// and FerretDB, the default worker count), 30 customers × 10 liveness calls at once, then × 10 usage reads
// at once. Prints status codes, p50/p99/max latency per burst and the database errors counted in the logs.
// `-- --width 1280` sends a larger selfie (1280×960, JPEG quality 92, ~145 KB of JSON) instead of 640×480.
// `-- --flood 24` (issue 27): meanwhile a free key keeps 24 calls in flight of a 40 MP image without a face (unbilled
// 400s that cost the workers several selfies each); its answers are reported apart.
import os from 'node:os';
import sharp from 'sharp';
import { AccountService } from '../shared/accounts/account-service';
import { ApiKeyService } from '../shared/accounts/api-keys';
import { systemClock } from '../shared/billing/month';
import { loadConfig } from '../shared/config';
import { portraitAt } from '../dev/harness/sample-images';
import { arg, benchStack, f1, selfieBody } from './api';
import { loadAvg, runMain } from './support/main';

interface Shot {
  status: number;
  code: string;
  ms: number;
}

async function shoot(url: string, init: RequestInit): Promise<Shot> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, init);
    const text = await res.text();
    let code = '';
    try {
      const error = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
      code = error?.code ?? '';
      // A 503 at admission ("at capacity") and one after waiting ("within the time budget") differ in message only.
      if (res.status === 503) code += /capacity/.test(error?.message ?? '') ? ' (admission)' : ' (waited: time-out)';
    } catch {
      // not JSON
    }
    return { status: res.status, code, ms: performance.now() - t0 };
  } catch (err) {
    return { status: 0, code: String((err as { cause?: { code?: string } }).cause?.code ?? err), ms: performance.now() - t0 };
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

function report(label: string, shots: Shot[]): void {
  const tally = new Map<string, number>();
  for (const s of shots) tally.set(`${s.status}${s.code ? ` ${s.code}` : ''}`, (tally.get(`${s.status}${s.code ? ` ${s.code}` : ''}`) ?? 0) + 1);
  const ms = shots.map((s) => s.ms).sort((a, b) => a - b);
  console.log(`${label}: ${[...tally].map(([k, n]) => `${n} × ${k}`).join(', ')}`);
  console.log(`  latency ms: p50 ${f1(pct(ms, 50))}  p99 ${f1(pct(ms, 99))}  max ${f1(ms[ms.length - 1] ?? NaN)}`);
}

/** A free key keeping `inFlight` calls of a 40 MP no-face image going until stopped; null when inFlight is 0. */
async function startFlood(base: string, apiKeys: ApiKeyService, inFlight: number): Promise<{ stop(): Promise<Shot[]> } | null> {
  if (inFlight <= 0) return null;
  const key = (await apiKeys.createAccountWithKeys({ email: 'flood@example.com', plan: 'free' })).primaryKey!;
  const image = await sharp({ create: { width: 7744, height: 5163, channels: 3, background: { r: 120, g: 130, b: 140 } } })
    .jpeg({ quality: 80 })
    .toBuffer();
  const body = JSON.stringify({ image: image.toString('base64'), image_format: 'jpeg' });
  const shots: Shot[] = [];
  let on = true;
  const loops = Array.from({ length: inFlight }, async () => {
    while (on)
      shots.push(await shoot(`${base}/v1/check/liveness`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body }));
  });
  // Until the flood holds the queue: its first answers are back.
  while (on && shots.length < inFlight) await new Promise((r) => setTimeout(r, 50));
  return {
    async stop() {
      on = false;
      await Promise.all(loops);
      return shots;
    },
  };
}

const DATABASE_ERROR = /database unavailable|MongoServerSelectionError|MongoNetwork|MongoPoolCleared|MongoWaitQueueTimeout|MongoOperationTimeout/;

async function main(): Promise<void> {
  const customers = arg('customers', 30);
  const perCustomer = arg('calls', 10);
  const workers = loadConfig({ ...process.env }).LIVENESS_WORKERS;
  console.log(
    `bench:burst: ${customers} customers × ${perCustomer} calls at once, shipped defaults, ${workers} liveness worker(s); ${os.cpus().length} CPUs, load ${loadAvg()}`,
  );
  const width = arg('width', 640);
  const body = width === 640 ? (await selfieBody()).body : JSON.stringify({ image: (await portraitAt(width, 92)).toString('base64'), image_format: 'jpeg' });
  const stack = await benchStack('burst', { shipped: true });
  try {
    await stack.spawn('liveness-api');
    await Promise.all(Array.from({ length: Math.max(1, workers) }, () => stack.spawn('liveness-worker')));
    const apiKeys = new ApiKeyService(stack.models, systemClock, new AccountService(stack.models, systemClock));
    const keys: string[] = [];
    for (let i = 0; i < customers; i++) {
      keys.push((await apiKeys.createAccountWithKeys({ email: `burst-${i}@example.com`, plan: 'starter' })).primaryKey!);
    }
    const base = `http://127.0.0.1:${stack.apis[0]!.port}`;
    const flood = await startFlood(base, apiKeys, arg('flood', 0));
    const checks = await Promise.all(
      keys.flatMap((key) =>
        Array.from({ length: perCustomer }, () =>
          shoot(`${base}/v1/check/liveness`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body }),
        ),
      ),
    );
    report(`liveness: ${checks.length} calls at once (${body.length} bytes of JSON each)`, checks);
    if (flood) report(`flooding free key (40 MP, no face, ${arg('flood', 0)} in flight)`, await flood.stop());
    const usage = await Promise.all(
      keys.flatMap((key) => Array.from({ length: perCustomer }, () => shoot(`${base}/v1/usage`, { headers: { 'x-api-key': key } }))),
    );
    report(`usage: ${usage.length} reads at once`, usage);
    let billed = 0;
    for (const key of keys) {
      const res = await fetch(`${base}/v1/usage`, { headers: { 'x-api-key': key } });
      billed += ((await res.json()) as { data?: { total_calls?: number } }).data?.total_calls ?? 0;
    }
    console.log(`billed (usage total_calls): ${billed}; answered 200: ${checks.filter((s) => s.status === 200).length}`);
    const logLines = [...stack.apis, ...stack.workers].flatMap((p) => p.logs);
    const dbErrors = logLines.filter((l) => DATABASE_ERROR.test(l));
    console.log(`database errors in the logs: ${dbErrors.length}`);
    for (const line of [...new Set(dbErrors.map((l) => l.replace(/"(time|pid|requestId|reqId|hostname)":[^,]*,?/g, '').slice(0, 300)))].slice(0, 5))
      console.log(`  e.g. ${line}`);
    const refusals = logLines.filter((l) => l.includes('admission refused'));
    console.log(
      `admission refusals logged: ${refusals.length}${refusals[0] ? `; first: ${refusals[0].replace(/.*?"reason"/, '{"reason"').slice(0, 200)}` : ''}`,
    );
    console.log(`load average now: ${loadAvg()}`);
  } finally {
    await stack.close();
  }
}

runMain(main);
