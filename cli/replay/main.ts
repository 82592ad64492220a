// `npm run -s replay -- <files, folders or globs> [--url U] [--token T] [--concurrency N] [--out results.jsonl] [--csv results.csv]`
// Replays audio files through the emotion API with the typed client (clients/typescript; --url is the analysis
// endpoint or the service's base URL): a progress bar, retries of 429/503 honouring Retry-After,
// resume by skipping files already answered in --out, and a summary at the end (with the run's time against the
// service's own time on the files, from its Server-Timing).
// Concurrency 2 by default: the service analyses a lone customer's files at the speed of its idle workers
// (docs/emotion-api.md, "Fair use and fair queueing"), and with its default single worker two files in flight
// keep it busy (one analysed while the next uploads); more helps only a service with more workers, and what it
// cannot start in time it answers 503 with Retry-After, which holds every sender of the run.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from '../../shared/cli-args';
import { expandInputs } from './inputs';
import { Progress } from './progress';
import { replayClient, sendFile, type ReplayRecord } from './client';
import { readLocalState } from '../../shared/local-state';
import { varDir } from '../../shared/paths';

const USAGE =
  'usage: npm run -s replay -- <files|folders|globs…> --token T [--url URL] [--concurrency N] [--out results.jsonl] [--csv results.csv] [--max-attempts N]';

function defaultUrl(): string {
  const local = readLocalState(varDir);
  return `http://127.0.0.1:${local?.emotionPort ?? 8081}/feelings/v3/analysis`;
}

function readDone(out: string): Map<string, ReplayRecord> {
  const done = new Map<string, ReplayRecord>();
  if (!fs.existsSync(out)) return done;
  for (const line of fs.readFileSync(out, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const rec = JSON.parse(line) as ReplayRecord;
      if (rec.ok) done.set(rec.file, rec);
    } catch {
      // a line cut by an interrupted run: that file is simply sent again
    }
  }
  return done;
}

function writeCsv(csv: string, records: ReplayRecord[]): void {
  const rows = ['file,from,to,rough,soft,speech_ratio'];
  for (const r of records) {
    for (const i of r.result?.results ?? []) {
      rows.push([JSON.stringify(r.file), i.from, i.to, i.rough, i.soft, i.speech_ratio ?? ''].join(','));
    }
  }
  fs.writeFileSync(csv, `${rows.join('\n')}\n`);
}

async function main(): Promise<number> {
  const { words, flags } = parseArgs(process.argv.slice(2));
  const token = typeof flags.token === 'string' ? flags.token : undefined;
  if (words.length === 0 || !token) {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  const url = typeof flags.url === 'string' ? flags.url : defaultUrl();
  const concurrency = Math.max(1, Number(flags.concurrency ?? 2) || 2);
  const maxAttempts = Math.max(1, Number(flags['max-attempts'] ?? 6) || 6);
  const out = path.resolve(typeof flags.out === 'string' ? flags.out : 'results.jsonl');
  const csv = typeof flags.csv === 'string' ? path.resolve(flags.csv) : null;

  const { files, missing } = expandInputs(words);
  for (const m of missing) process.stderr.write(`replay: nothing matches ${m}\n`);
  const done = readDone(out);
  const todo = files.filter((f) => !done.has(f));
  process.stderr.write(`replay: ${files.length} file(s), ${done.size} already done in ${path.basename(out)}, ${todo.length} to send to ${url}\n`);

  const started = Date.now();
  const client = replayClient({ url, token, maxAttempts, maxWaitSeconds: 120 });
  const progress = new Progress(todo.length);
  const outStream = fs.createWriteStream(out, { flags: 'a' });
  const results: ReplayRecord[] = [];
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const file = todo[next++]!;
      const rec = await sendFile(file, client);
      outStream.write(`${JSON.stringify(rec)}\n`);
      results.push(rec);
      progress.tick(rec.ok);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, todo.length) }, worker));
  await new Promise<void>((resolve) => outStream.end(resolve));
  progress.end();
  const seconds = (Date.now() - started) / 1000;

  const all = [...done.values(), ...results.filter((r) => r.ok)];
  if (csv) writeCsv(csv, all);
  const failed = results.filter((r) => !r.ok);
  const intervals = all.flatMap((r) => r.result?.results ?? []);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const reasons = new Map<string, number>();
  for (const f of failed) reasons.set(f.error?.code ?? String(f.status), (reasons.get(f.error?.code ?? String(f.status)) ?? 0) + 1);
  const summary = {
    files: files.length,
    done: all.length,
    skipped: done.size,
    failed: failed.length,
    failures: Object.fromEntries(reasons),
    mean_rough: Number(mean(intervals.map((i) => i.rough)).toFixed(4)),
    mean_soft: Number(mean(intervals.map((i) => i.soft)).toFixed(4)),
    intervals: intervals.length,
    /** This run's time, and the service's own time on the files it answered (the sum of their worker stages). */
    seconds: Number(seconds.toFixed(1)),
    worker_seconds: Number((results.reduce((sum, r) => sum + (r.workerMs ?? 0), 0) / 1000).toFixed(1)),
  };
  process.stderr.write(
    `replay: done ${summary.done} (skipped ${summary.skipped}), failed ${summary.failed}` +
      `${failed.length ? ` (${[...reasons].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}` +
      `; mean rough ${summary.mean_rough}, mean soft ${summary.mean_soft} over ${summary.intervals} intervals` +
      `; ${summary.seconds} s (the service's own time on them: ${summary.worker_seconds} s)\n`,
  );
  for (const f of failed) process.stderr.write(`  failed ${f.file}: ${f.status} ${f.error?.code} ${f.error?.message}\n`);
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return failed.length || missing.length ? 1 : 0;
}

void main().then((code) => process.exit(code));
