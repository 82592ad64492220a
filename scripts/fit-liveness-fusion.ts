// Fits the liveness fusion: `npx tsx scripts/fit-liveness-fusion.ts <dir> [<dir>...] [--l2 1] [--cache f.json] [--dry-run]`.
// Runs the engine (built-in and EXTRA_SPOOF_MODELS spoof models) over each <dir>/manifest.csv, reports
// leave-one-source-out figures on the full frames (the honest ones), then fits on all full frames and writes
// workers/liveness/engine/fusion.json with the sources it was fitted on.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../shared/config';
import { fitFusion, fusedLikelihood } from '../workers/liveness/engine/fusion';
import { LivenessEngine } from '../workers/liveness/engine/index';
import { apcer, auc, bpcer, crossValidatedLikelihoods, eer, pct, readManifest, type Scored, scoreDataset, trainingRows } from './liveness/evaluation';

const OUT = path.join(__dirname, '..', 'workers', 'liveness', 'engine', 'fusion.json');
/** Ridge on the weights, in units of the summed log-loss: a mild prior toward equal small weights with ~400 frames. */
const DEFAULT_L2 = 1;

function option(args: string[], name: string): string | undefined {
  return args.includes(name) ? args[args.indexOf(name) + 1] : undefined;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const valued = new Set(['--l2', '--cache']);
  const dirs = args.filter((a, i) => !a.startsWith('--') && !valued.has(args[i - 1] ?? ''));
  if (dirs.length === 0) {
    process.stderr.write('usage: npx tsx scripts/fit-liveness-fusion.ts <dir> [<dir>...] [--l2 1] [--cache scores.json] [--dry-run]\n');
    process.exit(2);
  }
  const cfg = loadConfig();
  const l2 = Number(option(args, '--l2') ?? DEFAULT_L2);
  const opts = { l2, threshold: cfg.FAKE_THRESHOLD };
  const engine = await LivenessEngine.load({
    modelsDir: cfg.MODELS_DIR,
    intraOpThreads: cfg.ORT_INTRA_OP_THREADS,
    fakeThreshold: cfg.FAKE_THRESHOLD,
    extraSpoofModels: cfg.EXTRA_SPOOF_MODELS,
  });
  const models = engine.spoofSpecs.map((s) => s.name);
  const scored: Scored[] = [];
  for (const dir of dirs) scored.push(...(await scoreDataset(engine, dir, readManifest(dir), option(args, '--cache'))));
  const full = scored.filter((s) => s.row.kind === 'full' && s.features);
  const groups = [...new Set(full.map((s) => s.row.group))].sort();
  console.log(`fitting ${models.join(' + ')} on ${full.length} full frames from ${groups.length} source repositories (L2 ${l2})`);

  const cv = crossValidatedLikelihoods(scored, models, opts);
  const live = full.filter((s) => s.row.label === 'live').map((s) => cv.get(s)!);
  const spoof = full.filter((s) => s.row.label === 'spoof').map((s) => cv.get(s)!);
  const t = opts.threshold;
  const figures = {
    auc: auc(spoof, live),
    eer: eer(spoof, live).eer,
    apcer: apcer(spoof, t),
    bpcer: bpcer(live, t),
    apcer50: apcer(spoof, 0.5),
    bpcer50: bpcer(live, 0.5),
  };
  console.log(
    `leave-one-source-out: AUC ${figures.auc.toFixed(3)} EER ${pct(figures.eer)} APCER/BPCER @${t} ${pct(figures.apcer)}/${pct(figures.bpcer)} @0.5 ${pct(figures.apcer50)}/${pct(figures.bpcer50)}`,
  );

  const fusion = fitFusion(trainingRows(scored), models, opts);
  const inLive = full.filter((s) => s.row.label === 'live').map((s) => fusedLikelihood(fusion, s.features!.spoofLogits));
  const inSpoof = full.filter((s) => s.row.label === 'spoof').map((s) => fusedLikelihood(fusion, s.features!.spoofLogits));
  console.log(
    `fit on all: ${Object.entries(fusion.weights)
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(', ')}, bias ${fusion.bias.toFixed(3)}; in-sample APCER/BPCER @${t} ${pct(apcer(inSpoof, t))}/${pct(bpcer(inLive, t))} (optimistic)`,
  );

  const round = (v: number) => Number(v.toFixed(6));
  const out = {
    $comment: 'Written by scripts/fit-liveness-fusion.ts: isFakeLikelihood = sigmoid(bias + sum of weights[model] * fake logit of model). Do not edit by hand.',
    weights: Object.fromEntries(Object.entries(fusion.weights).map(([k, v]) => [k, round(v)])),
    bias: round(fusion.bias),
    operatingPoint: { threshold: t, rule: 'threshold = equal-error point of leave-one-source-out scores of the fitting frames' },
    l2,
    fittedSources: groups,
    fittedOn: {
      datasets: [...new Set(full.map((s) => s.row.dataset))],
      images: full.length,
      live: inLive.length,
      spoof: inSpoof.length,
    },
    crossValidated: Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Number(v.toFixed(4))])),
  };
  if (args.includes('--dry-run')) return;
  fs.writeFileSync(OUT, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
