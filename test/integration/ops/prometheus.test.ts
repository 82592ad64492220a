// A real Prometheus (Debian's package) scrapes the four kinds of process with the project's loopback scrape
// config (deploy/prometheus/local-template.yml) every second; the assertions go through its HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { writeLocalPrometheusConfig } from '../../../deploy/prometheus/render-local-config';
import { freePort } from '../../../dev/engines/local-engines';
import { portrait } from '../../../dev/harness/sample-images';
import { speech } from '../../support/emotion-stack';
import type { ServiceProcess } from '../../../dev/harness/processes';
import { checkLiveness, opsEnv, sleep, until, type OpsEnv } from './ops-support';

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

describe('Prometheus scraping the APIs and workers (deploy/prometheus/local-template.yml)', function () {
  this.timeout(60_000);
  let ops: OpsEnv;
  let api: ServiceProcess;
  let emotionApi: ServiceProcess;
  let worker: ServiceProcess;
  let emotionWorker: ServiceProcess;
  let prometheus: ChildProcess | null = null;
  let promExited: Promise<unknown> | null = null;
  let promLog = '';
  let promPort = 0;
  let tmp = '';

  async function query(q: string): Promise<Sample[]> {
    const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`);
    const body = (await res.json()) as { status: string; data: { result: Sample[] }; error?: string };
    if (body.status !== 'success') throw new Error(`${q}: ${body.error}`);
    return body.data.result;
  }

  before(async function () {
    this.timeout(120_000);
    // Generous budget: the burst below waits behind a paused worker and must not time out meanwhile.
    ops = await opsEnv('prom', { LIVENESS_BUDGET_MS: '30000', EXPECTED_LIVENESS_WORKERS: '1' });
    [api, emotionApi, worker, emotionWorker] = await Promise.all([
      ops.spawn('liveness-api'),
      ops.spawn('emotion-api'),
      ops.spawn('liveness-worker'),
      ops.spawn('emotion-worker'),
    ]);
    await Promise.all([api, emotionApi, worker, emotionWorker].map((p) => p.ready(90_000)));

    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-prom-'));
    const config = writeLocalPrometheusConfig(path.join(tmp, 'prometheus.yml'), {
      livenessApi: [`127.0.0.1:${api.port}`],
      emotionApi: [`127.0.0.1:${emotionApi.port}`],
      livenessWorkers: [`127.0.0.1:${worker.port}`],
      emotionWorkers: [`127.0.0.1:${emotionWorker.port}`],
      scrapeInterval: '1s',
    });
    promPort = await freePort();
    prometheus = spawn(
      'prometheus',
      [`--config.file=${config}`, `--storage.tsdb.path=${path.join(tmp, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout!.on('data', (c: Buffer) => (promLog += c.toString()));
    prometheus.stderr!.on('data', (c: Buffer) => (promLog += c.toString()));
    promExited = new Promise((resolve) => prometheus!.once('exit', resolve));
    await until(
      'Prometheus to scrape all four targets',
      async () => {
        if (prometheus!.exitCode !== null) throw new Error(`prometheus exited: ${promLog.slice(-2000)}`);
        const up = await query('up == 1');
        return up.length === 4;
      },
      30_000,
      250,
    ).catch((err) => {
      throw new Error(`${String(err)}\n${promLog.slice(-2000)}`);
    });
  });

  after(async function () {
    this.timeout(60_000);
    if (prometheus && prometheus.exitCode === null) {
      prometheus.kill('SIGTERM');
      await Promise.race([promExited, sleep(10_000)]);
      if (prometheus.exitCode === null) prometheus.kill('SIGKILL');
    }
    await ops?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('has all four jobs up, with the job names the alert rules use', async () => {
    const up = await query('up');
    const byJob = Object.fromEntries(up.map((s) => [s.metric.job, s.value[1]]));
    expect(byJob).to.deep.equal({ 'liveness-api': '1', 'emotion-api': '1', 'liveness-worker': '1', 'emotion-worker': '1' });
  });

  it('reports lc_queue_jobs for both queues in every state', async () => {
    const series = await query('lc_queue_jobs');
    const seen = new Set(series.map((s) => `${s.metric.queue}/${s.metric.state}`));
    for (const queue of ['liveness', 'emotion']) {
      for (const state of ['waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed']) {
        expect(seen.has(`${queue}/${state}`), `lc_queue_jobs{queue="${queue}",state="${state}"}`).to.equal(true);
      }
    }
    // Each API reports its own queue.
    const jobsOf = (queue: string) => new Set(series.filter((s) => s.metric.queue === queue).map((s) => s.metric.job));
    expect([...jobsOf('liveness')]).to.deep.equal(['liveness-api']);
    expect([...jobsOf('emotion')]).to.deep.equal(['emotion-api']);
  });

  it('reports lc_model_info for the models each worker loaded, with their sha256', async () => {
    const info = await query('lc_model_info == 1');
    for (const job of ['liveness-worker', 'emotion-worker']) {
      const mine = info.filter((s) => s.metric.job === job);
      expect(mine.length, `${job} models`).to.be.greaterThan(0);
      for (const s of mine) {
        expect(s.metric.name).to.be.a('string').and.not.equal('');
        expect(s.metric.sha256).to.match(/^[0-9a-f]{64}$/);
      }
    }
  });

  it('sees the liveness waiting depth rise while the worker is held, then drain back to 0', async function () {
    this.timeout(90_000);
    const key = await ops.livenessKey();
    const image = (await portrait()).toString('base64');
    // Waiting jobs are BullMQ's 'prioritized' state (every job has its fair round as priority: shared/queues/fair-queue.ts),
    // summed with 'waiting' as the alert rules do.
    const waitingQ = 'sum(max by (state) (lc_queue_jobs{job="liveness-api",queue="liveness",state=~"waiting|prioritized"}))';
    const waitingNow = async () => Number((await query(waitingQ))[0]?.value[1] ?? NaN);
    expect(await waitingNow()).to.equal(0);

    // Hold the worker (SIGSTOP): it stays connected, takes nothing, and the burst queues up behind it.
    const burst = 12;
    worker.proc.kill('SIGSTOP');
    let responses: Promise<Array<{ status: number; body: any }>>;
    try {
      responses = Promise.all(Array.from({ length: burst }, () => checkLiveness(api.port, key, image)));
      const peak = await until(
        'waiting > 0 in Prometheus',
        async () => {
          const w = await waitingNow();
          return w > 0 ? w : null;
        },
        30_000,
        250,
      );
      expect(peak).to.be.greaterThan(0).and.at.most(burst);
    } finally {
      worker.proc.kill('SIGCONT');
    }
    const results = await responses;
    expect(results.map((r) => r.status)).to.deep.equal(Array(burst).fill(200));
    await until('waiting back to 0 in Prometheus', async () => (await waitingNow()) === 0, 30_000, 250);

    // The worker's own series moved too: jobs finished and verdicts counted.
    await until(
      'lc_jobs_total of the liveness worker to count the burst',
      async () => {
        const done = await query('sum(lc_jobs_total{job="liveness-worker",queue="liveness",outcome="ok"})');
        return Number(done[0]?.value[1] ?? 0) >= burst;
      },
      15_000,
      250,
    );
  });

  it('counts an emotion analysis on the emotion worker', async function () {
    this.timeout(60_000);
    const token = await ops.emotionToken();
    const res = await fetch(`http://127.0.0.1:${emotionApi.port}/feelings/v3/analysis`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'audio/wav' },
      body: speech(3),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    await until(
      'lc_jobs_total of the emotion worker',
      async () => {
        const done = await query('sum(lc_jobs_total{job="emotion-worker",queue="emotion",outcome="ok"})');
        return Number(done[0]?.value[1] ?? 0) >= 1;
      },
      15_000,
      250,
    );
    const stages = await query('count by (stage) (lc_inference_stage_seconds_count{job="emotion-worker"})');
    expect(stages.length).to.be.greaterThan(0);
  });
});
