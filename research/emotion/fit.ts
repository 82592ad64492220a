// Owns fitting the emotion mapping on labelled speech (used by `npm run fit:emotion`): targets per emotion
// class, the reference from the data, a piecewise-linear logistic regression per output shrunk towards the
// knowledge-based weights, speaker-grouped cross-validation, and out-of-speaker AUCs with a speaker-bootstrap
// interval. Pure functions on feature vectors: reading files and running the engine is the script's job.
import { auc, seededRandom } from '../stats';
import { KNOWLEDGE_MAPPING, type MappingParameters, zScores } from '../../models/emotion/build-mapping';
import { FEATURE_NAMES, type FeatureName } from '../../models/emotion/feature-names';

export type Features = Record<FeatureName, number>;

/** One clip of the corpus: its speaker, its (normalised) emotion class, a weight, and one vector per window with speech. */
export interface Clip {
  file: string;
  speaker: string;
  emotion: string;
  weight: number;
  windows: Features[];
}

/** Corpus labels (CREMA-D's three-letter codes, RAVDESS-style words) → the classes the targets use. */
const CLASS_ALIASES: Record<string, string> = {
  ang: 'angry',
  anger: 'angry',
  angry: 'angry',
  hap: 'happy',
  happy: 'happy',
  happiness: 'happy',
  joy: 'happy',
  neu: 'neutral',
  neutral: 'neutral',
  sad: 'sad',
  sadness: 'sad',
  cal: 'calm',
  calm: 'calm',
  tenderness: 'calm',
  fea: 'fear',
  fear: 'fear',
  fearful: 'fear',
  dis: 'disgust',
  disgust: 'disgust',
  sur: 'surprise',
  surprise: 'surprise',
  surprised: 'surprise',
};

export function emotionClass(label: string): string {
  const l = label.trim().toLowerCase();
  return CLASS_ALIASES[l] ?? l;
}

/**
 * Training targets (probability the output should read "high"), from the service's definitions: rough is how
 * charged the voice is (anger, joy, fear, surprise high; neutral, calm, sadness low); soft is friendly and
 * gentle (joy and calm high, neutral in between, sadness low, anger and disgust lowest). Other classes are
 * not used for that output.
 */
export const TARGETS: Record<'rough' | 'soft', Record<string, number>> = {
  rough: { angry: 1, happy: 1, fear: 1, surprise: 1, neutral: 0, calm: 0, sad: 0 },
  soft: { happy: 1, calm: 1, neutral: 0.6, sad: 0.2, fear: 0.2, angry: 0, disgust: 0 },
};

/** The figures the fit reports: [output, positive class, negative class]. */
export const CHECKS: Array<['rough' | 'soft', string, string]> = [
  ['rough', 'angry', 'neutral'],
  ['rough', 'happy', 'neutral'],
  ['soft', 'happy', 'angry'],
  ['soft', 'neutral', 'angry'],
  ['soft', 'happy', 'sad'],
];

/** Intensity column: CREMA-D's HI/MD/LO/XX or a number 0..1; weights the clip (stronger acting counts more). */
export function intensityWeight(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 1;
  const v = value.trim().toUpperCase();
  const coded: Record<string, number> = { HI: 1, MD: 0.8, LO: 0.6, XX: 0.8 };
  if (v in coded) return coded[v]!;
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? Math.min(1, n) : 1;
}

/** The reference from data: neutral (else all) clips' mean, all clips' spread; NaNs ignored. */
export function fitReference(clips: Clip[]): MappingParameters['reference'] {
  const neutral = clips.filter((c) => c.emotion === 'neutral');
  const centreSet = neutral.length >= 3 ? neutral : clips;
  const out = {} as MappingParameters['reference'];
  for (const f of FEATURE_NAMES) {
    const centre = finite(centreSet.flatMap((c) => c.windows.map((w) => w[f])));
    const all = finite(clips.flatMap((c) => c.windows.map((w) => w[f])));
    const prior = KNOWLEDGE_MAPPING.reference[f];
    const mean = centre.length > 0 ? avg(centre) : prior.mean;
    const sd = all.length > 2 ? Math.sqrt(avg(all.map((x) => (x - avg(all)) ** 2))) : prior.sd;
    out[f] = { mean, sd: Math.max(sd, prior.sd * 0.1) };
  }
  return out;
}

type Normalisation = Pick<MappingParameters, 'reference' | 'h1h2PerSemitone'>;

/** [z above the reference…, z below…] for one window, as the ONNX graph computes it. */
export function sides(p: Normalisation, x: Features): number[] {
  const z = zScores(p, x);
  return [...z.map((v) => Math.max(0, v)), ...z.map((v) => Math.min(0, v))];
}

function priorVector(output: 'rough' | 'soft'): number[] {
  const w = KNOWLEDGE_MAPPING.weights;
  return [...FEATURE_NAMES.map((f) => w[f][output].above), ...FEATURE_NAMES.map((f) => w[f][output].below)];
}

export interface FitOptions {
  /** L2 strength of the pull towards the knowledge-based weights. */
  l2: number;
  iterations: number;
}

export const DEFAULT_FIT: FitOptions = { l2: 0.05, iterations: 400 };

/** Weighted logistic regression (fractional targets) by gradient descent with Adam, shrunk towards the prior. */
function logistic(
  xs: number[][],
  ys: number[],
  ws: number[],
  offsets: number[],
  prior: number[],
  priorBias: number,
  o: FitOptions,
): { beta: number[]; bias: number } {
  const d = prior.length;
  const beta = [...prior];
  let bias = priorBias;
  const m = new Array<number>(d + 1).fill(0);
  const v = new Array<number>(d + 1).fill(0);
  const wsum = ws.reduce((a, b) => a + b, 0) || 1;
  const lr = 0.05;
  for (let it = 1; it <= o.iterations; it++) {
    const g = new Array<number>(d + 1).fill(0);
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i]!;
      let t = bias + offsets[i]!;
      for (let j = 0; j < d; j++) t += beta[j]! * x[j]!;
      const err = (ws[i]! * (1 / (1 + Math.exp(-t)) - ys[i]!)) / wsum;
      for (let j = 0; j < d; j++) g[j]! += err * x[j]!;
      g[d]! += err;
    }
    for (let j = 0; j < d; j++) g[j]! += o.l2 * (beta[j]! - prior[j]!);
    for (let j = 0; j <= d; j++) {
      m[j] = 0.9 * m[j]! + 0.1 * g[j]!;
      v[j] = 0.999 * v[j]! + 0.001 * g[j]! ** 2;
      const step = (lr * (m[j]! / (1 - 0.9 ** it))) / (Math.sqrt(v[j]! / (1 - 0.999 ** it)) + 1e-8);
      if (j < d) beta[j]! -= step;
      else bias -= step;
    }
  }
  return { beta, bias };
}

/** Fits reference and weights on the clips; `source` is recorded in the model. */
export function fitMapping(clips: Clip[], source: string, o: FitOptions = DEFAULT_FIT): MappingParameters {
  const reference = fitReference(clips);
  const norm = { reference, h1h2PerSemitone: KNOWLEDGE_MAPPING.h1h2PerSemitone };
  const weights = structuredClone(KNOWLEDGE_MAPPING.weights);
  const bias = { ...KNOWLEDGE_MAPPING.bias };
  const F = FEATURE_NAMES.length;
  for (const output of ['rough', 'soft'] as const) {
    const xs: number[][] = [];
    const ys: number[] = [];
    const ws: number[] = [];
    const offsets: number[] = [];
    for (const c of clips) {
      const y = TARGETS[output][c.emotion];
      if (y === undefined) continue;
      for (const w of c.windows) {
        xs.push(sides(norm, w));
        // The harshness term is kept as the knowledge-based one (on this reference): a fixed part of soft.
        offsets.push(output === 'soft' ? harshLogit(KNOWLEDGE_MAPPING.harshness, norm, w) : 0);
        ys.push(y);
        ws.push(c.weight / c.windows.length);
      }
    }
    if (xs.length === 0) continue;
    const fit = logistic(xs, ys, ws, offsets, priorVector(output), KNOWLEDGE_MAPPING.bias[output], o);
    FEATURE_NAMES.forEach((f, j) => (weights[f][output] = { above: fit.beta[j]!, below: fit.beta[F + j]! }));
    bias[output] = fit.bias;
  }
  return { ...norm, weights, bias, harshness: structuredClone(KNOWLEDGE_MAPPING.harshness), source };
}

/** The harshness term's contribution to soft's logit (≤ 0), as the ONNX graph computes it. */
export function harshLogit(h: MappingParameters['harshness'], p: Normalisation, x: Features): number {
  const z = zScores(p, x);
  const sum = FEATURE_NAMES.reduce((s, f, j) => s + h.weights[f] * z[j]!, h.bias);
  return -h.soft * Math.max(0, sum);
}

/** Clip scores (mean over its windows, like the API's summary) under a mapping, computed as the ONNX graph does. */
export function clipScores(p: MappingParameters, clip: Clip): { rough: number; soft: number } {
  const F = FEATURE_NAMES.length;
  const out = { rough: 0, soft: 0 };
  for (const output of ['rough', 'soft'] as const) {
    let s = 0;
    for (const w of clip.windows) {
      const x = sides(p, w);
      let t = p.bias[output] + (output === 'soft' ? harshLogit(p.harshness, p, w) : 0);
      FEATURE_NAMES.forEach((f, j) => (t += p.weights[f][output].above * x[j]! + p.weights[f][output].below * x[F + j]!));
      s += 1 / (1 + Math.exp(-t));
    }
    out[output] = clip.windows.length > 0 ? s / clip.windows.length : 0;
  }
  return out;
}

/** Speakers dealt into k folds in a fixed order (sorted names), so a run can be repeated. */
export function speakerFolds(clips: Clip[], k: number): string[][] {
  const speakers = [...new Set(clips.map((c) => c.speaker))].sort();
  const folds: string[][] = Array.from({ length: Math.min(k, speakers.length) }, () => []);
  speakers.forEach((s, i) => folds[i % folds.length]!.push(s));
  return folds;
}

/** Out-of-speaker clip scores: each fold's clips scored by a mapping fitted without its speakers. */
export function crossValidatedScores(clips: Clip[], k: number, o: FitOptions = DEFAULT_FIT): Map<Clip, { rough: number; soft: number }> {
  const out = new Map<Clip, { rough: number; soft: number }>();
  for (const fold of speakerFolds(clips, k)) {
    const held = new Set(fold);
    const mapping = fitMapping(
      clips.filter((c) => !held.has(c.speaker)),
      'cv',
      o,
    );
    for (const c of clips.filter((c) => held.has(c.speaker))) out.set(c, clipScores(mapping, c));
  }
  return out;
}

export interface AucFigure {
  output: 'rough' | 'soft';
  positive: string;
  negative: string;
  auc: number;
  low: number;
  high: number;
  n: [number, number];
}

/** The CHECKS' AUCs with a 95 % speaker-bootstrap interval (speakers drawn with replacement; seeded). */
export function aucFigures(clips: Clip[], scores: Map<Clip, { rough: number; soft: number }>, bootstrap: number, seed = 1): AucFigure[] {
  const bySpeaker = new Map<string, Clip[]>();
  for (const c of clips) bySpeaker.set(c.speaker, [...(bySpeaker.get(c.speaker) ?? []), c]);
  const speakers = [...bySpeaker.keys()].sort();
  const rnd = seededRandom(seed);
  const samples: Clip[][] = [];
  for (let b = 0; b < bootstrap; b++) samples.push(speakers.flatMap(() => bySpeaker.get(speakers[Math.floor(rnd() * speakers.length)]!)!));
  const figure = (set: Clip[], output: 'rough' | 'soft', pos: string, neg: string): number =>
    auc(
      set.filter((c) => c.emotion === pos).map((c) => scores.get(c)![output]),
      set.filter((c) => c.emotion === neg).map((c) => scores.get(c)![output]),
    );
  return CHECKS.map(([output, positive, negative]) => {
    const boots = finite(samples.map((s) => figure(s, output, positive, negative))).sort((a, b) => a - b);
    const q = (p: number): number => (boots.length ? boots[Math.min(boots.length - 1, Math.floor(p * boots.length))]! : Number.NaN);
    return {
      output,
      positive,
      negative,
      auc: figure(clips, output, positive, negative),
      low: q(0.025),
      high: q(0.975),
      n: [clips.filter((c) => c.emotion === positive).length, clips.filter((c) => c.emotion === negative).length],
    };
  });
}

function finite(xs: number[]): number[] {
  return xs.filter((x) => Number.isFinite(x));
}

function avg(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
