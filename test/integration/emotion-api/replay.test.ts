import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { runCli } from '../../support/cli';
import { speech, startEmotionStack, type EmotionStack } from '../../support/emotion-stack';

describe('batch replay (npm run -s replay)', () => {
  let stack: EmotionStack;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-replay-'));
  const out = path.join(dir, 'results.jsonl');
  const csv = path.join(dir, 'results.csv');

  before(async () => {
    stack = await startEmotionStack('replay');
    fs.mkdirSync(path.join(dir, 'audio', 'nested'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'audio', 'a.wav'), speech(6));
    fs.writeFileSync(path.join(dir, 'audio', 'nested', 'b.mp3'), speech(4, 'mp3'));
    fs.writeFileSync(path.join(dir, 'audio', 'c.flac'), speech(3, 'flac'));
    fs.writeFileSync(path.join(dir, 'audio', 'junk.wav'), Buffer.alloc(4000, 0x41));
  });
  after(async () => {
    await stack.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const replay = (...args: string[]) => runCli('cli/replay/main.ts', args, {});
  const url = () => `http://127.0.0.1:${stack.api.port}/feelings/v3/analysis`;

  it('sends every audio file of a folder, writes JSONL and CSV, and summarises with failure reasons', async () => {
    const res = await replay(path.join(dir, 'audio'), '--url', url(), '--token', stack.token, '--out', out, '--csv', csv, '--concurrency', '2');
    expect(res.code).to.equal(1); // one file failed
    const summary = JSON.parse(res.stdout);
    expect(summary).to.include({ files: 4, done: 3, failed: 1, skipped: 0 });
    expect(summary.failures).to.deep.equal({ unsupported_format: 1 });
    expect(summary.mean_rough).to.be.within(0, 1);
    expect(res.stderr).to.match(/\[#+\] 4\/4 100%/);
    const lines = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).to.have.length(4);
    expect(
      lines
        .filter((l) => l.ok)
        .map((l) => path.basename(l.file))
        .sort(),
    ).to.deep.equal(['a.wav', 'b.mp3', 'c.flac']);
    const rows = fs.readFileSync(csv, 'utf8').trim().split('\n');
    expect(rows[0]).to.equal('file,from,to,rough,soft,speech_ratio');
    expect(rows.length - 1).to.equal(2 + 1 + 1); // a.wav has two intervals, the others one each
  });

  it('resumes: files already answered in the output are skipped', async () => {
    const res = await replay(path.join(dir, 'audio', '**', '*.*'), '--url', url(), '--token', stack.token, '--out', out);
    const summary = JSON.parse(res.stdout);
    expect(summary).to.include({ files: 4, skipped: 3, failed: 1 });
    expect(res.stderr).to.include('1 to send');
  });

  it('retries 503 and 429 answers after the Retry-After they ask for', async () => {
    const seen = new Map<string, number>();
    const flaky = http.createServer((req, res) => {
      let size = 0;
      req.on('data', (c: Buffer) => (size += c.length));
      req.on('end', () => {
        const key = String(size);
        const n = (seen.get(key) ?? 0) + 1;
        seen.set(key, n);
        if (n === 1) {
          res.writeHead(n % 2 ? 503 : 429, { 'retry-after': '1', 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'service_unavailable', message: 'busy' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ meta: {}, results: [{ from: 0, to: 1, rough: 0.5, soft: 0.5 }] }));
      });
    });
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
    try {
      const port = (flaky.address() as AddressInfo).port;
      const res = await replay(path.join(dir, 'audio', 'a.wav'), '--url', `http://127.0.0.1:${port}/`, '--token', 't', '--out', path.join(dir, 'flaky.jsonl'));
      expect(res.code).to.equal(0);
      const rec = JSON.parse(fs.readFileSync(path.join(dir, 'flaky.jsonl'), 'utf8').trim());
      expect(rec).to.include({ ok: true, attempts: 2 });
    } finally {
      flaky.close();
    }
  });

  it('holds every sender, not only the refused one, until the Retry-After a 429 asked for has passed', async () => {
    const json = (res: http.ServerResponse, status: number, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(status === 200 ? { meta: {}, results: [] } : { error: { code: 'rate_limited', message: 'later' } }));
    };
    let count = 0;
    let held: http.ServerResponse | null = null;
    let refusedAt = 0;
    const later: number[] = [];
    // The first request waits for the second; then it is refused (429, Retry-After: 2) and the second is answered
    // 200 a moment later, so the second sender's next file leaves after the refusal reached the run.
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const n = ++count;
        if (n === 1) {
          held = res;
        } else if (n === 2) {
          json(held!, 429, { 'retry-after': '2' });
          refusedAt = Date.now();
          setTimeout(() => json(res, 200), 200);
        } else {
          later.push(Date.now());
          json(res, 200);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const res = await replay(
        path.join(dir, 'audio'),
        '--url',
        `http://127.0.0.1:${port}/`,
        '--token',
        't',
        '--concurrency',
        '2',
        '--out',
        path.join(dir, 'held.jsonl'),
      );
      expect(res.code, res.stderr).to.equal(0);
      // Four files and one retry: three requests after the refusal, none sooner than it asked.
      expect(later).to.have.length(3);
      expect(Math.min(...later) - refusedAt).to.be.at.least(2000);
    } finally {
      server.close();
    }
  });

  it('refuses to run without a token', async () => {
    const res = await replay(path.join(dir, 'audio'));
    expect(res.code).to.equal(64);
    expect(res.stderr).to.include('usage');
  });
});
