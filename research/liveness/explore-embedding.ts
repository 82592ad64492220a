// Issue 28 item 3, sixth experiment: refit the spoof models' last layer, in effect, on close-up windows.
// `npx tsx research/liveness/explore-embedding.ts <dir> [<dir>...] [--cache var/explore-embedding.json]`.
//
// PRE-REGISTERED (this header was committed on its own, before the code below existed or anything was run).
// Question: five experiments changed the windows or the fusion over the three spoof models' fake logits; each
// moved the close-up penalty only by giving up accuracy as taken or on attacks. The logit is one number per model,
// squeezed out of the model's last layer; the layer before it (the penultimate embedding, the input of each model's
// final classifier) keeps more. If the fusion may read a few directions of each model's embedding, fitted on
// frames as taken and their close-up copies, can it learn what a close-up changes in a live face and keep BPCER
// flat without raising APCER? This is the cheapest form of "fine-tuning the models on close-up windows": their
// last layer relearnt, the rest frozen, with no training stack.
// Features: the engine's own (three fake logits, six cues) plus, per model k, the first 8 principal components of
// its penultimate embedding on the window the engine reads (spoof.ts's crop, unchanged); the components fitted per
// fold on the fold's fitting rows (centred, not scaled), as sign-free extra terms standardised on the fitting rows
// like the cues. The embedding: the first input of the node that produces the model's output, exposed as an extra
// graph output in memory (the file and its sha256 untouched), so the logit is unchanged bit for bit.
// Candidates (every fusion refitted per held-out repository, nested, the shipped recipe: three non-negative model
// weights, six cues, extra terms sign-free, L2 chosen inside the fold from L2_GRID, bias anchored at 0.15):
//   S    shipped features, fitted on the frames as taken. The reference.
//   E    with the embedding components, fitted on the frames as taken.
//   E+   with the embedding components, fitted on the frames as taken plus their close-up copies "crop 1/1.25"
//        and "crop 1/1.5" (each copy one training row in its frame's repository).
// Protocol, metrics and decision rule: the five earlier experiments', unchanged (the 13 framing variants; each
// repository scored by a fusion fitted without it; crop 1/2 and the roll cuts seen by no fit; a refused frame counts
// as rejected). C qualifies if (1) spread(C) <= spread(S) - 2 points, (2) as taken its APCER and BPCER are each at
// most S's + 2 points, (3) on every framing variant its APCER is at most S's + 2 points. Ship the qualifying
// candidate with the smallest spread (ties: E before E+); if none qualifies, ship nothing and report the figures.
// Reported, not deciding: APCER per attack type as taken; each model's embedding size.
