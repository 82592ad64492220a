// Accuracy report of the liveness engine: `npm run eval:liveness -- <dir> [<dir>...] [--csv out.csv] [--shipped] [--cache f.json]`.
// Reads each <dir>/manifest.csv (file,label[,kind,type,source]) and prints, per kind (full frames, crops):
// AUC with a bootstrap interval over source repositories, EER, APCER/BPCER at several thresholds, detection
// failures, per spoof type, per source repository and per set; the last line is the one-line summary.
// Images from a repository the shipped fusion was fitted on are scored by a leave-one-source-out refit
// trained on the other repositories of all the sets given (so give both sets to reproduce the fit's folds).
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../shared/config';
import { shippedFusion } from '../../workers/liveness/engine/fusion';
import { configuredEngineOptions, LivenessEngine } from '../../workers/liveness/engine/index';
import { apcer, auc, bootstrapAuc, bpcer, crossValidatedLikelihoods, eer, pct, readManifest, type Scored, scoreDataset } from './evaluation';

const THRESHOLDS = [0.05, 0.1, 0.15, 0.3, 0.5, 0.7];

function usage(): never {
  process.stderr.write('usage: npm run eval:liveness -- <dir with manifest.csv> [<dir>...] [--csv scores.csv] [--shipped] [--cache scores.json]\n');
  process.exit(2);
}

const option = (args: string[], name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const f3 = (v: number) => (Number.isNaN(v) ? '  -  ' : v.toFixed(3));

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const valued = new Set(['--csv', '--cache']);
  const dirs = args.filter((a, i) => !a.startsWith('--') && !valued.has(args[i - 1] ?? ''));
  if (dirs.length === 0) usage();
  const cfg = loadConfig();
  const threshold = cfg.FAKE_THRESHOLD;
  const engine = await LivenessEngine.load(configuredEngineOptions(cfg));
  const models = engine.spoofSpecs.map((s) => s.name);
  const t0 = Date.now();
  const scored: Scored[] = [];
  for (const dir of dirs) scored.push(...(await scoreDataset(engine, dir, readManifest(dir), option(args, '--cache'))));
  console.log(
    `liveness evaluation of ${dirs.map((d) => path.resolve(d)).join(', ')}: ${scored.length} images scored in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  console.log(
    `spoof models: ${models.join(', ')}; shipped fusion: ${Object.entries(engine.fusion.weights)
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(', ')}, bias ${engine.fusion.bias.toFixed(3)}${
      Object.keys(engine.fusion.cues ?? {}).length
        ? `; face cues (weight per standard deviation): ${Object.entries(engine.fusion.cues ?? {})
            .map(([k, c]) => `${k} ${c.weight.toFixed(3)}`)
            .join(', ')}`
        : ''
    }`,
  );

  // Scoring a repository with a fusion fitted on it would grade the fusion on its own training images:
  // those repositories get leave-one-source-out refits (weights and anchor) instead.
  const fitted = new Set(shippedFusion.fittedSources);
  const shared = new Set(scored.map((s) => s.row.group).filter((g) => fitted.has(g)));
  const useCv = shared.size > 0 && !args.includes('--shipped');
  // Refit the way the shipped fusion was fitted: same features (models and cues), same L2 rule.
  const cvOpts = {
    l2: shippedFusion.l2Rule?.startsWith('chosen') ? ('inner' as const) : shippedFusion.l2,
    threshold,
    cues: Object.keys(shippedFusion.cues ?? {}),
  };
  const cv = useCv ? crossValidatedLikelihoods(scored, models, cvOpts, shared) : undefined;
  console.log(
    useCv
      ? `fusion: ${shared.size} source repositories of these sets were used to fit the shipped fusion; their images are scored by leave-one-source-out refits on the full frames of the other repositories given (all figures below are out of source)`
      : 'fusion: as shipped (no source repository of these sets was used to fit it)',
  );
  // A refused image (400 invalid_image) is not accepted: it counts as rejected, i.e. score 1.
  const score = (s: Scored) => (s.error ? 1 : (cv?.get(s) ?? s.likelihood!));
  const isSpoof = (s: Scored) => s.row.label === 'spoof';
  const scores = (set: Scored[], spoof: boolean) => set.filter((s) => isSpoof(s) === spoof).map(score);

  const kinds = [...new Set(scored.map((s) => s.row.kind))];
  for (const kind of kinds) {
    const set = scored.filter((s) => s.row.kind === kind);
    const live = scores(set, false);
    const spoof = scores(set, true);
    const fails = set.filter((s) => s.error);
    const groups = new Set(set.map((s) => s.row.group));
    console.log(`\n== kind=${kind}: ${set.length} images (${live.length} live, ${spoof.length} spoof) from ${groups.size} source repositories ==`);
    console.log(
      `detection/decoding failures: ${fails.length} (live ${fails.filter((s) => !isSpoof(s)).length}, spoof ${fails.filter(isSpoof).length}); the API answers them 400 invalid_image, counted here as rejected`,
    );
    for (const f of fails) console.log(`  ${f.row.dataset}/${f.row.file}: ${f.errorMessage}`);
    const a = auc(spoof, live);
    const [lo, hi] = bootstrapAuc(set.map((s) => ({ group: s.row.group, spoof: isSpoof(s), score: score(s) })));
    const e = eer(spoof, live);
    console.log(`AUC ${f3(a)} (95% bootstrap interval over source repositories ${f3(lo)}-${f3(hi)}), EER ${pct(e.eer)} (at ${e.threshold.toFixed(3)})`);
    console.log('threshold   APCER   BPCER');
    for (const t of THRESHOLDS)
      console.log(`  ${t.toFixed(2)}${t === threshold ? '*' : ' '}   ${pct(apcer(spoof, t)).padStart(6)}  ${pct(bpcer(live, t)).padStart(6)}`);

    console.log(`per spoof type: n, APCER@${threshold}, APCER@0.5, AUC against all live`);
    for (const type of [...new Set(set.filter(isSpoof).map((s) => s.row.type))].sort()) {
      const sp = set.filter((s) => isSpoof(s) && s.row.type === type).map(score);
      console.log(
        `  ${type.padEnd(8)} n=${String(sp.length).padEnd(4)} ${pct(apcer(sp, threshold)).padStart(6)}  ${pct(apcer(sp, 0.5)).padStart(6)}  ${f3(auc(sp, live))}`,
      );
    }

    console.log('single spoof models, raw fake logit (no fitting involved), AUC:');
    const passNames = [...new Set(set.flatMap((s) => Object.keys(s.features?.passLogits ?? {})))];
    for (const name of [...models, ...passNames.filter((p) => p.includes(':'))]) {
      const val = (s: Scored) => (s.error ? Infinity : ((name.includes(':') ? s.features!.passLogits[name] : s.features!.spoofLogits[name]) ?? NaN));
      console.log(`  ${name.padEnd(28)} ${f3(auc(set.filter(isSpoof).map(val), set.filter((s) => !isSpoof(s)).map(val)))}`);
    }

    const cueNames = Object.keys(engine.fusion.cues ?? {});
    if (cueNames.length > 0) {
      console.log('face cues, raw value (no fitting; below 0.5: spoofs have lower values), AUC:');
      for (const c of cueNames) {
        const val = (s: Scored) => s.features?.cues?.[c as keyof typeof s.features.cues] ?? NaN;
        const ok = set.filter((s) => !s.error);
        console.log(`  ${c.padEnd(28)} ${f3(auc(ok.filter(isSpoof).map(val), ok.filter((s) => !isSpoof(s)).map(val)))}`);
      }
    }

    console.log(`per set and source repository: live n, BPCER@${threshold}, spoof n, APCER@${threshold}, AUC`);
    const bySet = [...new Set(set.map((s) => s.row.dataset))];
    for (const ds of bySet) {
      const d = set.filter((s) => s.row.dataset === ds);
      const [dl, ds2] = [scores(d, false), scores(d, true)];
      console.log(
        `  [${ds}] ${String(dl.length).padStart(4)} ${pct(bpcer(dl, threshold)).padStart(6)}  ${String(ds2.length).padStart(4)} ${pct(apcer(ds2, threshold)).padStart(6)}  ${f3(auc(ds2, dl))}`,
      );
      for (const g of [...new Set(d.map((s) => s.row.group))].sort()) {
        const gs = d.filter((s) => s.row.group === g);
        const [gl, gsp] = [scores(gs, false), scores(gs, true)];
        console.log(
          `    ${g.padEnd(58)} ${String(gl.length).padStart(3)} ${pct(bpcer(gl, threshold)).padStart(6)}  ${String(gsp.length).padStart(3)} ${pct(apcer(gsp, threshold)).padStart(6)}  ${f3(auc(gsp, gl))}`,
        );
      }
    }
  }

  const csvOut = option(args, '--csv');
  if (csvOut) {
    const names = [...new Set(scored.flatMap((s) => Object.keys(s.features?.passLogits ?? {})))];
    const lines = [['file', 'dataset', 'label', 'kind', 'type', 'group', 'likelihood', 'likelihood_shipped', ...names, 'detector', 'error'].join(',')];
    for (const s of scored) {
      lines.push(
        [
          s.row.file,
          s.row.dataset,
          s.row.label,
          s.row.kind,
          s.row.type,
          s.row.group,
          s.error ? '' : score(s).toFixed(4),
          s.likelihood?.toFixed(4) ?? '',
          ...names.map((n) => s.features?.passLogits[n]?.toFixed(4) ?? ''),
          s.features?.detector ?? '',
          s.error ?? '',
        ]
          .map((v) => (/[",]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v))
          .join(','),
      );
    }
    fs.writeFileSync(csvOut, `${lines.join('\n')}\n`);
    console.log(`\nper-image scores written to ${csvOut}`);
  }
  // The product sees full frames: summarise those when the set says which rows they are.
  const summarySet = kinds.includes('full') ? scored.filter((s) => s.row.kind === 'full') : scored;
  const live = scores(summarySet, false);
  const spoof = scores(summarySet, true);
  console.log(kinds.includes('full') && kinds.length > 1 ? '\nsummary (full frames, the input the API gets):' : '\nsummary:');
  console.log(
    `AUC=${f3(auc(spoof, live))} EER=${f3(eer(spoof, live).eer)} APCER@${threshold}=${f3(apcer(spoof, threshold))} BPCER@${threshold}=${f3(bpcer(live, threshold))} n=${summarySet.length}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
