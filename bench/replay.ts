// Owns `npm run bench:replay`: a customer's batch replay on an idle emotion service, the time it takes against the
// workers' own time on it. Starts private engines, the emotion API and one emotion worker as processes with the
// shipped defaults, makes one recording of speech (espeak-ng + sox, 16 kHz mono WAV) and sends N copies of it with
// the replay CLI (`npm run replay`, its default concurrency) under one token. Prints the batch's wall time, the
// sum of the answers' `worker` stage (Server-Timing: the workers' own time), their ratio, the worker's CPU time
// and the load average. Options: `--files N` (60), `--seconds S` (60, each recording's length), `--concurrency N`
// (passed to the CLI), `--ceiling S` (the fair-use bucket in seconds of audio instead of the shipped one, e.g. 600
// for the fixed rate this replaced). Figures: bench/results/replay.md.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../shared/paths';
import { processTreeCpuMs } from './support/cpu';
import { startEmotionService } from './support/emotion-service';
import { loadAvg, runMain } from './support/main';

const TEXT =
  'When the sunlight strikes raindrops in the air, they act as a prism and form a rainbow. ' +
  'The rainbow is a division of white light into many beautiful colours.';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

/** One recording of `seconds` of speech with pauses, written `files` times into `dir`. */
function makeRecordings(dir: string, files: number, seconds: number): void {
  const voice = path.join(dir, 'voice.wav');
  const loop = path.join(dir, 'loop.wav');
  const recording = path.join(dir, 'recording.wav');
  execFileSync('espeak-ng', ['-v', 'en-us', '-w', voice, TEXT]);
  execFileSync('sox', [voice, '-r', '16000', '-b', '16', '-c', '1', loop, 'pad', '0', '1']);
  const reps = Math.ceil(seconds / Number(execFileSync('soxi', ['-D', loop], { encoding: 'utf8' })));
  execFileSync('sox', [...Array<string>(reps).fill(loop), recording, 'trim', '0', String(seconds)]);
  const audio = path.join(dir, 'audio');
  fs.mkdirSync(audio);
  for (let i = 0; i < files; i++) fs.copyFileSync(recording, path.join(audio, `recording-${String(i).padStart(3, '0')}.wav`));
}

/** The replay CLI as a customer runs it; resolves with its summary line and exit code. */
function replay(args: string[]): Promise<{ code: number; summary: Record<string, unknown> }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--require', 'tsx/cjs', path.join(projectRoot, 'cli/replay/main.ts'), ...args],
      { cwd: projectRoot, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout) => {
        resolve({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          summary: JSON.parse(stdout.trim().split('\n').pop() || '{}') as Record<string, unknown>,
        });
      },
    );
  });
}

async function main(): Promise<void> {
  const files = arg('--files', 60);
  const seconds = arg('--seconds', 60);
  const concurrency = process.argv.includes('--concurrency') ? ['--concurrency', String(arg('--concurrency', 2))] : [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-bench-replay-'));
  const ceiling = process.argv.includes('--ceiling') ? String(arg('--ceiling', 1)) : null;
  const service = await startEmotionService(dir, ceiling === null ? {} : { EMOTION_FAIR_USE_BURST_SECONDS: ceiling });
  try {
    makeRecordings(dir, files, seconds);
    const out = path.join(dir, 'results.jsonl');
    const loadBefore = loadAvg();
    const cpuBefore = processTreeCpuMs(service.pids.worker);
    const started = performance.now();
    const { code, summary } = await replay([path.join(dir, 'audio'), '--url', service.url, '--token', service.token, '--out', out, ...concurrency]);
    const batchS = (performance.now() - started) / 1000;
    const workerCpuS = (processTreeCpuMs(service.pids.worker) - cpuBefore) / 1000;
    const records = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ok: boolean; workerMs?: number });
    const workerS = records.reduce((sum, r) => sum + (r.workerMs ?? 0), 0) / 1000;
    console.log(
      `bench:replay ${files} × ${seconds} s recordings (16 kHz WAV), one token, replay CLI ${concurrency.join(' ') || '(default concurrency)'}, ` +
        `one emotion worker, ${ceiling === null ? 'shipped fair use' : `fair-use bucket ${ceiling} s of audio`}; ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'})`,
    );
    console.log(
      `answered ${records.filter((r) => r.ok).length} of ${files} (CLI exit ${code}); summary ${JSON.stringify({ ...summary, mean_rough: undefined, mean_soft: undefined })}`,
    );
    console.log(
      `batch ${batchS.toFixed(1)} s | workers' own time ${workerS.toFixed(1)} s | ratio ${(batchS / workerS).toFixed(2)} | worker CPU ${workerCpuS.toFixed(1)} s`,
    );
    console.log(`load average before ${loadBefore}, after ${loadAvg()}`);
  } finally {
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
