// Fits the liveness fusion: `npx tsx research/liveness/fit-liveness-fusion.ts <dir> [<dir>...] [--l2 3] [--no-cues] [--cache f.json] [--dry-run]`.
// Runs the engine (built-in and EXTRA_SPOOF_MODELS spoof models) over each <dir>/manifest.csv, reports
// leave-one-source-out figures on the full frames (the honest ones), then fits on all full frames and writes
// workers/liveness/engine/fusion.json with the sources it was fitted on. The features are every model's fake
// logit plus the face cues of cues.ts (--no-cues: logits only); without --l2 the L2 strength is the one of
// L2_GRID with the lowest leave-one-source-out log-loss (chosen again inside each fold of the reported figures).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CUE_NAMES } from '../../workers/liveness/engine/cues';
import { fusedLikelihood } from '../../workers/liveness/engine/fusion';
import { chooseL2, fitFusion, L2_GRID } from './fusion-fit';
import { apcer, auc, bpcer, crossValidatedLikelihoods, eer, pct, scoreSetsFromArgs, trainingRows } from './evaluation';

const OUT = path.join(__dirname, '..', '..', 'workers', 'liveness', 'engine', 'fusion.json');
function option(args: string[], name: string): string | undefined {
  return args.includes(name) ? args[args.indexOf(name) + 1] : undefined;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (!args.some((a, i) => !a.startsWith('--') && args[i - 1] !== '--l2' && args[i - 1] !== '--cache')) {
    process.stderr.write('usage: npx tsx research/liveness/fit-liveness-fusion.ts <dir> [<dir>...] [--l2 3] [--no-cues] [--cache scores.json] [--dry-run]\n');
    process.exit(2);
  }
  const { config: cfg, models, scored } = await scoreSetsFromArgs(args, ['--l2']);
  const fixedL2 = option(args, '--l2');
  const cues = args.includes('--no-cues') ? [] : [...CUE_NAMES];
  const full = scored.filter((s) => s.row.kind === 'full' && s.features);
  const groups = [...new Set(full.map((s) => s.row.group))].sort();
  const rows = trainingRows(scored);
  const l2 = fixedL2 !== undefined ? Number(fixedL2) : chooseL2(rows, models, { threshold: cfg.FAKE_THRESHOLD, cues });
  const opts = { l2, threshold: cfg.FAKE_THRESHOLD, cues };
  console.log(
    `fitting ${[...models, ...cues].join(' + ')} on ${full.length} full frames from ${groups.length} source repositories (L2 ${l2}${fixedL2 === undefined ? `, chosen from ${L2_GRID.join('/')} by leave-one-source-out log-loss` : ''})`,
  );

  const cv = crossValidatedLikelihoods(scored, models, { ...opts, l2: fixedL2 === undefined ? 'inner' : l2 });
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

  const fusion = fitFusion(rows, models, opts);
  const inLive = full.filter((s) => s.row.label === 'live').map((s) => fusedLikelihood(fusion, s.features!.spoofLogits, s.features!.cues));
  const inSpoof = full.filter((s) => s.row.label === 'spoof').map((s) => fusedLikelihood(fusion, s.features!.spoofLogits, s.features!.cues));
  console.log(
    `fit on all: ${[...Object.entries(fusion.weights), ...Object.entries(fusion.cues ?? {}).map(([k, c]) => [`${k}/sd`, c.weight] as const)]
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(', ')}, bias ${fusion.bias.toFixed(3)}; in-sample APCER/BPCER @${t} ${pct(apcer(inSpoof, t))}/${pct(bpcer(inLive, t))} (optimistic)`,
  );

  const round = (v: number) => Number(v.toFixed(6));
  const out = {
    $comment:
      'Written by research/liveness/fit-liveness-fusion.ts: isFakeLikelihood = sigmoid(bias + sum of weights[model] * fake logit of model + sum of cues[c].weight * (cue c - cues[c].mean) / cues[c].std). Do not edit by hand.',
    weights: Object.fromEntries(Object.entries(fusion.weights).map(([k, v]) => [k, round(v)])),
    bias: round(fusion.bias),
    cues: Object.fromEntries(Object.entries(fusion.cues ?? {}).map(([k, c]) => [k, { weight: round(c.weight), mean: round(c.mean), std: round(c.std) }])),
    operatingPoint: { threshold: t, rule: 'threshold = equal-error point of leave-one-source-out scores of the fitting frames' },
    l2,
    l2Rule: fixedL2 === undefined ? `chosen from ${L2_GRID.join('/')} by leave-one-source-out log-loss` : 'given',
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
  // In the repository's format, so the format check passes on the file as written.
  execFileSync('npx', ['prettier', '--write', OUT], { stdio: 'ignore' });
  console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
