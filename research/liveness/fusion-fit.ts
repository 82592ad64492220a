// Owns fitting the liveness fusion (workers/liveness/engine/fusion.ts scores with what this produces, shipped as
// fusion.json beside it): L2-penalised logistic regression with non-negative model weights and sign-free cue
// weights, the bias anchored at the out-of-source equal-error point, and the L2 strength chosen by
// leave-one-source-out log-loss. Used by fit-liveness-fusion.ts, the evaluation and the experiments; nothing ships from here.
import { fusedLogit, sigmoid, type FusionParams } from '../../workers/liveness/engine/fusion';

const logit = (p: number) => Math.log(p / (1 - p));

/**
 * L2-penalised logistic regression of y (1 = spoof) on the rows of x, by Newton's method; the bias is not
 * penalised. Weights are kept non-negative (a feature whose weight would turn negative is dropped and
 * the rest refitted): every model's fake logit is evidence for "fake", so the fused score must rise with each.
 * `signFree[j]` exempts feature j from that constraint (a statistic with no known direction).
 * `sampleWeights[i]` scales sample i's share of the loss (default 1 each: the same arithmetic, the same fit).
 */
export function fitLogisticL2(
  x: number[][],
  y: number[],
  l2: number,
  signFree: readonly boolean[] = [],
  sampleWeights?: readonly number[],
): { w: number[]; b: number } {
  const k = x[0]?.length ?? 0;
  const active = Array.from({ length: k }, () => true);
  for (;;) {
    const idx = active.flatMap((a, i) => (a ? [i] : []));
    const { w, b } = newton(
      x.map((r) => idx.map((i) => r[i]!)),
      y,
      l2,
      sampleWeights,
    );
    const full = Array.from({ length: k }, () => 0);
    idx.forEach((i, j) => (full[i] = w[j]!));
    const constrained = idx.filter((i) => signFree[i] !== true);
    const worst = constrained.reduce((m, i) => (full[i]! < (full[m] ?? 0) ? i : m), constrained[0] ?? -1);
    if (worst < 0 || full[worst]! >= 0) return { w: full, b };
    active[worst] = false;
  }
}

function newton(x: number[][], y: number[], l2: number, sampleWeights?: readonly number[]): { w: number[]; b: number } {
  const k = x[0]?.length ?? 0;
  const d = k + 1; // last parameter: bias
  const theta = new Array<number>(d).fill(0);
  for (let it = 0; it < 100; it++) {
    const g = new Array<number>(d).fill(0);
    const H = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (let j = 0; j < k; j++) {
      g[j] = l2 * theta[j]!;
      H[j]![j] = l2;
    }
    H[k]![k] = 1e-9;
    for (let i = 0; i < x.length; i++) {
      const row = [...x[i]!, 1];
      let z = 0;
      for (let j = 0; j < d; j++) z += theta[j]! * row[j]!;
      const p = sigmoid(z);
      const s = sampleWeights?.[i] ?? 1;
      const r = s * (p - y[i]!);
      const wt = s * Math.max(p * (1 - p), 1e-9);
      for (let j = 0; j < d; j++) {
        g[j] = g[j]! + r * row[j]!;
        const Hj = H[j]!;
        for (let l = 0; l < d; l++) Hj[l] = Hj[l]! + wt * row[j]! * row[l]!;
      }
    }
    const step = solve(H, g);
    let moved = 0;
    for (let j = 0; j < d; j++) {
      theta[j] = theta[j]! - step[j]!;
      moved += Math.abs(step[j]!);
    }
    if (moved < 1e-10) break;
  }
  return { w: theta.slice(0, k), b: theta[k]! };
}

/** Gaussian elimination with partial pivoting (the systems are at most a few unknowns). */
function solve(A: number[][], b: number[]): number[] {
  const n = b.length;
  const M = A.map((r, i) => [...r, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    [M[c], M[p]] = [M[p]!, M[c]!];
    const piv = M[c]![c]!;
    if (Math.abs(piv) < 1e-15) continue;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r]![c]! / piv;
      const Mr = M[r]!,
        Mc = M[c]!;
      for (let l = c; l <= n; l++) Mr[l] = Mr[l]! - f * Mc[l]!;
    }
  }
  return M.map((r, i) => (Math.abs(r[i]!) < 1e-15 ? 0 : r[n]! / r[i]!));
}

/** The threshold t on scores where the share of spoofs at or below t is closest to the share of live above it. */
export function equalErrorPoint(spoof: number[], live: number[]): number {
  let best = { gap: Infinity, t: 0 };
  const cands = [...new Set([...spoof, ...live])].sort((a, b) => a - b);
  for (let i = 0; i < cands.length; i++) {
    // Midway between neighbouring scores: a threshold that does not sit on any sample.
    const t = i + 1 < cands.length ? (cands[i]! + cands[i + 1]!) / 2 : cands[i]! + 1e-6;
    const a = spoof.filter((s) => s <= t).length / spoof.length;
    const b = live.filter((s) => s > t).length / live.length;
    if (Math.abs(a - b) < best.gap) best = { gap: Math.abs(a - b), t };
  }
  return best.t;
}

export interface TrainingRow {
  logits: Record<string, number>;
  /** The face's hand-crafted cues (needed when the fusion uses any). */
  cues?: Record<string, number>;
  isSpoof: boolean;
  /** Source repository; rows of one group never straddle a split. */
  group: string;
}

export interface FitOptions {
  l2: number;
  threshold: number;
  /** Cue names to fit sign-free weights for (standardised on the fitting rows); none by default. */
  cues?: readonly string[];
}

/**
 * Fits the fusion on `rows`: L2 logistic weights on all rows, then the bias shifted so that `threshold`
 * is the equal-error point of leave-one-source-out scores of these same rows (an in-sample anchor
 * would sit too close to the training images and reject more live users out of source).
 */
export function fitFusion(rows: TrainingRow[], models: string[], opts: FitOptions): FusionParams {
  const base = fitWeights(rows, models, opts);
  const oos = sourceHeldOutLogits(rows, models, opts);
  const zStar = equalErrorPoint(
    oos.filter((o) => o.isSpoof).map((o) => o.z),
    oos.filter((o) => !o.isSpoof).map((o) => o.z),
  );
  // Shift so that the out-of-source equal-error logit maps to the threshold.
  return { ...base, bias: base.bias + logit(opts.threshold) - zStar };
}

/** Each row's fused logit from weights fitted without its source group (no anchoring). */
function sourceHeldOutLogits(rows: TrainingRow[], models: string[], opts: FitOptions): Array<{ z: number; isSpoof: boolean }> {
  const oos: Array<{ z: number; isSpoof: boolean }> = [];
  for (const g of new Set(rows.map((r) => r.group))) {
    const train = rows.filter((r) => r.group !== g);
    if (!train.some((r) => r.isSpoof) || !train.some((r) => !r.isSpoof)) continue;
    const inner = fitWeights(train, models, opts);
    for (const r of rows) if (r.group === g) oos.push({ z: fusedLogit(inner, r.logits, r.cues), isSpoof: r.isSpoof });
  }
  return oos;
}

/** The L2 strengths `chooseL2` considers (summed log-loss units). */
export const L2_GRID = [0.3, 1, 3, 10, 30, 100];

/**
 * The L2 strength of `grid` with the lowest leave-one-source-out log-loss on `rows` (ties: the first): chosen by
 * how well it predicts unseen repositories, never by the fit's own score.
 */
export function chooseL2(rows: TrainingRow[], models: string[], opts: Omit<FitOptions, 'l2'>, grid: readonly number[] = L2_GRID): number {
  let best = { loss: Infinity, l2: grid[0]! };
  for (const l2 of grid) {
    const loss = sourceHeldOutLogLoss(rows, models, { ...opts, l2 });
    if (loss < best.loss - 1e-9) best = { loss, l2 };
  }
  return best.l2;
}

/** Mean log-loss of the rows' leave-one-source-out predictions (weights only, no anchor): the model-choice criterion. */
export function sourceHeldOutLogLoss(rows: TrainingRow[], models: string[], opts: FitOptions): number {
  const oos = sourceHeldOutLogits(rows, models, opts);
  return oos.reduce((a, o) => a - Math.log(Math.max(1e-12, o.isSpoof ? sigmoid(o.z) : 1 - sigmoid(o.z))), 0) / oos.length;
}

function fitWeights(rows: TrainingRow[], models: string[], opts: FitOptions): FusionParams {
  return fitFusionTerms(rows, models, opts.cues ?? [], opts.l2);
}

/** Mean and (population) standard deviation of each cue over `rows`; a constant cue gets std 1. */
export function cueStandardisation(rows: readonly TrainingRow[], cueNames: readonly string[]): Array<{ mean: number; std: number }> {
  const cueValue = (r: TrainingRow, c: string) => {
    const v = r.cues?.[c];
    if (v === undefined) throw new Error(`training row of ${r.group} lacks the face cue "${c}"`);
    return v;
  };
  return cueNames.map((c) => {
    const mean = rows.reduce((a, r) => a + cueValue(r, c), 0) / rows.length;
    const sd = Math.sqrt(rows.reduce((a, r) => a + (cueValue(r, c) - mean) ** 2, 0) / rows.length);
    return { mean, std: sd > 0 ? sd : 1 };
  });
}

/**
 * The fusion's weights and bias (no anchor) by L2 logistic regression on `rows`: one non-negative weight per
 * model logit, one sign-free weight per cue standardised on `standardiseOn` (default: the rows themselves).
 * `sampleWeights[i]` scales row i's share of the loss (default 1 each).
 */
export function fitFusionTerms(
  rows: readonly TrainingRow[],
  models: readonly string[],
  cueNames: readonly string[],
  l2: number,
  extra: { sampleWeights?: readonly number[]; standardiseOn?: readonly TrainingRow[] } = {},
): FusionParams {
  const stats = cueStandardisation(extra.standardiseOn ?? rows, cueNames);
  const { w, b } = fitLogisticL2(
    rows.map((r) => [...models.map((m) => r.logits[m] ?? 0), ...cueNames.map((c, j) => (r.cues![c]! - stats[j]!.mean) / stats[j]!.std)]),
    rows.map((r) => (r.isSpoof ? 1 : 0)),
    l2,
    // Model logits must keep non-negative weights; a cue has no known direction, so its weight is sign-free.
    [...models.map(() => false), ...cueNames.map(() => true)],
    extra.sampleWeights,
  );
  const out: FusionParams = { weights: Object.fromEntries(models.map((m, i) => [m, w[i]!])), bias: b };
  if (cueNames.length > 0) out.cues = Object.fromEntries(cueNames.map((c, j) => [c, { weight: w[models.length + j]!, ...stats[j]! }]));
  return out;
}
