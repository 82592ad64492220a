// Issue 28 item 3, fifth experiment: the hybrid windows of the fourth, with the padded logits weighed apart.
// `npx tsx research/liveness/explore-hybrid-split.ts <dir> [<dir>...] [--cache var/explore-hybrid.json]`.
//
// PRE-REGISTERED (this header was committed on its own, before the code below existed or anything was run).
// Question: explore-hybrid.ts (fourth experiment) padded only the windows cut deeper than frames as taken usually
// are (r_k < t_k, the fold's 10th percentile of r_k as taken) and fed the padded model's logit into the same slot
// as the shifted one. The close-up penalty went (BPCER at crop 1/2: 16.4 % against S's 43.8 %), but BPCER and APCER
// as taken rose to 15.3 / 15.6 % (S: 10.0 / 10.0 %) although only 15 % of frames as taken had a padded window: one
// weight per model had to serve two kinds of logit. If the padded logits get weights of their own, do the frames
// as taken keep the shipped accuracy while close-ups keep the hybrid's?
// Features, per model k, with t_k and r_k exactly as in explore-hybrid.ts (per fold, from the fitting rows as taken):
//   the model slot: S's logit_k when r_k >= t_k, else the mean S logit_k of the fold's fitting rows with r_k >= t_k
//     (explore-window-fit.ts's D+ rule: a neutral value, so the slot's weight is learnt on shifted windows only);
//   two extra terms (sign-free, standardised on the fitting rows like the cues): padded_k = R's logit_k when
//     r_k < t_k, else 0; and the indicator 1[r_k < t_k].
// Candidates (every fusion refitted per held-out repository, nested, the shipped recipe: three non-negative model
// weights, the six shipped cues, extra terms as above, L2 chosen inside the fold from L2_GRID, bias anchored at
// FAKE_THRESHOLD = 0.15):
//   S    shipped features, fitted on the frames as taken. The reference.
//   P    the features above, fitted on the frames as taken.
//   P+   the features above, fitted on the frames as taken plus their close-up copies "crop 1/1.25" and
//        "crop 1/1.5" (as H+).
// Protocol, metrics and decision rule: explore-hybrid.ts's, unchanged (the 13 framing variants; each repository
// scored by a fusion fitted without it; crop 1/2 and the roll cuts seen by no fit; a refused frame counts as
// rejected). C qualifies if (1) spread(C) <= spread(S) - 2 points, (2) as taken its APCER and BPCER are each at
// most S's + 2 points, (3) on every framing variant its APCER is at most S's + 2 points. Ship the qualifying
// candidate with the smallest spread (ties: P before P+); if none qualifies, ship nothing and report the figures.
// Reported, not deciding: APCER per attack type as taken; the weights fitted on all repositories.
//
// (Code below added after the header's commit; the header above is unchanged.) Features, thresholds and the cache
// are explore-hybrid.ts's; the out-of-source fits are eval-robustness.ts's, given the extra terms.
import { AS_TAKEN, type ExtraTerms, fittedWeightsLine, outOfSourceScores, type ScoredVariant } from './eval-robustness';
import { framingReport, framingRule } from './explore-framing';
import { COPIES, fractions, scoreHybridFeatures, thresholds } from './explore-hybrid';

/** P / P+: shifted windows in the model slots, padded ones in terms of their own, per the fold's thresholds. */
const paddedApart = (models: string[]): ExtraTerms => ({
  names: models.flatMap((m) => [`padded:${m}`, `ind:${m}`]),
  forFold: (fitting) => {
    const t = thresholds(fitting, models);
    const shifted = (s: ScoredVariant, m: string) => fractions(s)[m]! >= t[m]!;
    const mean = Object.fromEntries(
      models.map((m) => {
        const kept = fitting.filter((s) => shifted(s, m)).map((s) => s.entry.features!.spoofLogits[m]!);
        return [m, kept.reduce((a, b) => a + b, 0) / kept.length];
      }),
    );
    return (s) => ({
      logits: Object.fromEntries(models.map((m) => [m, shifted(s, m) ? s.entry.features!.spoofLogits[m]! : mean[m]!])),
      terms: Object.fromEntries(
        models.flatMap((m) => [[`padded:${m}`, shifted(s, m) ? 0 : s.entry.alt!.R![m]!] as const, [`ind:${m}`, shifted(s, m) ? 0 : 1] as const]),
      ),
    });
  },
});

async function main(): Promise<void> {
  const { scored, t, models } = await scoreHybridFeatures(process.argv.slice(2));
  const engineLogits = (s: ScoredVariant) => s.entry.features!.spoofLogits;
  const candidates: Record<string, { fittedOn: string[]; extra?: ExtraTerms }> = {
    S: { fittedOn: [AS_TAKEN] },
    P: { fittedOn: [AS_TAKEN], extra: paddedApart(models) },
    'P+': { fittedOn: [AS_TAKEN, ...COPIES], extra: paddedApart(models) },
  };
  const scores = Object.fromEntries(Object.entries(candidates).map(([n, c]) => [n, outOfSourceScores(scored, models, t, engineLogits, c.fittedOn, c.extra)]));
  const rates = framingReport(scored, scores, t);

  console.log('\nreported, not deciding: P and P+ fitted on all repositories (weights of standardised terms)');
  for (const n of ['P', 'P+']) console.log(fittedWeightsLine(n, scored, candidates[n]!.fittedOn, models, t, engineLogits, candidates[n]!.extra));

  console.log('\ndecision rule (pre-registered in the header):');
  const chosen = framingRule(rates, 'S', ['P', 'P+']);
  console.log(chosen ? `ship: ${chosen}` : 'no candidate qualifies: ship nothing');
}

if (require.main === module)
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
