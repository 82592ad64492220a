// Owns what the liveness accuracy scripts share: reading labelled image sets, running the engine on them
// (with an optional per-image cache of the models' logits), leave-one-source-out refits of the fusion,
// and the ISO 30107-3 style metrics (APCER, BPCER, EER) plus AUC and its bootstrap interval over sources.
import { auc } from '../stats';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Config, loadConfig } from '../../shared/config';
import { AppError } from '../../shared/errors';
import { fusedLikelihood, type FusionParams } from '../../workers/liveness/engine/fusion';
import { chooseL2, type FitOptions, fitFusion, type TrainingRow } from './fusion-fit';
import { configuredEngineOptions, LivenessEngine, type LivenessFeatures } from '../../workers/liveness/engine/index';
import type { Rectangle } from '../../shared/queues/contracts';
import type { SpoofModelSpec } from '../../workers/liveness/engine/spoof';
import { decodeImage } from '../../workers/liveness/engine/decode';
import type { Box, RgbImage } from '../../workers/liveness/engine/image';
import { boxBeforeTurn, type QuarterTurns, turnImage } from '../../workers/liveness/engine/orientation';

export interface ManifestRow {
  /** Path relative to the set's folder. */
  file: string;
  /** The set's folder name (e.g. "liveness", "liveness-pool"). */
  dataset: string;
  label: 'live' | 'spoof';
  kind: string;
  type: string;
  /** Source group (owner/repo); rows of one group are correlated and must never straddle a CV split. */
  group: string;
}

/** Minimal RFC 4180 parser (quoted fields, doubled quotes); manifests are small. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [],
    cur = '',
    quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cur);
      cur = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cur);
      cur = '';
      if (row.some((v) => v !== '')) rows.push(row);
      row = [];
    } else cur += c;
  }
  row.push(cur);
  if (row.some((v) => v !== '')) rows.push(row);
  return rows;
}

export function readManifest(dir: string): ManifestRow[] {
  const [header, ...rows] = parseCsv(fs.readFileSync(path.join(dir, 'manifest.csv'), 'utf8'));
  if (!header) throw new Error(`${dir}/manifest.csv is empty`);
  const col = (name: string) => header.indexOf(name);
  if (col('file') < 0 || col('label') < 0) throw new Error('manifest.csv needs at least the columns file,label');
  const dataset = path.basename(path.resolve(dir));
  return rows.map((r) => {
    const get = (name: string) => (col(name) >= 0 ? (r[col(name)] ?? '') : '');
    const label = get('label');
    if (label !== 'live' && label !== 'spoof') throw new Error(`manifest.csv: label "${label}" is neither live nor spoof`);
    const source = get('source');
    // "owner/repo@commit:path" -> "owner/repo"; without a source column each file is its own group.
    const group = source ? source.split('@')[0]! : get('file');
    return { file: get('file'), dataset, label, kind: get('kind') || 'full', type: get('type') || (label === 'live' ? '' : 'unknown'), group };
  });
}

/**
 * A cache key for per-image features: the engine's models and spoof specs and the text of its code (cues,
 * crops, orientation...; not fusion.json, which features do not depend on), so changed code misses the cache.
 */
export function engineCacheKey(engine: LivenessEngine, ...extra: unknown[]): string {
  const dir = path.join(__dirname, '..', '..', 'workers', 'liveness', 'engine');
  const code = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
  return crypto
    .createHash('sha256')
    .update(JSON.stringify([engine.modelInfo, engine.spoofSpecs, code, ...extra]))
    .digest('hex')
    .slice(0, 16);
}

/**
 * The working image the engine scored (the frame decoded as the engine decodes it, turned by the orientation
 * search's quarter turns) and the face box of its answer (faceRectArea, in the frame as sent, rounded to whole
 * pixels of the original) in that image's pixels: what research code needs to cut its own windows or measure the
 * engine's.
 */
export async function scoredFace(bytes: Buffer, format: 'jpeg' | 'png', rect: Rectangle, turns: QuarterTurns): Promise<{ img: RgbImage; face: Box }> {
  const sent = await decodeImage(bytes, format);
  const img = turnImage(sent, turns);
  const inSent: Box = { x: rect.x / sent.scale, y: rect.y / sent.scale, w: rect.width / sent.scale, h: rect.height / sent.scale };
  // The answer's box is in the frame as sent; sent is img turned the other (4 - turns) quarters.
  return { img, face: turns ? boxBeforeTurn(inSent, ((4 - turns) % 4) as QuarterTurns, img) : inSent };
}

export interface Scored {
  row: ManifestRow;
  /** Likelihood the engine answered with its shipped fusion; undefined when it refused the image. */
  likelihood?: number;
  features?: Pick<LivenessFeatures, 'spoofLogits' | 'passLogits' | 'detector'> & Partial<Pick<LivenessFeatures, 'cues' | 'quality'>>;
  /** Error code when the engine refused the image (invalid_image: undecodable or no face). */
  error?: string;
  errorMessage?: string;
}

/**
 * Runs the engine over a set. `cache` (a JSON file) keeps each image's logits keyed by set, file and the
 * engine's model hashes, so re-running a report does not re-run the models; a changed model misses the cache.
 */
export async function scoreDataset(engine: LivenessEngine, dir: string, rows: ManifestRow[], cache?: string): Promise<Scored[]> {
  const key = engineCacheKey(engine);
  const stored: Record<string, Omit<Scored, 'row' | 'likelihood'>> = cache && fs.existsSync(cache)
    ? (JSON.parse(fs.readFileSync(cache, 'utf8')) as Record<string, Omit<Scored, 'row' | 'likelihood'>>)
    : {};
  const out: Scored[] = [];
  for (const row of rows) {
    const id = `${key}|${row.dataset}|${row.file}`;
    const hit = stored[id];
    if (hit) {
      out.push({ row, ...hit, likelihood: hit.features ? fusedLikelihood(engine.fusion, hit.features.spoofLogits, hit.features.cues) : undefined });
      continue;
    }
    const bytes = fs.readFileSync(path.join(dir, row.file));
    const format = /\.png$/i.test(row.file) ? 'png' : 'jpeg';
    try {
      const { result, features } = await engine.analyzeDetailed(bytes, format);
      const f = {
        spoofLogits: features.spoofLogits,
        passLogits: features.passLogits,
        detector: features.detector,
        cues: features.cues,
        quality: features.quality,
      };
      out.push({ row, likelihood: result.isFakeLikelihood, features: f });
      stored[id] = { features: f };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      out.push({ row, error: err.code, errorMessage: err.message });
      stored[id] = { error: err.code, errorMessage: err.message };
    }
  }
  if (cache) fs.writeFileSync(cache, JSON.stringify(stored));
  return out;
}

/**
 * The engines that score each repository: the configured one, or (--fold-models <dir>, written by
 * research/liveness/train/train.py) one engine per fold with that fold's fine-tuned spoof models, each scoring
 * only the repositories its models were trained without.
 */
export async function foldEngines(cfg: Config, foldDir: string | undefined, ...keyExtra: unknown[]) {
  const base = configuredEngineOptions(cfg);
  if (!foldDir) {
    const engine = await LivenessEngine.load(base);
    return { engines: [engine], engineFor: () => engine, key: engineCacheKey(engine, ...keyExtra) };
  }
  const { folds, groupFold, windows } = JSON.parse(fs.readFileSync(path.join(foldDir, 'folds.json'), 'utf8')) as {
    folds: number;
    groupFold: Record<string, number>;
    /** The windows the fold models were trained on (train.py, from extract-windows.ts --window); absent: shifted. */
    windows?: Record<string, SpoofModelSpec['window']>;
  };
  const engines: LivenessEngine[] = [];
  for (let k = 0; k < folds; k++) {
    const dir = path.join(foldDir, `fold${k}`);
    const files = Object.fromEntries(
      fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.onnx'))
        .map((f) => [f.replace(/\.onnx$/, ''), path.join(dir, f)]),
    );
    engines.push(await LivenessEngine.load({ ...base, spoofModelFiles: files, spoofWindows: windows }));
  }
  const engineFor = (row: ManifestRow) => {
    const k = groupFold[row.group];
    if (k === undefined) throw new Error(`${row.group} has no fold in ${foldDir}/folds.json`);
    return engines[k]!;
  };
  return { engines, engineFor, key: engineCacheKey(engines[0]!, ...keyExtra, ...engines.map((e) => e.modelInfo)) };
}

/**
 * The exploration scripts' shared start: `<dir> [<dir>...] [--cache f.json] [--name value for each of valued]`
 * -> the configured engine, its spoof model names, every image of the sets scored (through the cache) and the
 * default threshold.
 */
export async function scoreSetsFromArgs(args: string[], valued: readonly string[] = []) {
  const takesValue = new Set(['--cache', '--fold-models', ...valued]);
  const cache = args.includes('--cache') ? args[args.indexOf('--cache') + 1] : undefined;
  const foldDir = args.includes('--fold-models') ? args[args.indexOf('--fold-models') + 1] : undefined;
  const dirs = args.filter((a, i) => !a.startsWith('--') && !takesValue.has(args[i - 1] ?? ''));
  const config: Config = loadConfig();
  const { engines, engineFor } = await foldEngines(config, foldDir);
  const engine = engines[0]!;
  const scored: Scored[] = [];
  for (const d of dirs) {
    // With fold models, each repository's full frames are scored by the fold trained without it (crops are not).
    const rows = readManifest(d).filter((r) => !foldDir || r.kind === 'full');
    for (const e of engines)
      scored.push(
        ...(await scoreDataset(
          e,
          d,
          rows.filter((r) => engineFor(r) === e),
          cache,
        )),
      );
  }
  return { config, engine, models: engine.spoofSpecs.map((s) => s.name), scored, dirs, cache, threshold: config.FAKE_THRESHOLD };
}

/** A scored full frame as a fitting row that also says its set and attack type (the exploration scripts' rows). */
export const labelledRow = (s: Scored): TrainingRow & { dataset: string; type: string } => ({
  logits: s.features!.spoofLogits,
  cues: s.features!.cues!,
  isSpoof: s.row.label === 'spoof',
  group: s.row.group,
  dataset: s.row.dataset,
  type: s.row.type,
});

export const trainingRows = (scored: Scored[]): TrainingRow[] =>
  scored
    .filter((s) => s.row.kind === 'full' && s.features)
    .map((s) => ({ logits: s.features!.spoofLogits, cues: s.features!.cues, isSpoof: s.row.label === 'spoof', group: s.row.group }));

/**
 * Leave-one-source-group-out: each group in `groups` is scored by a fusion fitted (weights and anchor)
 * on the full frames of all other groups, so no image is scored by a fusion that saw its own repository.
 * `l2: 'inner'` chooses the L2 strength inside each fold (chooseL2 on that fold's training groups), as the
 * fit script does on all groups.
 */
export function crossValidatedLikelihoods(
  scored: Scored[],
  models: string[],
  opts: Omit<FitOptions, 'l2'> & { l2: number | 'inner' },
  groups: Iterable<string> = new Set(scored.map((s) => s.row.group)),
): Map<Scored, number> {
  const out = new Map<Scored, number>();
  for (const g of groups) {
    const rows = trainingRows(scored.filter((s) => s.row.group !== g));
    const l2 = opts.l2 === 'inner' ? chooseL2(rows, models, opts) : opts.l2;
    const f = fitFusion(rows, models, { ...opts, l2 });
    for (const s of scored) if (s.row.group === g && s.features) out.set(s, fusedLikelihood(f, s.features.spoofLogits, s.features.cues));
  }
  return out;
}

export { auc };

/** Spoofs accepted: score at or below the threshold ("spoof" means score > threshold). */
export const apcer = (spoof: number[], t: number) => (spoof.length ? spoof.filter((s) => s <= t).length / spoof.length : NaN);
/** Live faces rejected. */
export const bpcer = (live: number[], t: number) => (live.length ? live.filter((s) => s > t).length / live.length : NaN);

export function eer(spoof: number[], live: number[]): { eer: number; threshold: number } {
  let best = { gap: Infinity, eer: NaN, threshold: NaN };
  for (const t of [...new Set([...spoof, ...live])].sort((a, b) => a - b)) {
    const a = apcer(spoof, t),
      b = bpcer(live, t);
    if (Math.abs(a - b) < best.gap) best = { gap: Math.abs(a - b), eer: (a + b) / 2, threshold: t };
  }
  return { eer: best.eer, threshold: best.threshold };
}

/**
 * 95% interval of the AUC when the source repositories are resampled with replacement (frames of one
 * repository are correlated, so resampling frames would understate the uncertainty).
 */
export function bootstrapAuc(items: Array<{ group: string; spoof: boolean; score: number }>, rounds = 2000, seed = 12): [number, number] {
  const groups = [...new Set(items.map((i) => i.group))];
  const byGroup = new Map(groups.map((g) => [g, items.filter((i) => i.group === g)]));
  let state = seed;
  const rand = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const aucs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const pos: number[] = [],
      neg: number[] = [];
    for (let k = 0; k < groups.length; k++) {
      for (const i of byGroup.get(groups[Math.floor(rand() * groups.length)]!)!) (i.spoof ? pos : neg).push(i.score);
    }
    const a = auc(pos, neg);
    if (!Number.isNaN(a)) aucs.push(a);
  }
  aucs.sort((a, b) => a - b);
  return [aucs[Math.floor(0.025 * aucs.length)]!, aucs[Math.min(aucs.length - 1, Math.floor(0.975 * aucs.length))]!];
}

export const pct = (v: number) => (Number.isNaN(v) ? '  -  ' : `${(100 * v).toFixed(1)}%`);

/**
 * One recipe's nested out-of-source verdict on `rows` (each scored in `scores`): AUC with its interval over
 * repositories, APCER and BPCER at t with frame counts, and APCER per attack type.
 */
export function scoredSummary<R extends { group: string; isSpoof: boolean; type: string }>(rows: readonly R[], scores: Map<R, number>, t: number): string {
  const spoof = rows.filter((r) => r.isSpoof),
    live = rows.filter((r) => !r.isSpoof);
  const accepted = spoof.filter((r) => scores.get(r)! <= t).length,
    rejected = live.filter((r) => scores.get(r)! > t).length;
  const [lo, hi] = bootstrapAuc(rows.map((r) => ({ group: r.group, spoof: r.isSpoof, score: scores.get(r)! })));
  const a = auc(
    spoof.map((r) => scores.get(r)!),
    live.map((r) => scores.get(r)!),
  );
  const type = (ty: string) =>
    pct(
      apcer(
        spoof.filter((r) => r.type === ty).map((r) => scores.get(r)!),
        t,
      ),
    );
  return (
    `AUC ${a.toFixed(3)} (${lo.toFixed(3)}-${hi.toFixed(3)}) APCER ${pct(accepted / spoof.length)} (${accepted}/${spoof.length}) ` +
    `BPCER ${pct(rejected / live.length)} (${rejected}/${live.length}) | print ${type('print')} screen ${type('screen')} mask ${type('mask')}`
  );
}

/**
 * The decision rule of the fusion experiments (sessions 4-7), candidate against shipped on the same nested scores:
 * it qualifies if APCER and BPCER at t are both no worse (frame counts) and one better, or its AUC is better
 * (at 3 decimals) and neither rate is worse. `text` adds the paired bootstrap over repositories of each change.
 */
export function compareToShipped<R extends { group: string; isSpoof: boolean }>(
  rows: readonly R[],
  candidate: Map<R, number>,
  shipped: Map<R, number>,
  t: number,
): { qualifies: boolean; text: string } {
  const accepted = (s: Map<R, number>) => rows.filter((r) => r.isSpoof && s.get(r)! <= t).length;
  const rejected = (s: Map<R, number>) => rows.filter((r) => !r.isSpoof && s.get(r)! > t).length;
  const aucOf = (s: Map<R, number>) =>
    auc(
      rows.filter((r) => r.isSpoof).map((r) => s.get(r)!),
      rows.filter((r) => !r.isSpoof).map((r) => s.get(r)!),
    );
  const dA = accepted(candidate) - accepted(shipped),
    dB = rejected(candidate) - rejected(shipped);
  const dAuc = aucOf(candidate) - aucOf(shipped);
  const aucUp = Number(aucOf(candidate).toFixed(3)) > Number(aucOf(shipped).toFixed(3));
  const qualifies = dA <= 0 && dB <= 0 && (dA < 0 || dB < 0 || aucUp);
  const ci = (m: (sp: number[], lv: number[]) => number, points: boolean) => {
    const [l, h] = pairedDelta(rows, (r) => r.isSpoof, candidate, shipped, m);
    return points ? `${(100 * l).toFixed(1)}..${(100 * h).toFixed(1)} points` : `${l.toFixed(3)}..${h.toFixed(3)}`;
  };
  const signed = (d: number) => `${d >= 0 ? '+' : ''}${d}`;
  return {
    qualifies,
    text:
      `paired bootstrap over repositories (95%): AUC ${dAuc.toFixed(4)} (${ci(auc, false)}), APCER ${signed(dA)} frames (${ci((sp) => apcer(sp, t), true)}), ` +
      `BPCER ${signed(dB)} frames (${ci((_, lv) => bpcer(lv, t), true)}); qualifies: ${qualifies ? 'yes' : 'no'}`,
  };
}

/** "AUC a APCER b BPCER c" of `fusion` on `rows` at threshold t (the exploration scripts' one-line verdict). */
export function fusionSummary(fusion: FusionParams, rows: readonly TrainingRow[], t: number): string {
  const s = (spoof: boolean) => rows.filter((r) => r.isSpoof === spoof).map((r) => fusedLikelihood(fusion, r.logits, r.cues));
  return `AUC ${auc(s(true), s(false)).toFixed(3)} APCER ${pct(apcer(s(true), t))} BPCER ${pct(bpcer(s(false), t))}`;
}

/**
 * The exploration scripts' first check: their own re-implementation of the shipped recipe (S) must give
 * eval-liveness's nested scores (crossValidatedLikelihoods) on the same full frames (`scoreOf(i)`: the script's
 * score of full[i]), or nothing they compare would be comparable. Prints the largest difference; throws past 1e-9.
 */
export function checkShippedReproduced(
  scored: Scored[],
  models: string[],
  opts: { threshold: number; cues: readonly string[] },
  full: readonly Scored[],
  scoreOf: (i: number) => number,
): void {
  const reference = crossValidatedLikelihoods(scored, models, { l2: 'inner', ...opts });
  const maxDiff = Math.max(...full.map((s, i) => Math.abs(reference.get(s)! - scoreOf(i))));
  console.log(`  check: recipe S vs eval-liveness's nested scores, largest difference ${maxDiff.toExponential(2)}`);
  if (!(maxDiff < 1e-9)) throw new Error('recipe S does not reproduce the shipped nested procedure: nothing below would be comparable');
}

/** "m1 w, m2 w, …, cue w, …, bias b": a fitted fusion's weights per logit and per cue standard deviation. */
export function fusionWeightsText(fusion: FusionParams): string {
  return `${Object.entries(fusion.weights)
    .map(([k, v]) => `${k} ${v.toFixed(3)}`)
    .join(', ')}, ${Object.entries(fusion.cues ?? {})
    .map(([k, v]) => `${k} ${v.weight.toFixed(3)}`)
    .join(', ')}, bias ${fusion.bias.toFixed(3)}`;
}

/**
 * The exploration scripts' cross-collection check: each recipe fitted on one set (`fit`, given which rows are its
 * fitting rows) and scored on the other, both ways; a direction whose sets are not both given is skipped.
 */
export function leaveOneSetOut<R extends TrainingRow & { dataset: string }, C extends { name: string }>(
  rows: readonly R[],
  recipes: readonly C[],
  fit: (isTrain: (r: R) => boolean, recipe: C) => FusionParams,
  t: number,
  nameWidth: number,
): void {
  console.log('\nleave-one-set-out (fit on one set, score the other):');
  for (const [train, test] of [
    ['liveness', 'liveness-pool'],
    ['liveness-pool', 'liveness'],
  ] as const) {
    const te = rows.filter((r) => r.dataset === test);
    if (te.length === 0 || !rows.some((r) => r.dataset === train)) continue;
    for (const recipe of recipes) {
      const fusion = fit((r) => r.dataset === train, recipe);
      console.log(`  ${train} -> ${test}: ${recipe.name.padEnd(nameWidth)} ${fusionSummary(fusion, te, t)}`);
    }
  }
}

/** The distinct source repositories of some rows, in first-seen order. */
export const groupsOf = <R extends { group: string }>(rows: readonly R[]): string[] => [...new Set(rows.map((r) => r.group))];

/**
 * Paired bootstrap over source repositories of metric(a) - metric(b), where metric takes the spoof rows' scores and
 * the live rows' scores: the 95% interval (2000 rounds, fixed seed 7, so exploration scripts give the same draws).
 */
export function pairedDelta<R extends { group: string }>(
  rows: readonly R[],
  isSpoof: (r: R) => boolean,
  a: Map<R, number>,
  b: Map<R, number>,
  metric: (spoof: number[], live: number[]) => number = auc,
  rounds = 2000,
): [number, number] {
  const groups = groupsOf(rows);
  const by = new Map(groups.map((g) => [g, rows.filter((r) => r.group === g)]));
  let state = 7;
  const rand = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const ds: number[] = [];
  for (let k = 0; k < rounds; k++) {
    const sample = groups.flatMap(() => by.get(groups[Math.floor(rand() * groups.length)]!)!);
    const sp = sample.filter(isSpoof),
      lv = sample.filter((r) => !isSpoof(r));
    const m = (s: Map<R, number>) =>
      metric(
        sp.map((r) => s.get(r)!),
        lv.map((r) => s.get(r)!),
      );
    const d = m(a) - m(b);
    if (!Number.isNaN(d)) ds.push(d);
  }
  ds.sort((x, y) => x - y);
  return [ds[Math.floor(0.025 * ds.length)]!, ds[Math.floor(0.975 * ds.length)]!];
}
