// Owns the training data of the liveness training stack: every labelled full frame of the given sets as taken and
// under seeded random captures (capture-variants.ts randomCapture), run through the shipped engine, and each spoof
// model's input tensor saved exactly as the engine fed it (BGR 0..255, rounded to bytes) with the frame's label,
// source repository, variant and quality gate. The Python trainer (train.py) reads what this writes.
//   npx tsx research/liveness/train/extract-windows.ts <dir> [<dir>...] [--draws 14] [--out var/liveness-train]
//     [--window padded-edge|padded-black]  (the built-in models' window, spoof.ts; recorded in <out>/models.json)
//     [--with-crops]  (the sets' face crops as well as their full frames)
// Out: <out>/meta.jsonl (one line per window set) and <out>/<model>.u8 (N x 3 x S x S bytes, in meta's order).
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../../../shared/config';
import { AppError } from '../../../shared/errors';
import { configuredEngineOptions, LivenessEngine } from '../../../workers/liveness/engine/index';
import { BUILTIN_SPOOF_SPECS, type SpoofModelSpec } from '../../../workers/liveness/engine/spoof';
import { readManifest } from '../evaluation';
import { randomCapture, seedOf, type Source } from '../capture-variants';
import { AS_TAKEN, VARIANTS } from '../eval-robustness';

const asTaken = VARIANTS.find((v) => v.name === AS_TAKEN)!;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const valued = new Set(['--draws', '--out', '--window']);
  const dirs = args.filter((a, i) => !a.startsWith('--') && !valued.has(args[i - 1] ?? ''));
  const opt = (n: string) => (args.includes(n) ? args[args.indexOf(n) + 1] : undefined);
  const draws = Number(opt('--draws') ?? 14);
  const withCrops = args.includes('--with-crops');
  const out = opt('--out') ?? 'var/liveness-train';
  if (dirs.length === 0) throw new Error('usage: extract-windows.ts <dir> [<dir>...] [--draws 14] [--out var/liveness-train]');
  // --window padded-edge|padded-black: the built-in spoof models read padded windows (spoof.ts paddedCrop).
  const window = opt('--window') as SpoofModelSpec['window'] | undefined;
  const spoofWindows = window ? Object.fromEntries(BUILTIN_SPOOF_SPECS.map((s) => [s.name, window])) : undefined;
  const engine = await LivenessEngine.load({ ...configuredEngineOptions(loadConfig()), spoofWindows });
  fs.mkdirSync(out, { recursive: true });
  const meta = fs.openSync(path.join(out, 'meta.jsonl'), 'w');
  const tensors = new Map(engine.spoofSpecs.map((s) => [s.name, fs.openSync(path.join(out, `${s.name}.u8`), 'w')]));
  fs.writeFileSync(
    path.join(out, 'models.json'),
    JSON.stringify(engine.spoofSpecs.map((s) => ({ name: s.name, inputSize: s.inputSize, liveIndex: s.liveIndex, window: s.window }))),
  );
  let n = 0;
  const t0 = Date.now();
  for (const dir of dirs) {
    // --with-crops: the sets' face crops too (photos in which the face fills the frame), trained on, never judged.
    for (const row of readManifest(dir).filter((r) => r.kind === 'full' || (withCrops && r.kind === 'crop'))) {
      const bytes = fs.readFileSync(path.join(dir, row.file));
      const format = /\.png$/i.test(row.file) ? 'png' : 'jpeg';
      const { data, info } = await sharp(bytes).rotate().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
      const src: Source = { id: `${row.dataset}|${row.file}`, bytes, format, raw: data, width: info.width, height: info.height };
      const variants = [asTaken, ...Array.from({ length: draws }, (_, k) => randomCapture(seedOf(`${src.id}|${k}`)))];
      for (const [k, v] of variants.entries()) {
        const made = await v.make(src);
        const base = { dataset: row.dataset, file: row.file, kind: row.kind, group: row.group, label: row.label, type: row.type, draw: k, variant: v.name };
        if (!made) {
          fs.writeSync(meta, `${JSON.stringify({ ...base, error: 'not made' })}\n`);
          continue;
        }
        try {
          const { result, features } = await engine.analyzeDetailed(made, k === 0 ? format : 'jpeg', { captureInputs: true });
          if (k === 0) src.face = result.faceRectArea;
          for (const [name, fd] of tensors) {
            const t = features.inputs![name]!;
            const u8 = Buffer.alloc(t.length);
            for (let i = 0; i < t.length; i++) u8[i] = Math.max(0, Math.min(255, Math.round(t[i]!)));
            fs.writeSync(fd, u8);
          }
          const line = { ...base, index: n++, logits: features.spoofLogits, valid: result.isValidFace, reasons: result.reasons };
          fs.writeSync(meta, `${JSON.stringify(line)}\n`);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          fs.writeSync(meta, `${JSON.stringify({ ...base, error: err.code })}\n`);
        }
      }
    }
    console.log(`${dir}: ${n} window sets so far, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  fs.closeSync(meta);
  for (const fd of tensors.values()) fs.closeSync(fd);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
