// The fusion fitted on captures too (issue 40): `npx tsx research/liveness/explore-fusion-captures.ts <dir> [<dir>...]
//   --fold-models <train run dir> [--without model,model] [--cache var/explore-fusion-captures.json]`.
//
// Question: the fine-tuned spoof models still move with a close-up, a roll and a cool white balance, and the fusion
// that reads them (the models' logits, six face cues, a bias) is fitted on frames as taken only, so nothing in its
// fit says how its inputs move with a capture. Does fitting it on random captures as well (F), and telling it how
// much of each model's context window the frame holds (FW), keep the verdict still under the 13 variants?
//
// Candidates, each refitted per held-out repository on the other repositories' rows (weights, L2 chosen inside,
// cue standardisation, bias anchored at the out-of-source equal-error point of its own fitting rows):
// - D: the shipped recipe, fitted on the frames as taken (the reference, same run and fold models);
// - F: the same inputs, fitted on the frames as taken plus CAPTURES seeded random captures of each frame, only those
//   the gate passes (a refused capture is never judged); each capture scored by the fold models that did not
//   train on its repository;
// - FW: F plus, per model, r_k (the side of the window it reads over the side it wants: explore-window-fit.ts) and
//   logit_k x (1 - r_k).
// Rule (written before any score, research/liveness/results/train-liveness.md, 2026-12-06 12:55 UTC): a candidate
// qualifies when, as taken, AUC >= 0.945 and BPCER (live faces passing the gate) and APCER are each <= 12 %, and over
// the 13 variants the sum of positive changes (points) is at most 0.85 x D's and the largest no larger than D's.
// The smaller sum ships; sums within 2 points of each other: F (fewer terms). None qualifies: nothing ships.
import path from 'node:path';
import { loadConfig } from '../../shared/config';
import { frameCapture } from './capture-variants';
import {
  AS_TAKEN,
  outOfSourceScores,
  robustnessTable,
  type RobustnessSummary,
  scoreAll,
  type ScoredVariant,
  shiftsOf,
  VARIANTS,
  VARIANTS_VERSION,
} from './eval-robustness';
import { foldEngines } from './evaluation';
import { lostContext, windowScorer } from './explore-window-fit';

/** The variants judged: the G runs' 14. */
const JUDGED = [
  AS_TAKEN,
  'crop 1/1.5',
  'crop 1/1.75',
  'crop 1/2',
  'roll +20°',
  'roll -20°',
  'turned 90°',
  'JPEG q50',
  'long side 480',
  'cool WB',
  'gamma 1.3',
  'defocus',
  'dim light + noise',
  'JPEG q15',
];
/** Random captures per frame that F and FW are also fitted on. */
const CAPTURES = 4;
const captures = Array.from({ length: CAPTURES }, (_, k) => frameCapture('fusion', k));
/** Bump when what the scorer stores changes. */
const GEOMETRY_VERSION = 'window-fraction-1';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const valued = new Set(['--cache', '--fold-models', '--without']);
  const dirs = args.filter((a, i) => !a.startsWith('--') && !valued.has(args[i - 1] ?? ''));
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const foldDir = option('--fold-models');
  if (dirs.length === 0 || !foldDir) throw new Error('usage: explore-fusion-captures.ts <dir> [<dir>...] --fold-models <run> [--without m] [--cache f.json]');
  const cfg = loadConfig();
  const t = cfg.FAKE_THRESHOLD;
  const { engines, engineFor, key } = await foldEngines(cfg, foldDir, VARIANTS_VERSION, GEOMETRY_VERSION);
  const without = option('--without')?.split(',') ?? [];
  const models = engines[0]!.spoofSpecs.map((s) => s.name).filter((m) => !without.includes(m));
  const judged = VARIANTS.filter((v) => JUDGED.includes(v.name));
  const scorers = new Map(engines.map((e) => [e, windowScorer(e)]));
  const cacheFile = option('--cache') ?? 'var/explore-fusion-captures.json';
  const t0 = Date.now();
  const { scored, fresh } = await scoreAll(dirs, [...judged, ...captures], cacheFile, key, (bytes, format, row) => scorers.get(engineFor(row))!(bytes, format));
  console.log(
    `fusion on captures, ${dirs.map((d) => path.resolve(d)).join(', ')}, fold models of ${foldDir}: ${scored.length} frame variants (${fresh} scored now) in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );

  const captureNames = new Set(captures.map((c) => c.name));
  const asTakenOrPassedCapture = (s: ScoredVariant) => s.variant === AS_TAKEN || (captureNames.has(s.variant) && s.entry.gate === undefined);
  const logits = (s: ScoredVariant) => s.entry.features!.spoofLogits;
  const candidates = {
    D: outOfSourceScores(scored, models, t, logits, [AS_TAKEN]),
    F: outOfSourceScores(scored, models, t, logits, asTakenOrPassedCapture),
    FW: outOfSourceScores(scored, models, t, logits, asTakenOrPassedCapture, lostContext(models)),
  };
  const fittingCaptures = scored.filter((s) => captureNames.has(s.variant) && s.entry.features && s.entry.gate === undefined).length;
  console.log(`F and FW fit ${fittingCaptures} captures the gate passed besides the frames as taken (out of source: minus the held-out repository's)`);

  const summaries: Record<string, RobustnessSummary> = {};
  for (const [name, score] of Object.entries(candidates)) {
    console.log(`\n### ${name}`);
    summaries[name] = robustnessTable(scored, judged, score, t);
  }

  console.log('\ndecision rule (written before the run):');
  const ref = shiftsOf(summaries.D!);
  const qualifying: Array<{ name: string; sum: number }> = [];
  for (const name of Object.keys(candidates)) {
    const s = summaries[name]!;
    const { sum, largest } = shiftsOf(s);
    const a = s.asTaken;
    const line = `${name}: as taken AUC ${a.auc.toFixed(3)}, BPCER ${(100 * a.bpcer).toFixed(1)} %, APCER ${(100 * a.apcer).toFixed(1)} %; sum of positive shifts ${sum.toFixed(1)}, largest +${largest.toFixed(1)}`;
    if (name === 'D') {
      console.log(`${line} (reference)`);
      continue;
    }
    const ok = a.auc >= 0.945 && a.bpcer <= 0.12 && a.apcer <= 0.12 && sum <= 0.85 * ref.sum && largest <= ref.largest;
    console.log(`${line}: ${ok ? 'qualifies' : 'does not qualify'}`);
    if (ok) qualifying.push({ name, sum });
  }
  qualifying.sort((a, b) => a.sum - b.sum);
  const best = qualifying[0];
  const chosen = best && best.name === 'FW' && qualifying.some((q) => q.name === 'F' && q.sum - best.sum <= 2) ? 'F' : best?.name;
  console.log(chosen ? `ship: ${chosen}` : 'no candidate qualifies: ship nothing');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
