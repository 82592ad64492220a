// Horizontal scaling benchmark (`npm run bench:scaling [-- --seconds 8 --rounds 3 --concurrency 8]`):
// liveness throughput with 1 and then 2 worker processes behind one API process (real processes, private
// Redis and FerretDB), then API statelessness: two API processes behind a round-robin client, every request
// answered with its own result (the result reaches the process that waits for it). Prints figures only.
import os from 'node:os';
import { arg, benchStack, cpuPerRequest, f1, load, median, selfieBody, stackPids, type LoadResult } from './api';
import { loadAvg, runMain } from './support/main';

async function main(): Promise<void> {
  const seconds = arg('seconds', 8);
  const rounds = arg('rounds', 3);
  const concurrency = arg('concurrency', 8);
  console.log(
    `bench:scaling: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}, concurrency ${concurrency}, ${rounds} rounds of ${seconds} s, medians shown`,
  );
  const { jpeg, body } = await selfieBody();
  const stack = await benchStack('scaling');
  try {
    await stack.spawn('liveness-api');
    const port = stack.apis[0]!.port;
    const one: LoadResult[] = [];
    const two: LoadResult[] = [];
    const cpuOne: number[] = [];
    const cpuTwo: number[] = [];
    const total = (rows: Array<[string, number]>) => rows.reduce((s, [, v]) => s + (Number.isFinite(v) ? v : 0), 0);
    await stack.spawn('liveness-worker');
    for (let r = 0; r < rounds; r++) {
      // 1 worker: stop the second one (SIGTERM: it finishes its job and leaves) if this is not the first round.
      if (stack.workers.length === 2) {
        const extra = stack.workers.pop()!;
        await extra.stop();
      }
      const a = await cpuPerRequest(stackPids(stack), () => load([port], stack.key, body, concurrency, seconds));
      one.push(a.result);
      cpuOne.push(total(a.rows));
      await stack.spawn('liveness-worker');
      const b = await cpuPerRequest(stackPids(stack), () => load([port], stack.key, body, concurrency, seconds));
      two.push(b.result);
      cpuTwo.push(total(b.rows));
    }
    const m = (xs: LoadResult[], k: keyof LoadResult) => median(xs.map((x) => x[k]));
    console.log('\nliveness throughput, 1 API process, 640x480 JPEG');
    console.log('  workers    req/s   p50 ms   p99 ms   CPU-ms/req (all processes)   per round req/s');
    console.log(
      `  1       ${f1(m(one, 'rps')).padStart(8)}${f1(m(one, 'p50')).padStart(9)}${f1(m(one, 'p99')).padStart(9)}${f1(median(cpuOne)).padStart(15)}               ${one.map((x) => f1(x.rps)).join(', ')}`,
    );
    console.log(
      `  2       ${f1(m(two, 'rps')).padStart(8)}${f1(m(two, 'p50')).padStart(9)}${f1(m(two, 'p99')).padStart(9)}${f1(median(cpuTwo)).padStart(15)}               ${two.map((x) => f1(x.rps)).join(', ')}`,
    );
    console.log(
      `  ratio 2/1: ${(m(two, 'rps') / m(one, 'rps')).toFixed(2)}x (per-round ratios: ${one.map((x, i) => (two[i]!.rps / x.rps).toFixed(2)).join(', ')})`,
    );
    console.log(`  non-2xx or errors: ${[...one, ...two].reduce((s, x) => s + x.bad, 0)}; load average ${loadAvg()}`);

    // Statelessness: a second API process; requests alternate between the two, each with its own image, and
    // each answer must be the one for that image (a result delivered to the wrong process would time out or
    // carry another image's face box).
    const second = await stack.spawn('liveness-api');
    const sharp = (await import('sharp')).default;
    const variants = await Promise.all(
      [0, 40, 80, 120].map((dx) =>
        sharp(jpeg).extend({ left: dx, right: 0, top: 0, bottom: 0, background: '#808080' }).resize(640, 480, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer(),
      ),
    );
    const expected = await Promise.all(
      variants.map(async (v) => {
        const res = await fetch(`http://127.0.0.1:${port}/v1/check/liveness`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': stack.key },
          body: JSON.stringify({ image: v.toString('base64'), image_format: 'jpeg' }),
        });
        return JSON.stringify(((await res.json()) as { data: { faceRectArea: unknown } }).data.faceRectArea);
      }),
    );
    const ports = [port, second.port];
    const n = 200;
    let own = 0;
    const byProcess = [0, 0];
    const statuses: Record<number, number> = {};
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          const i = next++;
          const which = i % 2; // round-robin
          const v = i % variants.length;
          const res = await fetch(`http://127.0.0.1:${ports[which]}/v1/check/liveness`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': stack.key },
            body: JSON.stringify({ image: variants[v]!.toString('base64'), image_format: 'jpeg' }),
          });
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          const json = (await res.json()) as { data?: { faceRectArea: unknown } };
          if (res.status === 200 && JSON.stringify(json.data?.faceRectArea) === expected[v]) {
            own++;
            byProcess[which]!++;
          }
        }
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    console.log(`\nAPI statelessness: 2 API processes, round-robin client, ${stack.workers.length} workers, ${variants.length} distinct images`);
    console.log(`  ${n} requests in ${secs.toFixed(1)} s (${f1(n / secs)} req/s); statuses ${JSON.stringify(statuses)}`);
    console.log(`  answered with their own image's result: ${own}/${n} (API 1: ${byProcess[0]}, API 2: ${byProcess[1]})`);
  } finally {
    await stack.close();
  }
}

runMain(main);
