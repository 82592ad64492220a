// Work-conserving fair use on the emotion API (docs/emotion-api.md, "Fair use and fair queueing"): a lone
// customer's batch runs at the speed of the idle workers, not at a fixed rate, while a customer arriving mid-batch
// is answered within its budget (fair queueing decides who goes next). The batch is sent by the replay CLI, as a
// customer would, with its default concurrency, on the shipped fair-use settings.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmotionTokenService } from '../../../shared/accounts/emotion-tokens';
import { runCli } from '../../support/cli';
import { speech, startEmotionStack, type EmotionStack } from '../../support/emotion-stack';
import { checkedFetch } from '../../support/openapi';
import type { ReplayRecord } from '../../../cli/replay/client';

const RECORDINGS = 60;

describe('POST /feelings/v3/analysis: a batch replay on an idle service', function () {
  // Long enough for the batch to end (and fail the ratio) on a service that throttles it to a fixed rate.
  this.timeout(360_000);
  let stack: EmotionStack;
  let otherToken: string;
  let short: Buffer;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-batch-'));

  before(async () => {
    stack = await startEmotionStack('batch-replay');
    otherToken = (await new EmotionTokenService(stack.models).create('another customer')).token;
    const oneMinute = speech(60);
    fs.mkdirSync(path.join(dir, 'audio'));
    for (let i = 0; i < RECORDINGS; i++) fs.writeFileSync(path.join(dir, 'audio', `recording-${String(i).padStart(2, '0')}.wav`), oneMinute);
    short = speech(3);
  });
  after(async () => {
    await stack?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`answers one token's ${RECORDINGS} one-minute recordings within 3× the workers' own time, while another customer arriving mid-batch is answered within its budget`, async () => {
    // The stack runs the shipped fair use (test/support/config.ts sets none of it) and one worker.
    expect(stack.worker).to.not.equal(null);
    const out = path.join(dir, 'results.jsonl');
    const url = `http://127.0.0.1:${stack.api.port}/feelings/v3/analysis`;
    const doneSoFar = () => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8').split('\n').filter(Boolean).length : 0);

    const started = performance.now();
    let batchEnded = false;
    const batch = runCli('cli/replay/main.ts', [path.join(dir, 'audio'), '--url', url, '--token', stack.token, '--out', out], {}, 300_000).then((r) => {
      batchEnded = true;
      return { ...r, ms: performance.now() - started };
    });

    // Another customer arrives once the batch is under way and sends five short calls, one at a time.
    while (doneSoFar() < 10 && !batchEnded) await new Promise((r) => setTimeout(r, 100));
    const other: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await checkedFetch(stack.api.port, '/feelings/v3/analysis', {
        method: 'POST',
        headers: { authorization: `Bearer ${otherToken}`, 'content-type': 'audio/wav' },
        body: short,
      });
      await res.arrayBuffer();
      other.push(res.status);
    }
    const otherDoneMidBatch = !batchEnded;

    const result = await batch;
    const records = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as ReplayRecord);
    // The workers' own time: each answer's worker stage (Server-Timing), one worker.
    const workerMs = records.reduce((sum, r) => sum + (r.workerMs ?? 0), 0);
    const report =
      `batch ${(result.ms / 1000).toFixed(1)} s (CLI exit ${result.code}), ${records.filter((r) => r.ok).length} answered, ` +
      `workers' own ${(workerMs / 1000).toFixed(1)} s; ${result.stdout.trim() || result.stderr.trim().split('\n').pop()}`;
    console.log(`      ${report}`);

    expect(result.ms, report).to.be.at.most(3 * workerMs);
    expect(
      records.filter((r) => r.ok),
      report,
    ).to.have.length(RECORDINGS);
    expect(
      records.filter((r) => r.ok).every((r) => typeof r.workerMs === 'number' && r.workerMs > 0),
      'every answer says its worker time',
    ).to.equal(true);
    expect(other, 'the other customer, each call within its 5 s budget').to.deep.equal([200, 200, 200, 200, 200]);
    expect(otherDoneMidBatch, 'the other customer was answered while the batch still ran').to.equal(true);
  });
});
