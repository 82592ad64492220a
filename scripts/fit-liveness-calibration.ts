// Fits the liveness calibration curve: `npx tsx scripts/fit-liveness-calibration.ts <dir> [--target-bpcer 0.1] [--dry-run]`.
// Runs the engine over <dir>/manifest.csv, reports leave-one-source-group-out figures (the honest ones),
// then fits on all full frames and writes workers/liveness/engine/calibration.json.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../shared/config';
import { type Calibration, calibrate, fitCalibration } from '../workers/liveness/engine/calibrate';
import {
  apcer, auc, bpcer, crossValidatedLikelihoods, eer, pct, readManifest, scoreDataset,
} from '../workers/liveness/engine/evaluation';
import { LivenessEngine } from '../workers/liveness/engine/index';

const OUT = path.join(__dirname, '..', 'workers', 'liveness', 'engine', 'calibration.json');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const dir = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--target-bpcer');
  if (!dir) {
    process.stderr.write('usage: npx tsx scripts/fit-liveness-calibration.ts <dir> [--target-bpcer 0.1] [--dry-run]\n');
    process.exit(2);
  }
  const cfg = loadConfig();
  const targetBpcer = args.includes('--target-bpcer') ? Number(args[args.indexOf('--target-bpcer') + 1]) : 0.1;
  const op = { threshold: cfg.FAKE_THRESHOLD, targetBpcer };
  // Identity curve: the fit only needs the fused logits, which do not depend on the calibration.
  const engine = await LivenessEngine.load({
    modelsDir: cfg.MODELS_DIR, intraOpThreads: cfg.ORT_INTRA_OP_THREADS, fakeThreshold: cfg.FAKE_THRESHOLD,
    extraSpoofModels: cfg.EXTRA_SPOOF_MODELS, calibration: { a: 1, b: 0 },
  });
  const scored = await scoreDataset(engine, dir, readManifest(dir));
  const full = scored.filter((s) => s.row.kind === 'full' && s.features);
  const groups = [...new Set(full.map((s) => s.row.group))];
  console.log(`fitting on ${full.length} full frames from ${groups.length} source groups; operating point: BPCER ${pct(targetBpcer)} at ${op.threshold}`);

  const cv = crossValidatedLikelihoods(scored, op);
  const live = full.filter((s) => s.row.label === 'live').map((s) => cv.get(s)!);
  const spoof = full.filter((s) => s.row.label === 'spoof').map((s) => cv.get(s)!);
  const cvFigures = {
    auc: auc(spoof, live), eer: eer(spoof, live).eer,
    apcer15: apcer(spoof, 0.15), bpcer15: bpcer(live, 0.15), apcer50: apcer(spoof, 0.5), bpcer50: bpcer(live, 0.5),
  };
  console.log(`leave-one-source-group-out: AUC ${cvFigures.auc.toFixed(3)} EER ${pct(cvFigures.eer)} APCER/BPCER @0.15 ${pct(cvFigures.apcer15)}/${pct(cvFigures.bpcer15)} @0.5 ${pct(cvFigures.apcer50)}/${pct(cvFigures.bpcer50)}`);

  const { a, b } = fitCalibration(full.map((s) => s.features!.fused), full.map((s) => s.row.label === 'spoof'), op);
  const inLive = full.filter((s) => s.row.label === 'live').map((s) => calibrate({ a, b }, s.features!.fused));
  const inSpoof = full.filter((s) => s.row.label === 'spoof').map((s) => calibrate({ a, b }, s.features!.fused));
  console.log(`fit on all: a=${a.toFixed(4)} b=${b.toFixed(4)}; in-sample APCER/BPCER @0.15 ${pct(apcer(inSpoof, 0.15))}/${pct(bpcer(inLive, 0.15))} (optimistic)`);

  const calibration: Calibration & Record<string, unknown> = {
    $comment: 'Written by scripts/fit-liveness-calibration.ts: isFakeLikelihood = sigmoid(a * fused fake logit + b). Do not edit by hand.',
    a: Number(a.toFixed(6)),
    b: Number(b.toFixed(6)),
    operatingPoint: op,
    fittedSources: groups.sort(),
    fittedOn: { dataset: path.basename(path.resolve(dir)), images: full.length, live: inLive.length, spoof: inSpoof.length },
    crossValidated: Object.fromEntries(Object.entries(cvFigures).map(([k, v]) => [k, Number(v.toFixed(4))])),
  };
  if (args.includes('--dry-run')) return;
  fs.writeFileSync(OUT, `${JSON.stringify(calibration, null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
