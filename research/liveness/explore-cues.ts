// Session-5 experiment (issue #12): do hand-crafted face cues (cues.ts) added to the logistic fusion hold
// out of source? `npx tsx research/liveness/explore-cues.ts <dir> [<dir>...] [--cache f.json]`.
// Every figure is leave-one-source-out on full frames: each repository is scored by a fusion (weights,
// cue standardisation, L2 choice, feature choice and threshold anchor) fitted without it. Pre-declared
// variants: the shipped three logits; + each cue alone (diagnostic only); + all six cues at L2 1; + all six
// with L2 chosen by inner leave-one-source-out log-loss; + cues chosen by nested forward selection.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { AppError } from '../../shared/errors';
import { fusedLikelihood, type FusionParams } from '../../workers/liveness/engine/fusion';
import { chooseL2, fitFusion, sourceHeldOutLogLoss, type TrainingRow } from './fusion-fit';
import { CUE_NAMES } from '../../workers/liveness/engine/cues';
import { BUILTIN_SPOOF_SPECS } from '../../workers/liveness/engine/spoof';
import { apcer, auc, bootstrapAuc, bpcer, groupsOf, pairedDelta, pct, scoreSetsFromArgs } from './evaluation';

interface Row {
  file: string;
  x: Record<string, number>;
  spoof: boolean;
  group: string;
  type: string;
  dataset: string;
}

const isCue = (f: string) => (CUE_NAMES as readonly string[]).includes(f);

/** The fusion's own training rows (fusion-fit.ts): `feats` split into model logits and cues. */
const training = (rows: Row[]): Array<TrainingRow & { row: Row }> => rows.map((r) => ({ row: r, logits: r.x, cues: r.x, isSpoof: r.spoof, group: r.group }));
const split = (feats: string[]) => ({ models: feats.filter((f) => !isCue(f)), cues: feats.filter(isCue) });

type Chooser = (train: Row[]) => { feats: string[]; l2: number };

/** The shipped recipe (fitFusion: weights, cue standardisation, anchor at the inner out-of-source EER point). */
function fitAnchored(rows: Row[], feats: string[], l2: number, threshold: number): FusionParams {
  const { models, cues } = split(feats);
  return fitFusion(training(rows), models, { l2, threshold, cues });
}
const score = (f: FusionParams, r: Row) => fusedLikelihood(f, r.x, r.x);

/** Outer leave-one-source-out: every row scored by a fusion chosen and fitted without its repository. */
function outer(rows: Row[], choose: Chooser, threshold: number): { scores: Map<Row, number>; picks: string[] } {
  const scores = new Map<Row, number>();
  const picks: string[] = [];
  for (const g of groupsOf(rows)) {
    const train = rows.filter((r) => r.group !== g);
    const { feats, l2 } = choose(train);
    picks.push(`${feats.filter(isCue).join('+') || '-'}@${l2}`);
    const f = fitAnchored(train, feats, l2, threshold);
    for (const r of rows) if (r.group === g) scores.set(r, score(f, r));
  }
  return { scores, picks };
}

function chooseL2For(train: Row[], feats: string[], threshold: number): number {
  const { models, cues } = split(feats);
  return chooseL2(training(train), models, { threshold, cues });
}

/** Greedy forward selection of cues on inner leave-one-source-out log-loss (L2 1); stops when none helps. */
function forward(train: Row[], base: string[], threshold: number): string[] {
  const loss = (feats: string[]) => {
    const { models, cues } = split(feats);
    return sourceHeldOutLogLoss(training(train), models, { l2: 1, threshold, cues });
  };
  let feats = [...base];
  let current = loss(feats);
  for (;;) {
    let best: { loss: number; f?: string } = { loss: current };
    for (const c of CUE_NAMES.filter((c) => !feats.includes(c))) {
      const l = loss([...feats, c]);
      if (l < best.loss - 1e-4) best = { loss: l, f: c };
    }
    if (!best.f) return feats;
    feats = [...feats, best.f];
    current = best.loss;
  }
}

async function main(): Promise<void> {
  const { config: cfg, engine, scored, dirs, threshold: t } = await scoreSetsFromArgs(process.argv.slice(2));
  // Operator models (EXTRA_SPOOF_MODELS, e.g. the built-ins at another crop scale) are tried as extra features.
  const extras = (cfg.EXTRA_SPOOF_MODELS ? engine.spoofSpecs.filter((s) => !BUILTIN_SPOOF_SPECS.some((b) => b.name === s.name)) : []).map((s) => s.name);
  const models = engine.spoofSpecs.map((s) => s.name).filter((n) => !extras.includes(n));
  const rows: Row[] = scored
    .filter((s) => s.row.kind === 'full' && s.features?.cues)
    .map((s) => ({
      file: s.row.file,
      x: { ...s.features!.spoofLogits, ...s.features!.cues! },
      spoof: s.row.label === 'spoof',
      group: s.row.group,
      type: s.row.type,
      dataset: s.row.dataset,
    }));
  const live = rows.filter((r) => !r.spoof);
  console.log(`${rows.length} full frames (${live.length} live) from ${groupsOf(rows).length} repositories; models ${models.join(', ')}`);

  console.log('\nraw cue AUC (spoof vs live; < 0.5 means spoofs score lower), all spoofs / print / screen / mask:');
  for (const c of CUE_NAMES) {
    const a = (type?: string) =>
      auc(
        rows.filter((r) => r.spoof && (!type || r.type === type)).map((r) => r.x[c]!),
        live.map((r) => r.x[c]!),
      ).toFixed(3);
    console.log(`  ${c.padEnd(15)} ${a()} ${a('print')} ${a('screen')} ${a('mask')}`);
  }

  const report = (name: string, res: { scores: Map<Row, number>; picks: string[] }, base?: Map<Row, number>) => {
    const s = (f: (r: Row) => boolean) => rows.filter(f).map((r) => res.scores.get(r)!);
    const sp = s((r) => r.spoof),
      lv = s((r) => !r.spoof);
    const [lo, hi] = bootstrapAuc(rows.map((r) => ({ group: r.group, spoof: r.spoof, score: res.scores.get(r)! })));
    const type = (ty: string) =>
      pct(
        apcer(
          s((r) => r.spoof && r.type === ty),
          t,
        ),
      );
    const delta = base ? pairedDelta(rows, (r) => r.spoof, res.scores, base) : undefined;
    console.log(
      `${name.padEnd(34)} AUC ${auc(sp, lv).toFixed(3)} (${lo.toFixed(3)}-${hi.toFixed(3)}) APCER ${pct(apcer(sp, t))} BPCER ${pct(bpcer(lv, t))}` +
        ` | print ${type('print')} screen ${type('screen')} mask ${type('mask')} unk ${type('unknown')}` +
        (delta ? ` | dAUC 95% ${delta[0].toFixed(3)}..${delta[1].toFixed(3)}` : ''),
    );
    const counts = new Map<string, number>();
    for (const p of res.picks) counts.set(p, (counts.get(p) ?? 0) + 1);
    if (counts.size > 1 || ![...counts.keys()][0]?.startsWith('-'))
      console.log(`    choices over folds: ${[...counts].map(([k, v]) => `${k} x${v}`).join(', ')}`);
    return res.scores;
  };

  console.log(`\nleave-one-source-out, full frames, threshold ${t}:`);
  const base = report(
    'shipped: 3 logits, L2 1',
    outer(rows, () => ({ feats: models, l2: 1 }), t),
  );
  for (const c of CUE_NAMES)
    report(
      `+ ${c} (diagnostic)`,
      outer(rows, () => ({ feats: [...models, c], l2: 1 }), t),
      base,
    );
  report(
    '+ all 6 cues, L2 1',
    outer(rows, () => ({ feats: [...models, ...CUE_NAMES], l2: 1 }), t),
    base,
  );
  report(
    '+ all 6 cues, L2 by inner LOSO',
    outer(
      rows,
      (train) => {
        const feats = [...models, ...CUE_NAMES];
        return { feats, l2: chooseL2For(train, feats, t) };
      },
      t,
    ),
    base,
  );
  report(
    '+ cues by nested forward selection',
    outer(rows, (train) => ({ feats: forward(train, models, t), l2: 1 }), t),
    base,
  );
  if (extras.length > 0) {
    for (const e of extras)
      report(
        `+ ${e} (test-time augmentation)`,
        outer(rows, () => ({ feats: [...models, e], l2: 1 }), t),
        base,
      );
    report(
      `+ all ${extras.length} extra passes`,
      outer(rows, () => ({ feats: [...models, ...extras], l2: 1 }), t),
      base,
    );
    report(
      `+ extra passes + 6 cues, inner L2`,
      outer(
        rows,
        (train) => {
          const feats = [...models, ...extras, ...CUE_NAMES];
          return { feats, l2: chooseL2For(train, feats, t) };
        },
        t,
      ),
      base,
    );
  }

  // The principled variant (no fixed hyper-parameter): where it moves, per repository, and its fit on all frames.
  const feats = [...models, ...CUE_NAMES];
  const cueRes = outer(rows, (train) => ({ feats, l2: chooseL2For(train, feats, t) }), t);
  const ci = (m: (sp: number[], lv: number[]) => number, pct100 = false) => {
    const [lo, hi] = pairedDelta(rows, (r) => r.spoof, cueRes.scores, base, m);
    return pct100 ? `${(100 * lo).toFixed(1)}..${(100 * hi).toFixed(1)} points` : `${lo.toFixed(3)}..${hi.toFixed(3)}`;
  };
  console.log(
    `\nall 6 cues, inner L2, minus shipped, paired bootstrap over repositories (95%): AUC ${ci(auc)}, APCER@${t} ${ci((sp) => apcer(sp, t), true)}, BPCER@${t} ${ci((_, lv) => bpcer(lv, t), true)}`,
  );
  console.log(`\nper repository where a verdict moved (all 6 cues, inner L2 vs shipped): live n, BPCER before -> after, spoof n, APCER before -> after`);
  for (const g of groupsOf(rows).sort()) {
    const gr = rows.filter((r) => r.group === g);
    const lv = gr.filter((r) => !r.spoof),
      sp = gr.filter((r) => r.spoof);
    const b1 = lv.filter((r) => base.get(r)! > t).length,
      b2 = lv.filter((r) => cueRes.scores.get(r)! > t).length;
    const a1 = sp.filter((r) => base.get(r)! <= t).length,
      a2 = sp.filter((r) => cueRes.scores.get(r)! <= t).length;
    if (b1 !== b2 || a1 !== a2) console.log(`  ${gr[0]!.dataset.padEnd(14)} ${g.padEnd(58)} ${lv.length} ${b1} -> ${b2}   ${sp.length} ${a1} -> ${a2}`);
  }
  const l2 = chooseL2For(rows, feats, t);
  const m = fitAnchored(rows, feats, l2, t);
  console.log(`fit on all ${rows.length} frames (L2 ${l2}); model weights per logit, cue weights per standard deviation:`);
  for (const [f, w] of Object.entries(m.weights)) console.log(`  ${f.padEnd(22)} w ${w.toFixed(3)}`);
  for (const [f, c] of Object.entries(m.cues ?? {}))
    console.log(`  ${f.padEnd(22)} w ${c.weight.toFixed(3)}  mean ${c.mean.toFixed(4)}  std ${c.std.toFixed(4)}`);
  console.log(`  bias ${m.bias.toFixed(3)}`);

  // Shift between the two collections: fit (weights, L2, anchor) on one set's repositories, score the other.
  const variants: Array<[string, Chooser]> = [
    ['shipped: 3 logits, L2 1', () => ({ feats: models, l2: 1 })],
    ['+ all 6 cues, L2 by inner LOSO', (train) => ({ feats, l2: chooseL2For(train, feats, t) })],
  ];
  console.log('\nleave-one-set-out (fit on one set, score the other):');
  for (const [train, test] of [
    ['liveness', 'liveness-pool'],
    ['liveness-pool', 'liveness'],
  ]) {
    const tr = rows.filter((r) => r.dataset === train),
      te = rows.filter((r) => r.dataset === test);
    if (tr.length === 0 || te.length === 0) continue;
    for (const [name, choose] of variants) {
      const c = choose(tr);
      const mm = fitAnchored(tr, c.feats, c.l2, t);
      const sp = te.filter((r) => r.spoof).map((r) => score(mm, r));
      const lv = te.filter((r) => !r.spoof).map((r) => score(mm, r));
      console.log(`  ${train} -> ${test}: ${name.padEnd(32)} AUC ${auc(sp, lv).toFixed(3)} APCER ${pct(apcer(sp, t))} BPCER ${pct(bpcer(lv, t))}`);
    }
  }

  // Robustness to what a client's camera or upload path does to the same frame: each repository's frames
  // re-encoded, scored by the fusion fitted out of source on the original frames. A refused frame counts as rejected.
  const perturbations: Record<string, (b: Buffer) => Promise<Buffer>> = {
    'jpeg q70 4:2:0': (b) => sharp(b).rotate().jpeg({ quality: 70, chromaSubsampling: '4:2:0' }).toBuffer(),
    // Worst case for the colour cues: no chroma at all (a black-and-white camera or a client that strips colour).
    'greyscale, jpeg q90': (b) => sharp(b).rotate().greyscale().jpeg({ quality: 90 }).toBuffer(),
    'half size, jpeg q90': async (b) => {
      const meta = await sharp(b).rotate().toBuffer({ resolveWithObject: true });
      return sharp(meta.data)
        .resize({ width: Math.round(meta.info.width / 2) })
        .jpeg({ quality: 90 })
        .toBuffer();
    },
  };
  const dirOf = new Map(dirs.map((d) => [path.basename(path.resolve(d)), d]));
  for (const [pname, perturb] of Object.entries(perturbations)) {
    const shifted = new Map<Row, Row | undefined>();
    for (const r of rows) {
      const bytes = await perturb(fs.readFileSync(path.join(dirOf.get(r.dataset)!, r.file)));
      try {
        const { features } = await engine.analyzeDetailed(bytes, 'jpeg');
        shifted.set(r, { ...r, x: { ...features.spoofLogits, ...features.cues } });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        shifted.set(r, undefined);
      }
    }
    console.log(
      `\nperturbed frames (${pname}; ${[...shifted.values()].filter((v) => !v).length} refused), scored out of source by fusions fitted on the originals:`,
    );
    for (const [name, choose] of variants) {
      const scores = new Map<Row, number>();
      for (const g of groupsOf(rows)) {
        const train = rows.filter((r) => r.group !== g);
        const c = choose(train);
        const mm = fitAnchored(train, c.feats, c.l2, t);
        for (const r of rows) if (r.group === g) scores.set(r, shifted.get(r) ? score(mm, shifted.get(r)!) : 1);
      }
      const sp = rows.filter((r) => r.spoof).map((r) => scores.get(r)!);
      const lv = rows.filter((r) => !r.spoof).map((r) => scores.get(r)!);
      const byType = (ty: string) =>
        pct(
          apcer(
            rows.filter((r) => r.spoof && r.type === ty).map((r) => scores.get(r)!),
            t,
          ),
        );
      console.log(
        `  ${name.padEnd(32)} AUC ${auc(sp, lv).toFixed(3)} APCER ${pct(apcer(sp, t))} BPCER ${pct(bpcer(lv, t))} | print ${byType('print')} screen ${byType('screen')}`,
      );
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
