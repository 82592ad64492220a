// Accuracy harness for the liveness engine: `npm run eval:liveness -- <dir> [--csv out.csv] [--shipped]`.
// Reads <dir>/manifest.csv (file,label[,kind,type,source]); prints AUC, EER, APCER/BPCER at several thresholds,
// detection failures, per-kind and per-spoof-type figures; the last line is the one-line summary.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../shared/config';
import { shippedCalibration } from '../workers/liveness/engine/calibrate';
import {
  apcer, auc, bpcer, crossValidatedLikelihoods, eer, pct, readManifest, type Scored, scoreDataset,
} from '../workers/liveness/engine/evaluation';
import { LivenessEngine } from '../workers/liveness/engine/index';

const THRESHOLDS = [0.05, 0.1, 0.15, 0.3, 0.5, 0.7];

function usage(): never {
  process.stderr.write('usage: npm run eval:liveness -- <dir with manifest.csv> [--csv scores.csv] [--shipped]\n');
  process.exit(2);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const dir = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--csv');
  if (!dir) usage();
  const csvOut = args.includes('--csv') ? args[args.indexOf('--csv') + 1] : undefined;
  const cfg = loadConfig();
  const engine = await LivenessEngine.load({
    modelsDir: cfg.MODELS_DIR,
    intraOpThreads: cfg.ORT_INTRA_OP_THREADS,
    fakeThreshold: cfg.FAKE_THRESHOLD,
    extraSpoofModels: cfg.EXTRA_SPOOF_MODELS,
  });
  const rows = readManifest(dir);
  const t0 = Date.now();
  const scored = await scoreDataset(engine, dir, rows);
  console.log(`liveness evaluation of ${path.resolve(dir)}: ${rows.length} images scored in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  // The shipped calibration was fitted on some source groups; scoring those with it would grade the curve
  // on its own training data, so for them the likelihood comes from leave-one-source-out refits instead.
  const fitted = new Set(shippedCalibration.fittedSources);
  const shared = new Set(rows.map((r) => r.group).filter((g) => fitted.has(g)));
  const useCv = shared.size > 0 && !args.includes('--shipped');
  const cv = useCv ? crossValidatedLikelihoods(scored, shippedCalibration.operatingPoint) : undefined;
  console.log(
    useCv
      ? `calibration: this set shares ${shared.size} source groups with the shipped calibration, so threshold figures (APCER, BPCER, EER) use leave-one-source-group-out refits`
      : 'calibration: as shipped (no source group of this set was used to fit it)',
  );
  // A refused image (400 invalid_image) is not accepted: it counts as rejected, i.e. score 1.
  const score = (s: Scored) => (s.error ? 1 : (cv?.get(s) ?? s.likelihood!));
  // Ranking score: the fused logit, of which the shipped likelihood is a monotone (and unrounded) function.
  const rank = (s: Scored) => (s.error ? Infinity : s.features!.fused);

  const kinds = [...new Set(rows.map((r) => r.kind))];
  for (const kind of kinds) {
    const set = scored.filter((s) => s.row.kind === kind);
    const live = set.filter((s) => s.row.label === 'live').map(score);
    const spoof = set.filter((s) => s.row.label === 'spoof').map(score);
    const fails = set.filter((s) => s.error);
    console.log(`\n== kind=${kind}: ${set.length} images (${live.length} live, ${spoof.length} spoof) ==`);
    console.log(`detection/decoding failures: ${fails.length} (live ${fails.filter((s) => s.row.label === 'live').length}, spoof ${fails.filter((s) => s.row.label === 'spoof').length}); the API answers them 400 invalid_image, counted here as rejected`);
    for (const f of fails) console.log(`  ${f.row.file}: ${f.errorMessage}`);
    const a = auc(set.filter((s) => s.row.label === 'spoof').map(rank), set.filter((s) => s.row.label === 'live').map(rank));
    const e = eer(spoof, live);
    console.log(`AUC ${a.toFixed(3)} (of the engine's score as shipped; calibration is monotone)${cv ? `, ${auc(spoof, live).toFixed(3)} pooled over the refits` : ''}`);
    console.log(`EER ${pct(e.eer)} (at ${e.threshold.toFixed(3)})`);
    console.log('threshold   APCER   BPCER');
    for (const t of THRESHOLDS) console.log(`  ${t.toFixed(2)}    ${pct(apcer(spoof, t)).padStart(6)}  ${pct(bpcer(live, t)).padStart(6)}`);
    console.log('per spoof type: n, APCER@0.15, APCER@0.5, AUC against all live');
    for (const type of [...new Set(set.filter((s) => s.row.label === 'spoof').map((s) => s.row.type))].sort()) {
      const ofType = set.filter((s) => s.row.label === 'spoof' && s.row.type === type);
      const sp = ofType.map(score);
      const ra = auc(ofType.map(rank), set.filter((s) => s.row.label === 'live').map(rank));
      console.log(`  ${type.padEnd(8)} n=${String(sp.length).padEnd(4)} ${pct(apcer(sp, 0.15)).padStart(6)}  ${pct(apcer(sp, 0.5)).padStart(6)}  ${ra.toFixed(3)}`);
    }
  }

  if (csvOut) {
    const lines = ['file,label,kind,type,group,likelihood,likelihood_shipped,fused_logit,detector,error'];
    for (const s of scored) {
      lines.push([s.row.file, s.row.label, s.row.kind, s.row.type, s.row.group, s.error ? '' : score(s).toFixed(4),
        s.likelihood?.toFixed(4) ?? '', s.features?.fused.toFixed(4) ?? '', s.features?.detector ?? '', s.error ?? '']
        .map((v) => (/[",]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(','));
    }
    fs.writeFileSync(csvOut, `${lines.join('\n')}\n`);
    console.log(`\nper-image scores written to ${csvOut}`);
  }
  // The product sees full frames: summarise those when the set says which rows they are.
  const summarySet = kinds.includes('full') ? scored.filter((s) => s.row.kind === 'full') : scored;
  const live = summarySet.filter((s) => s.row.label === 'live').map(score);
  const spoof = summarySet.filter((s) => s.row.label === 'spoof').map(score);
  console.log(kinds.includes('full') && kinds.length > 1 ? '\nsummary (full frames, the input the API gets):' : '\nsummary:');
  const ranked = auc(summarySet.filter((s) => s.row.label === 'spoof').map(rank), summarySet.filter((s) => s.row.label === 'live').map(rank));
  console.log(`AUC=${ranked.toFixed(3)} EER=${eer(spoof, live).eer.toFixed(3)} APCER@0.15=${apcer(spoof, 0.15).toFixed(3)} BPCER@0.15=${bpcer(live, 0.15).toFixed(3)} n=${summarySet.length}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
