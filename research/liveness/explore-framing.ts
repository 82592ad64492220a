// Issue 28 item 3 experiment: framing and roll of the spoof models' context crops.
// `npx tsx research/liveness/explore-framing.ts <dir> [<dir>...] [--cache var/explore-framing.json]`.
//
// PRE-REGISTERED (this header was committed on its own, before the code below existed or anything was run).
// Question: the three spoof models read a context window around the face (2.7x / 2.7x / 4.0x the face). A close-up
// (the face fills more of the frame) pushes the window out of the frame, and today it is shifted back inside, so the
// face is no longer at its centre and the models see a different context; a rolled face is cropped rolled. Live
// people pay (issue 28: 11-25 % of live faces rejected in close-ups). Does levelling the eye line before cropping,
// and handling a window that leaves the frame differently, keep BPCER flat across close-ups and roll without
// raising APCER?
// Candidates (every one refitted: its own fusion weights, L2 and anchor, nested out of source):
//   S    shipped: no alignment; a window that leaves the frame is shifted inside (shrunk if larger than the frame).
//   AS   eye line levelled (roll from BlazeFace front's eye keypoints of the adopted face; 0 when it has none),
//        the window turned with the face about the face centre; a window leaving the frame shifted inside.
//   AR   levelled; the window stays centred on the face; pixels outside the frame replicate the edge.
//   AF   levelled; the window stays centred on the face; pixels outside the frame mirror the frame (reflect).
//   AL   levelled; centred on the face, at the largest scale (<= the model's own) at which it fits in the frame.
// Protocol: the full frames of all sets given and the framing variants of eval-robustness.ts (as taken; centre
// crops 1/1.25, 1/1.5, 1/2 keeping the whole face; roll +-10/20/30 degrees cut so no empty corner shows, and the same
// cuts without roll). Each repository is scored by a fusion fitted on the unaltered frames of the other repositories
// (each candidate with its own features, the shipped recipe: three logits, six cues, L2 chosen inside the fold, bias
// anchored at FAKE_THRESHOLD = 0.15). Metrics at 0.15 with frame counts, bootstrap intervals over repositories.
// Decision rule, fixed here: let spread(C) = the largest |BPCER(variant) - BPCER(as taken)| over the 12 framing
// variants (percentage points, candidate C's own scores). A candidate qualifies if
//   (1) spread(C) <= spread(S) - 2 points, and
//   (2) on the frames as taken, its APCER is at most S's + 2 points and its BPCER at most S's + 2 points, and
//   (3) on every framing variant, its APCER is at most S's APCER on that variant + 2 points.
// Ship the qualifying candidate with the smallest spread (ties: the simpler one, in the order AS, AL, AR, AF); if
// none qualifies, ship nothing and report the figures. Reported whatever they say, none used to decide: AUC per
// variant, APCER per attack type (print, screen, mask), the paired bootstrap of each change against S.
