// Owns `npm run bench:emotion:ab`: an interleaved A/B of the emotion engine's in-process speed between two
// source trees (e.g. a snapshot of the previous commit and the working tree), on one input file. On a shared
// machine the load changes minute to minute, so the trees are run alternately (A, B, A, B, …), each in its own
// process, and the per-round differences are what to read. Per analysis it reports wall time and the CPU of
// the process (all its threads) plus its reaped children (ffmpeg), from /proc/self/stat.
//   npx tsx bench/emotion-ab.ts --a /tmp/old-tree --b . --file x.mp3 [--rounds 5] [--repeats 3] [--models DIR]
// Each tree needs node_modules and its models dir (silero_vad.onnx); the mapping is built into `--models`
// (default: a temporary copy per tree), never into the shared models/dist.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processTreeCpuMs } from './support/cpu';
import { loadAvg } from './support/main';

function arg(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** One tree's engine, analysing the file `repeats` times after one warm-up; prints a JSON line. */
async function child(tree: string, file: string, repeats: number, modelsDir: string): Promise<void> {
  const root = path.resolve(tree);
  const { buildEmotionMapping } = (await import(path.join(root, 'models/emotion/build-mapping.ts'))) as typeof import('../models/emotion/build-mapping');
  const { EmotionEngine } = (await import(path.join(root, 'workers/emotion/engine/index.ts'))) as typeof import('../workers/emotion/engine');
  buildEmotionMapping(modelsDir);
  const engine = await EmotionEngine.load({ modelsDir, ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', intraOpThreads: 1 });
  const bytes = fs.readFileSync(file);
  // The first analysis is reported apart: it pays for compiling the analysis code (in the pool's threads too).
  const firstCpu = processTreeCpuMs();
  const firstAt = performance.now();
  await engine.analyze(bytes);
  const first = { wallMs: performance.now() - firstAt, cpuMs: processTreeCpuMs() - firstCpu };
  const wall: number[] = [];
  const cpu: number[] = [];
  let stages: Record<string, number> = {};
  for (let i = 0; i < repeats; i++) {
    const c0 = processTreeCpuMs();
    const t0 = performance.now();
    const r = await engine.analyze(bytes);
    wall.push(performance.now() - t0);
    cpu.push(processTreeCpuMs() - c0);
    stages = r.stages ?? {};
  }
  await engine.close();
  console.log(JSON.stringify({ wallMs: median(wall), cpuMs: median(cpu), stages, first }));
}

function privateModels(tree: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'emotion-ab-models-'));
  const src = path.join(path.resolve(tree), 'models', 'dist');
  for (const f of fs.readdirSync(src)) if (f.endsWith('.onnx')) fs.copyFileSync(path.join(src, f), path.join(dir, f));
  return dir;
}

function main(): void {
  const file = path.resolve(arg('--file')!);
  const repeats = Number(arg('--repeats', '3'));
  if (arg('--child')) {
    void child(arg('--child')!, file, repeats, arg('--models')!);
    return;
  }
  const trees = { A: arg('--a')!, B: arg('--b')! };
  const models = { A: privateModels(trees.A), B: privateModels(trees.B) };
  const rounds = Number(arg('--rounds', '5'));
  const rows: Record<'A' | 'B', Array<{ wallMs: number; cpuMs: number }>> = { A: [], B: [] };
  console.log(`A = ${trees.A}, B = ${trees.B}, file ${file}, ${rounds} rounds × ${repeats} analyses (median per round)`);
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const out = execFileSync(
        process.execPath,
        [...process.execArgv, __filename, '--child', trees[side], '--file', file, '--repeats', String(repeats), '--models', models[side]],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      const res = JSON.parse(out.trim().split('\n').pop()!) as {
        wallMs: number;
        cpuMs: number;
        stages: Record<string, number>;
        first: { wallMs: number; cpuMs: number };
      };
      rows[side].push(res);
      const load = loadAvg();
      console.log(
        `round ${r + 1} ${side}: wall ${res.wallMs.toFixed(0)} ms, cpu ${res.cpuMs.toFixed(0)} ms (first analysis: wall ${res.first.wallMs.toFixed(0)}, ` +
          `cpu ${res.first.cpuMs.toFixed(0)} ms), stages ${JSON.stringify(res.stages)} (load ${load})`,
      );
    }
  }
  const d = rows.A.map((a, i) => ({ wall: rows.B[i]!.wallMs - a.wallMs, cpu: rows.B[i]!.cpuMs - a.cpuMs }));
  console.log(
    `median A: wall ${median(rows.A.map((x) => x.wallMs)).toFixed(0)} ms, cpu ${median(rows.A.map((x) => x.cpuMs)).toFixed(0)} ms; ` +
      `median B: wall ${median(rows.B.map((x) => x.wallMs)).toFixed(0)} ms, cpu ${median(rows.B.map((x) => x.cpuMs)).toFixed(0)} ms; ` +
      `B − A per round: wall ${d.map((x) => x.wall.toFixed(0)).join(', ')}; cpu ${d.map((x) => x.cpu.toFixed(0)).join(', ')}`,
  );
  for (const dir of Object.values(models)) fs.rmSync(dir, { recursive: true, force: true });
}

main();
