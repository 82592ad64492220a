// Owns the map from the ensemble's fused fake logit to isFakeLikelihood: a logistic curve whose intercept is
// anchored so that the default threshold is a chosen operating point. Fitting lives here too (scripts reuse it).
import calibrationJson from './calibration.json';

export interface Calibration {
  /** likelihood = sigmoid(a * fusedLogit + b) */
  a: number;
  b: number;
  /** Threshold and target live-rejection rate the intercept was anchored to. */
  operatingPoint: { threshold: number; targetBpcer: number };
  /** Source groups (owner/repo) of the images it was fitted on: scoring those again is not an honest test. */
  fittedSources: string[];
}

export const shippedCalibration: Calibration = calibrationJson;

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
const logit = (p: number) => Math.log(p / (1 - p));

export function calibrate(c: Pick<Calibration, 'a' | 'b'>, fusedLogit: number): number {
  return sigmoid(c.a * fusedLogit + c.b);
}

/** Plain logistic regression of y (1 = spoof) on x, by Newton's method with a tiny ridge for separable data. */
export function fitLogistic(x: number[], y: number[], ridge = 1e-3): { a: number; b: number } {
  let a = 0, b = 0;
  for (let it = 0; it < 100; it++) {
    let ga = ridge * a, gb = 0, haa = ridge, hab = 0, hbb = 0;
    for (let i = 0; i < x.length; i++) {
      const xi = x[i]!;
      const p = sigmoid(a * xi + b);
      const r = p - y[i]!;
      const w = Math.max(p * (1 - p), 1e-9);
      ga += r * xi; gb += r;
      haa += w * xi * xi; hab += w * xi; hbb += w;
    }
    const det = haa * hbb - hab * hab;
    if (Math.abs(det) < 1e-12) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    a -= da; b -= db;
    if (Math.abs(da) + Math.abs(db) < 1e-9) break;
  }
  return { a, b };
}

/**
 * Shifts the intercept so that, on the live images given, a share `targetBpcer` scores above `threshold`.
 * A plain logistic fit puts its 0.5 point where the classes balance; the product's default threshold is
 * 0.15, so we move the curve rather than the threshold and keep the slope the fit found.
 */
export function anchorIntercept(a: number, liveLogits: number[], threshold: number, targetBpcer: number): number {
  const s = liveLogits.map((x) => a * x).sort((p, q) => p - q);
  // Linear-interpolated (1 - target) quantile of a*x over the live images.
  const pos = (1 - targetBpcer) * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(s.length - 1, lo + 1);
  const q = (s[lo] ?? 0) + ((s[hi] ?? 0) - (s[lo] ?? 0)) * (pos - lo);
  return logit(threshold) - q;
}

/** The fit used both by the fitting script (all data) and by cross-validation (training folds only). */
export function fitCalibration(
  fused: number[],
  isSpoof: boolean[],
  operatingPoint: Calibration['operatingPoint'],
): { a: number; b: number } {
  const { a } = fitLogistic(fused, isSpoof.map((s) => (s ? 1 : 0)));
  const live = fused.filter((_, i) => !isSpoof[i]);
  return { a, b: anchorIntercept(a, live, operatingPoint.threshold, operatingPoint.targetBpcer) };
}
