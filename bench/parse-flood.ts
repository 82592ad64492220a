// Another tenant's GET /v1/usage while a free account floods the liveness API with 10 MB bodies whose last Base64
// character is bad (`npx tsx bench/parse-flood.ts [-- --seconds 15 --flood 4]`), issue 41's "the front-end's own
// work is free": real processes on private engines and the shipped defaults (one API, one worker). The other tenant
// reads its usage every 50 ms, first alone for 5 s, then during the flood; prints p50/p99 of each, the flood's
// answers and the API process's CPU over the flood. Results: bench/results/body-parse.md.
import fs from 'node:fs';
import { AccountService } from '../shared/accounts/account-service';
import { ApiKeyService } from '../shared/accounts/api-keys';
import { systemClock } from '../shared/billing/month';
import { arg, benchStack, f1 } from './api';
import { percentile } from '../dev/harness/harness';
import { loadAvg, runMain } from './support/main';

/** utime + stime of a process in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Reads `url` every 50 ms until `until`; each read's milliseconds. */
async function reads(url: string, key: string, until: () => boolean): Promise<number[]> {
  const ms: number[] = [];
  while (!until()) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { 'x-api-key': key } });
    await res.arrayBuffer();
    if (res.status === 200) ms.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 50));
  }
  return ms;
}

runMain(async () => {
  const seconds = arg('seconds', 15);
  const flood = arg('flood', 4);
  const stack = await benchStack('parse-flood', { shipped: true });
  try {
    const api = await stack.spawn('liveness-api');
    await stack.spawn('liveness-worker');
    const keys = new ApiKeyService(stack.models, systemClock, new AccountService(stack.models, systemClock));
    const flooder = (await keys.createAccountWithKeys({ email: 'flood@example.com', plan: 'free' })).primaryKey!;
    const base = `http://127.0.0.1:${api.port}`;
    const body = Buffer.from(JSON.stringify({ image_format: 'jpeg', image: 'A'.repeat(10 * 1024 * 1024 - 1) + '!' }));
    console.log(`load ${loadAvg()} at start; ${flood} flood loops for ${seconds} s`);
    const quietUntil = Date.now() + 5_000;
    const quiet = await reads(`${base}/v1/usage`, stack.key, () => Date.now() > quietUntil);
    const floodUntil = Date.now() + seconds * 1000;
    const tally: Record<string, number> = {};
    const cpu0 = cpuMs(api.proc.pid!);
    const loops = Array.from({ length: flood }, async () => {
      while (Date.now() < floodUntil) {
        const res = await fetch(`${base}/v1/check/liveness`, {
          method: 'POST',
          headers: { 'x-api-key': flooder, 'content-type': 'application/json' },
          body,
        }).catch(() => null);
        const code = res ? `${res.status} ${((await res.json().catch(() => ({}))) as { error?: { code?: string } }).error?.code ?? ''}` : 'reset';
        tally[code] = (tally[code] ?? 0) + 1;
        // A throttled client waits as Retry-After asks (at most 1 s here), as a client should.
        if (res?.status === 429) await new Promise((r) => setTimeout(r, 1000));
      }
    });
    const during = await reads(`${base}/v1/usage`, stack.key, () => Date.now() > floodUntil);
    await Promise.all(loops);
    const cpu = cpuMs(api.proc.pid!) - cpu0;
    console.log(`usage alone: ${quiet.length} reads, p50 ${f1(percentile(quiet, 50))} ms, p99 ${f1(percentile(quiet, 99))} ms`);
    console.log(`usage during the flood: ${during.length} reads, p50 ${f1(percentile(during, 50))} ms, p99 ${f1(percentile(during, 99))} ms`);
    console.log(`flood answers: ${JSON.stringify(tally)}; liveness API CPU over the flood ${(cpu / 1000).toFixed(1)} s in ${seconds} s`);
    console.log(`load ${loadAvg()} at end`);
  } finally {
    await stack.close();
  }
});
