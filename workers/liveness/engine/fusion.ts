// Owns the map from the spoof models' fake logits and the face's hand-crafted cues to isFakeLikelihood: a small
// logistic model (one non-negative weight per model, one sign-free weight per standardised cue, a bias) fitted
// with L2, whose bias is anchored so that the default threshold sits at the equal-error point of out-of-source
// scores. Only the scoring side: the fitting that produced fusion.json lives in research/liveness/fusion-fit.ts.
import fusionJson from './fusion.json';

/** A cue's term: weight x (value - mean) / std, mean and std those of the frames the fusion was fitted on. */
export interface CueTerm {
  weight: number;
  mean: number;
  std: number;
}

export interface FusionParams {
  /** isFakeLikelihood = sigmoid(bias + sum over models of weights[model] * fakeLogit[model] + cue terms) */
  weights: Record<string, number>;
  bias: number;
  /** Hand-crafted face cues (cues.ts) by name; absent or empty: none. */
  cues?: Record<string, CueTerm>;
}

export interface Fusion extends FusionParams {
  /** Threshold the bias was anchored to, and how. */
  operatingPoint: { threshold: number; rule: string };
  l2: number;
  /** How l2 was set: "given", or chosen by leave-one-source-out log-loss (the eval then chooses it inside each fold too). */
  l2Rule?: string;
  /** Source groups (owner/repo) of the images it was fitted on: scoring those again is not an honest test. */
  fittedSources: string[];
}

export const shippedFusion: Fusion = fusionJson;

export const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

export function fusedLogit(f: FusionParams, logits: Record<string, number>, cues: Record<string, number> = {}): number {
  let z = f.bias;
  for (const [name, w] of Object.entries(f.weights)) z += w * (logits[name] ?? 0);
  for (const [name, t] of Object.entries(f.cues ?? {})) {
    const v = cues[name];
    // A missing cue would silently shift every score: refuse instead.
    if (v === undefined || !Number.isFinite(v)) throw new Error(`fusion needs the face cue "${name}"`);
    z += (t.weight * (v - t.mean)) / t.std;
  }
  return z;
}

export const fusedLikelihood = (f: FusionParams, logits: Record<string, number>, cues?: Record<string, number>) => sigmoid(fusedLogit(f, logits, cues));
