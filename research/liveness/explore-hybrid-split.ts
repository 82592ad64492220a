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
