// Robustness report of the liveness verdict (issue 28 item 1):
// `npm run eval:robustness -- <dir> [<dir>...] [--cache var/eval-robustness.json] [--only name,name]`.
// Every labelled full frame of the sets is scored as taken and under each variant of how a photo is taken
// (close-ups, roll, turned without EXIF, camera pipelines); each repository's frames, in every variant, are
// scored by a fusion fitted (weights, L2, cue standardisation, anchor) on the unaltered full frames of the
// OTHER repositories, so every figure is out of source. Prints, per variant, BPCER and APCER at FAKE_THRESHOLD
// with 95% bootstrap intervals over repositories, the change against the same frames as taken (paired bootstrap),
// APCER per attack type and the frames the variant could not be made for or the engine refused.
// Per-frame features are cached (keyed by the engine's models and version), so a rerun only refits.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../../shared/config';
import { AppError } from '../../shared/errors';
import type { Rectangle } from '../../shared/queues/contracts';
import { fusedLikelihood, type FusionParams, shippedFusion } from '../../workers/liveness/engine/fusion';
import { chooseL2, fitFusion, type TrainingRow } from './fusion-fit';
import { configuredEngineOptions, LivenessEngine, type LivenessFeatures } from '../../workers/liveness/engine/index';
import { auc, bootstrapAuc, foldEngines, groupsOf, type ManifestRow, pairedDelta, pct, readManifest } from './evaluation';
import { closeUp, defocus, dimNoise, fromRaw, jpeg95, jpegQuality, perChannel, roll, type Source, type Variant } from './capture-variants';

export type { Source, Variant };

export const AS_TAKEN = 'as taken';
export const VARIANTS: Variant[] = [
  { name: AS_TAKEN, what: 'the frame as stored', make: async (src) => src.bytes },
  ...[1.25, 1.5, 1.75, 2].map(closeUp),
  ...[10, 20, 30].flatMap((d) => [roll(d, true), roll(d), roll(-d)]),
  ...[90, 180, 270].map((d) => ({
    name: `turned ${d}°`,
    what: 'turned, no EXIF tag',
    make: (src: Source) => jpeg95(fromRaw(src).rotate(d)),
  })),
  { name: 'JPEG q50', what: 'camera pipeline', make: (src) => fromRaw(src).jpeg({ quality: 50 }).toBuffer() },
  {
    name: 'long side 480',
    what: 'camera pipeline',
    make: (src) => jpeg95(fromRaw(src).resize(src.width >= src.height ? { width: 480 } : { height: 480 })),
  },
  perChannel('warm WB', 'R x 1.08, B x 0.92', (v, c) => (c === 0 ? v * 1.08 : c === 2 ? v * 0.92 : v)),
  perChannel('cool WB', 'R x 0.92, B x 1.08', (v, c) => (c === 0 ? v * 0.92 : c === 2 ? v * 1.08 : v)),
  perChannel('gamma 1.3', 'darker: 255 (v/255)^1.3', (v) => 255 * (v / 255) ** 1.3),
  perChannel('gamma 1/1.3', 'brighter: 255 (v/255)^(1/1.3)', (v) => 255 * (v / 255) ** (1 / 1.3)),
  defocus(2, 'defocus'),
  dimNoise(0.3, 6, 7, 'dim light + noise'),
  jpegQuality(15, 'JPEG q15'),
];

/** What is cached per frame and variant: the features the fusion needs, or why there is no score. */
export interface Entry {
  features?: Pick<LivenessFeatures, 'spoofLogits' | 'cues' | 'orientation'>;
  face?: Rectangle;
  /** invalid_image (no face found: the API answers 400) or "not made" (the variant would cut the face). */
  error?: string;
  /** The quality gate's reasons when it refused the face (isValidFace false); absent when it passed. */
  gate?: string[];
  /** Experiments' extra spoof logits by candidate name (explore-framing.ts). */
  alt?: Record<string, Record<string, number>>;
}

/** Bump when the variants' recipes change. */
export const VARIANTS_VERSION = 'variants-2';

/** The engine's answer as a cache entry (a refusal as its error code). */
export const engineScore =
  (engine: LivenessEngine) =>
  async (bytes: Buffer, format: 'jpeg' | 'png'): Promise<Entry> => {
    try {
      const { result, features } = await engine.analyzeDetailed(bytes, format);
      return {
        features: { spoofLogits: features.spoofLogits, cues: features.cues, orientation: features.orientation },
        face: result.faceRectArea,
        ...(!result.isValidFace && { gate: result.reasons }),
      };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { error: err.code };
    }
  };

export type ScoredVariant = { row: ManifestRow; variant: string; entry: Entry };

/** Every full frame of the sets under every variant, through `score` and the cache (saved every 200 new entries). */
export async function scoreAll(
  dirs: string[],
  variants: Variant[],
  cacheFile: string,
  key: string,
  score: (bytes: Buffer, format: 'jpeg' | 'png', row: ManifestRow) => Promise<Entry>,
): Promise<{ scored: ScoredVariant[]; fresh: number }> {
  const cache: Record<string, Entry> = fs.existsSync(cacheFile) ? (JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as Record<string, Entry>) : {};
  const out: ScoredVariant[] = [];
  let fresh = 0;
  const save = () => {
    fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
    fs.writeFileSync(cacheFile, JSON.stringify(cache));
  };
  for (const dir of dirs) {
    for (const row of readManifest(dir).filter((r) => r.kind === 'full')) {
      let src: Source | undefined;
      for (const v of variants) {
        const id = `${key}|${row.dataset}|${row.file}|${v.name}`;
        let entry = cache[id];
        if (!entry) {
          if (!src) {
            const bytes = fs.readFileSync(path.join(dir, row.file));
            const { data, info } = await sharp(bytes).rotate().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
            const format = /\.png$/i.test(row.file) ? 'png' : 'jpeg';
            const asTaken = cache[`${key}|${row.dataset}|${row.file}|${AS_TAKEN}`] ?? (await score(bytes, format, row));
            src = { id: `${row.dataset}|${row.file}`, bytes, format, raw: data, width: info.width, height: info.height, face: asTaken.face };
          }
          const made = await v.make(src);
          entry = made ? await score(made, v.name === AS_TAKEN ? src.format : 'jpeg', row) : { error: 'not made' };
          cache[id] = entry;
          if (++fresh % 200 === 0) save();
        }
        out.push({ row, variant: v.name, entry });
      }
    }
  }
  save();
  return { scored: out, fresh };
}

const option = (args: string[], name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);

/** 95% interval of a rate over bootstrap resamples of the repositories (2000 rounds, fixed seed). */
export function rateInterval(items: Array<{ group: string; hit: boolean }>, rounds = 2000): [number, number] {
  const groups = groupsOf(items);
  const by = new Map(groups.map((g) => [g, items.filter((i) => i.group === g)]));
  let state = 11;
  const rand = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let hits = 0,
      n = 0;
    for (let k = 0; k < groups.length; k++) {
      for (const i of by.get(groups[Math.floor(rand() * groups.length)]!)!) {
        n++;
        if (i.hit) hits++;
      }
    }
    if (n > 0) rates.push(hits / n);
  }
  rates.sort((a, b) => a - b);
  return [rates[Math.floor(0.025 * rates.length)]!, rates[Math.min(rates.length - 1, Math.floor(0.975 * rates.length))]!];
}

/**
 * A fusion's inputs beyond the shipped ones (explore-window-fit.ts): extra sign-free terms, fitted and standardised
 * like the cues, and the logits and terms of a frame variant given the rows a fold is fitted on (so a term may use
 * a statistic of the fitting rows, never of the held-out ones).
 */
export interface ExtraTerms {
  names: readonly string[];
  forFold: (fitting: ScoredVariant[]) => (s: ScoredVariant) => { logits: Record<string, number>; terms: Record<string, number> };
}

/**
 * The fusion fitted the way the shipped one was (same cues, same L2 rule, bias anchored at t) on `fitting` (frame
 * variants with features), with `logitsOf`'s logits and `extra`'s terms; returns it with the features it scores.
 */
export function fitOnVariants(
  fitting: ScoredVariant[],
  models: string[],
  t: number,
  logitsOf: (s: ScoredVariant) => Record<string, number>,
  extra?: ExtraTerms,
  /** The face cues the fusion reads (default: the shipped fusion's). */
  cues: readonly string[] = Object.keys(shippedFusion.cues ?? {}),
): { fusion: FusionParams; features: (s: ScoredVariant) => { logits: Record<string, number>; cues: Record<string, number> } } {
  const of = extra ? extra.forFold(fitting) : (s: ScoredVariant) => ({ logits: logitsOf(s), terms: {} });
  const features = (s: ScoredVariant) => {
    const { logits, terms } = of(s);
    return { logits, cues: { ...s.entry.features!.cues, ...terms } };
  };
  const rows = fitting.map((s): TrainingRow => ({ ...features(s), isSpoof: s.row.label === 'spoof', group: s.row.group }));
  const opts = { threshold: t, cues: [...cues, ...(extra?.names ?? [])] };
  const inner = shippedFusion.l2Rule?.startsWith('chosen') ?? false;
  return { fusion: fitFusion(rows, models, { ...opts, l2: inner ? chooseL2(rows, models, opts) : shippedFusion.l2 }), features };
}

/** A candidate's fusion fitted on every repository's `fittedOn` variants, as one line of its terms' weights. */
export function fittedWeightsLine(
  name: string,
  scored: ScoredVariant[],
  fittedOn: readonly string[],
  models: string[],
  t: number,
  logitsOf: (s: ScoredVariant) => Record<string, number>,
  extra?: ExtraTerms,
): string {
  const { fusion } = fitOnVariants(
    scored.filter((s) => fittedOn.includes(s.variant) && s.entry.features),
    models,
    t,
    logitsOf,
    extra,
  );
  const terms = [...Object.entries(fusion.weights), ...Object.entries(fusion.cues ?? {}).map(([k, v]) => [k, v.weight] as const)];
  return `  ${name}: ${terms.map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}, bias ${fusion.bias.toFixed(3)}`;
}

/**
 * Out of source: each repository's frames, in every variant, scored by a fusion fitted on the full frames of the
 * other repositories (unaltered, unless `fittedOn` names more variants or picks rows: explore-closeups.ts fits on
 * close-up copies too, explore-fusion-captures.ts on random captures the gate passes), by fitOnVariants. `logitsOf` picks the spoof logits (the engine's, or an experiment candidate's);
 * `extra` adds terms. A frame the engine refused (400 invalid_image) is not accepted: score 1. Frames not made
 * are left out.
 */
export function outOfSourceScores(
  scored: ScoredVariant[],
  models: string[],
  t: number,
  logitsOf: (s: ScoredVariant) => Record<string, number>,
  fittedOn: readonly string[] | ((s: ScoredVariant) => boolean) = [AS_TAKEN],
  extra?: ExtraTerms,
  cues?: readonly string[],
): Map<ScoredVariant, number> {
  const fits = typeof fittedOn === 'function' ? fittedOn : (s: ScoredVariant) => fittedOn.includes(s.variant);
  const fitting = scored.filter((s) => fits(s) && s.entry.features);
  const score = new Map<ScoredVariant, number>();
  for (const g of groupsOf(scored.map((s) => s.row))) {
    const { fusion, features } = fitOnVariants(
      fitting.filter((s) => s.row.group !== g),
      models,
      t,
      logitsOf,
      extra,
      cues,
    );
    for (const s of scored) {
      if (s.row.group !== g || s.entry.error === 'not made') continue;
      if (!s.entry.features) {
        score.set(s, 1);
        continue;
      }
      const f = features(s);
      score.set(s, fusedLikelihood(fusion, f.logits, f.cues));
    }
  }
  return score;
}

/**
 * The framing experiments' start: `<dir> [<dir>...] [--cache f.json]` -> the sets, the feature cache (default
 * `defaultCache`), the configured engine, its spoof model names and the threshold.
 */
export async function experimentSetup(args: string[], defaultCache: string) {
  const dirs = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--cache');
  const cacheFile = args.includes('--cache') ? args[args.indexOf('--cache') + 1]! : defaultCache;
  const cfg = loadConfig();
  const engine = await LivenessEngine.load(configuredEngineOptions(cfg));
  return { dirs, cacheFile, cfg, t: cfg.FAKE_THRESHOLD, engine, models: engine.spoofSpecs.map((s) => s.name) };
}

const p1 = (v: number) => (100 * v).toFixed(1);

const meanOf = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/** "n (reason a, reason b)" for the gated frames of a group. */
function gatedText(gated: ScoredVariant[]): string {
  const counts = new Map<string, number>();
  for (const s of gated) for (const r of s.entry.gate ?? []) counts.set(r, (counts.get(r) ?? 0) + 1);
  const reasons = [...counts].sort((a, b) => b[1] - a[1]).map(([r, n]) => `${r} ${n}`);
  return `${gated.length}${reasons.length ? ` (${reasons.join(', ')})` : ''}`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const valued = new Set(['--cache', '--only', '--fold-models', '--without']);
  const dirs = args.filter((a, i) => !a.startsWith('--') && !valued.has(args[i - 1] ?? ''));
  if (dirs.length === 0) {
    process.stderr.write(
      'usage: npm run eval:robustness -- <dir with manifest.csv> [<dir>...] [--cache var/eval-robustness.json] [--only name,name] [--fold-models <train run dir>] [--no-cues] [--without model,model]\n',
    );
    process.exit(2);
  }
  const only = option(args, '--only')?.split(',');
  const variants = only ? VARIANTS.filter((v) => v.name === AS_TAKEN || only.includes(v.name)) : VARIANTS;
  const cfg = loadConfig();
  const t = cfg.FAKE_THRESHOLD;
  const foldDir = option(args, '--fold-models');
  const { engines, engineFor, key: cacheKey } = await foldEngines(cfg, foldDir, VARIANTS_VERSION);
  // --without m1,m2: the fusion is fitted without those models' logits (what dropping a model would give).
  const without = option(args, '--without')?.split(',') ?? [];
  const models = engines[0]!.spoofSpecs.map((s) => s.name).filter((m) => !without.includes(m));
  const scorers = new Map(engines.map((e) => [e, engineScore(e)]));
  const t0 = Date.now();
  const cacheFile = option(args, '--cache') ?? 'var/eval-robustness.json';
  const { scored, fresh } = await scoreAll(dirs, variants, cacheFile, cacheKey, (bytes, format, row) => scorers.get(engineFor(row))!(bytes, format));
  console.log(
    `robustness of the liveness verdict on ${dirs.map((d) => path.resolve(d)).join(', ')}${foldDir ? ` with the fold models of ${foldDir}` : ''}: ${scored.length} frame variants (${fresh} scored now, the rest from the cache) in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );

  const cues = args.includes('--no-cues') ? [] : undefined;
  const score = outOfSourceScores(scored, models, t, (s) => s.entry.features!.spoofLogits, [AS_TAKEN], undefined, cues);
  const { sum, largest } = shiftsOf(robustnessTable(scored, variants, score, t));
  console.log(`over the ${variants.length - 1} variants: sum of positive changes ${sum.toFixed(1)} points, largest ${largest.toFixed(1)}`);
}

/** A table's sum of positive changes (ΔBPCER and ΔAPCER over its variants) and its largest change, in points. */
export function shiftsOf(s: RobustnessSummary): { sum: number; largest: number } {
  const all = s.deltas.flatMap((d) => [d.bpcer, d.apcer]).filter((v) => Number.isFinite(v));
  return { sum: all.filter((v) => v > 0).reduce((a, b) => a + b, 0), largest: Math.max(...all) };
}

/** What a candidate's table comes to: as taken, and each variant's change against it (points; NaN: none judged). */
export interface RobustnessSummary {
  asTaken: { auc: number; bpcer: number; apcer: number };
  deltas: Array<{ variant: string; bpcer: number; apcer: number }>;
}

/**
 * Prints the robustness table of `score` (out-of-source likelihoods) over `variants`, and returns its summary.
 * What an integrator sees: a face the gate refused (isValidFace false) is not judged; an attack it refused is not
 * accepted. BPCER is over the live faces that pass the gate; APCER over every attack made.
 */
export function robustnessTable(scored: ScoredVariant[], variants: Variant[], score: Map<ScoredVariant, number>, t: number): RobustnessSummary {
  const passes = (s: ScoredVariant) => s.entry.features !== undefined && s.entry.gate === undefined;
  const judgedFake = (s: ScoredVariant) => score.get(s)! > t;
  const accepted = (s: ScoredVariant) => passes(s) && !judgedFake(s);

  const key = (s: ScoredVariant) => `${s.row.dataset}|${s.row.file}`;
  const byVariant = (name: string) => scored.filter((s) => s.variant === name && score.has(s));
  const baseOf = new Map(byVariant(AS_TAKEN).map((s) => [key(s), s]));
  const deltas: RobustnessSummary['deltas'] = [];
  let asTakenRates = { bpcer: NaN, apcer: NaN };
  console.log(
    `\nout-of-source verdicts at FAKE_THRESHOLD=${t} (full frames; 95% bootstrap intervals over repositories; Δ = change against the same frames as taken, paired bootstrap over repositories)`,
  );
  console.log(
    '| variant | what | live n | live gated (reasons) | BPCER of live passing the gate (95% CI) | Δ BPCER, points (95% CI) | attacks n | attacks gated | APCER (95% CI) | Δ APCER, points (95% CI) | APCER print / screen / mask | not made / no face |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const v of variants) {
    const all = scored.filter((s) => s.variant === v.name);
    const made = byVariant(v.name);
    const live = made.filter((s) => s.row.label === 'live'),
      spoof = made.filter((s) => s.row.label === 'spoof');
    const livePass = live.filter(passes);
    const bpcer = livePass.filter(judgedFake).length / livePass.length,
      apcer = spoof.filter(accepted).length / spoof.length;
    if (v.name === AS_TAKEN) asTakenRates = { bpcer, apcer };
    const [bl, bh] = rateInterval(livePass.map((s) => ({ group: s.row.group, hit: judgedFake(s) })));
    const [al, ah] = rateInterval(spoof.map((s) => ({ group: s.row.group, hit: accepted(s) })));
    // Paired change: the same frames' outcome as taken (BPCER over frames passing the gate in both).
    const delta = (items: ScoredVariant[], hit: (s: ScoredVariant) => boolean) => {
      const pairs = items.map((s) => ({ s, b: baseOf.get(key(s)) })).filter((p): p is { s: ScoredVariant; b: ScoredVariant } => p.b !== undefined);
      const rows = pairs.map((p) => ({ group: p.s.row.group, spoof: p.s.row.label === 'spoof' }));
      const vs = new Map(rows.map((r, i) => [r, hit(pairs[i]!.s) ? 1 : 0])),
        bs = new Map(rows.map((r, i) => [r, hit(pairs[i]!.b) ? 1 : 0]));
      const d = meanOf([...vs.values()]) - meanOf([...bs.values()]);
      const [lo, hi] = pairedDelta(
        rows,
        (r) => r.spoof,
        vs,
        bs,
        (sp, lv) => meanOf([...sp, ...lv]),
      );
      return { d, text: `${d >= 0 ? '+' : ''}${p1(d)} (${p1(lo)}..${p1(hi)})` };
    };
    const livePaired = livePass.filter((s) => baseOf.get(key(s)) && passes(baseOf.get(key(s))!));
    const dB = v.name === AS_TAKEN ? undefined : delta(livePaired, judgedFake);
    const dA = v.name === AS_TAKEN ? undefined : delta(spoof, accepted);
    if (dB && dA) deltas.push({ variant: v.name, bpcer: 100 * dB.d, apcer: 100 * dA.d });
    const type = (ty: string) => {
      const sp = spoof.filter((s) => s.row.type === ty);
      return `${sp.filter(accepted).length}/${sp.length}`;
    };
    const notMade = all.filter((s) => s.entry.error === 'not made').length;
    const noFace = all.filter((s) => s.entry.error && s.entry.error !== 'not made').length;
    console.log(
      `| ${v.name} | ${v.what} | ${live.length} | ${gatedText(live.filter((s) => !passes(s)))} | ${pct(bpcer)} (${p1(bl)}-${p1(bh)}) | ${dB?.text ?? '-'} | ${spoof.length} | ${spoof.filter((s) => !passes(s)).length} | ${pct(apcer)} (${p1(al)}-${p1(ah)}) | ${dA?.text ?? '-'} | ${type('print')} / ${type('screen')} / ${type('mask')} | ${notMade} / ${noFace} |`,
    );
  }
  const base = byVariant(AS_TAKEN);
  const liveS = base.filter((s) => s.row.label === 'live').map((s) => score.get(s)!);
  const spoofS = base.filter((s) => s.row.label === 'spoof').map((s) => score.get(s)!);
  const [lo, hi] = bootstrapAuc(base.map((s) => ({ group: s.row.group, spoof: s.row.label === 'spoof', score: score.get(s)! })));
  const area = auc(spoofS, liveS);
  console.log(`\nas taken, every frame with a face (gate ignored): AUC ${area.toFixed(3)} (95% CI ${lo.toFixed(3)}-${hi.toFixed(3)})`);
  return { asTaken: { auc: area, ...asTakenRates }, deltas };
}

// Run as a script (explore-framing.ts imports the variants and the scoring).
if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
