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
import sharp, { type Sharp } from 'sharp';
import { loadConfig } from '../../shared/config';
import { AppError } from '../../shared/errors';
import type { Rectangle } from '../../shared/queues/contracts';
import { fusedLikelihood, type FusionParams, shippedFusion } from '../../workers/liveness/engine/fusion';
import { chooseL2, fitFusion, type TrainingRow } from './fusion-fit';
import { configuredEngineOptions, LivenessEngine, type LivenessFeatures } from '../../workers/liveness/engine/index';
import { apcer, bpcer, engineCacheKey, groupsOf, type ManifestRow, pairedDelta, pct, readManifest } from './evaluation';

/** The oriented frame's pixels, the bytes as taken and the face the engine found on them. */
export interface Source {
  bytes: Buffer;
  format: 'jpeg' | 'png';
  raw: Buffer;
  width: number;
  height: number;
  face?: Rectangle;
}

export interface Variant {
  name: string;
  /** What the variant stands for (the table's middle column). */
  what: string;
  /** The altered frame, or undefined when it cannot be made with the whole face kept in the frame. */
  make: (src: Source) => Promise<Buffer | undefined>;
}

const fromRaw = (src: Source) => sharp(src.raw, { raw: { width: src.width, height: src.height, channels: 3 } });
const jpeg95 = (s: Sharp) => s.jpeg({ quality: 95 }).toBuffer();

/** Whether the rectangle lies inside the crop (x, y, w, h), all in the same pixels. */
const inside = (r: Rectangle, x: number, y: number, w: number, h: number) => r.x >= x && r.y >= y && r.x + r.width <= x + w && r.y + r.height <= y + h;

/** A crop of 1/f of each side around the frame's centre, shifted as little as needed to keep the whole face. */
function closeUp(f: number): Variant {
  return {
    name: `crop 1/${f}`,
    what: 'close-up: centre crop, no resampling',
    make: async (src) => {
      const w = Math.round(src.width / f),
        h = Math.round(src.height / f);
      let x = Math.round((src.width - w) / 2),
        y = Math.round((src.height - h) / 2);
      const face = src.face;
      if (!face || face.width > w || face.height > h) return undefined;
      x = Math.min(Math.max(x, face.x + face.width - w), face.x);
      y = Math.min(Math.max(y, face.y + face.height - h), face.y);
      return jpeg95(fromRaw(src).extract({ left: x, top: y, width: w, height: h }));
    },
  };
}

/**
 * The largest centred rectangle of the frame's aspect that shows no empty corner once the frame is turned by
 * `deg` about its centre: scale s of each side with s(A cos + B sin) <= A and s(A sin + B cos) <= B.
 */
function rollCut(width: number, height: number, deg: number): { w: number; h: number } {
  const t = (Math.abs(deg) * Math.PI) / 180;
  const [c, s] = [Math.cos(t), Math.sin(t)];
  const k = Math.min(width / (width * c + height * s), height / (width * s + height * c));
  return { w: Math.floor(width * k), h: Math.floor(height * k) };
}

/** The face's corners turned by `deg` (clockwise, about the frame's centre), as a rectangle in the turned canvas. */
function turnedFace(face: Rectangle, src: Source, deg: number, canvas: { w: number; h: number }): Rectangle {
  const t = (deg * Math.PI) / 180;
  const [c, s] = [Math.cos(t), Math.sin(t)];
  const pts = [
    [face.x, face.y],
    [face.x + face.width, face.y],
    [face.x, face.y + face.height],
    [face.x + face.width, face.y + face.height],
  ].map(([px, py]) => {
    const dx = px! - src.width / 2,
      dy = py! - src.height / 2;
    return [canvas.w / 2 + dx * c - dy * s, canvas.h / 2 + dx * s + dy * c];
  });
  const xs = pts.map((p) => p[0]!),
    ys = pts.map((p) => p[1]!);
  return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
}

/** Rolled by `deg` and cut so no empty corner shows; `control`: the same cut of the unrotated frame. */
function roll(deg: number, control = false): Variant {
  return {
    name: control ? `cut for ${Math.abs(deg)}°, no roll` : `roll ${deg > 0 ? '+' : ''}${deg}°`,
    what: control ? "control: the roll's cut without rotation" : 'roll, cut so no empty corner shows',
    make: async (src) => {
      const cut = rollCut(src.width, src.height, deg);
      const a = control ? 0 : deg;
      const t = (Math.abs(a) * Math.PI) / 180;
      const canvas = {
        w: Math.round(src.width * Math.cos(t) + src.height * Math.sin(t)),
        h: Math.round(src.width * Math.sin(t) + src.height * Math.cos(t)),
      };
      const left = Math.floor((canvas.w - cut.w) / 2),
        top = Math.floor((canvas.h - cut.h) / 2);
      if (!src.face || !inside(turnedFace(src.face, src, a, canvas), left, top, cut.w, cut.h)) return undefined;
      const turned =
        a === 0
          ? { data: src.raw, info: { width: src.width, height: src.height } }
          : await fromRaw(src).rotate(a, { background: '#000000' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      // The canvas computed above is libvips' own (rounded) size; the cut is placed on the canvas it returned.
      const { width, height } = turned.info;
      return jpeg95(sharp(turned.data, { raw: { width, height, channels: 3 } }).extract({ left, top, width: cut.w, height: cut.h }));
    },
  };
}

/** Applies f to every 8-bit channel value (c = 0, 1, 2 for R, G, B), JPEG q95 (as explore-augment.ts). */
function perChannel(name: string, what: string, f: (v: number, c: number) => number): Variant {
  return {
    name,
    what,
    make: async (src) => {
      const out = Buffer.alloc(src.raw.length);
      for (let i = 0; i < out.length; i++) out[i] = Math.max(0, Math.min(255, Math.round(f(src.raw[i]!, i % 3))));
      return jpeg95(sharp(out, { raw: { width: src.width, height: src.height, channels: 3 } }));
    },
  };
}

export const AS_TAKEN = 'as taken';
export const VARIANTS: Variant[] = [
  { name: AS_TAKEN, what: 'the frame as stored', make: async (src) => src.bytes },
  ...[1.25, 1.5, 2].map(closeUp),
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
];

/** What is cached per frame and variant: the features the fusion needs, or why there is no score. */
export interface Entry {
  features?: Pick<LivenessFeatures, 'spoofLogits' | 'cues' | 'orientation'>;
  face?: Rectangle;
  /** invalid_image (no face found: the API answers 400) or "not made" (the variant would cut the face). */
  error?: string;
  /** Experiments' extra spoof logits by candidate name (explore-framing.ts). */
  alt?: Record<string, Record<string, number>>;
}

/** Bump when the variants' recipes change. */
export const VARIANTS_VERSION = 'variants-1';

/** The engine's answer as a cache entry (a refusal as its error code). */
export const engineScore =
  (engine: LivenessEngine) =>
  async (bytes: Buffer, format: 'jpeg' | 'png'): Promise<Entry> => {
    try {
      const { result, features } = await engine.analyzeDetailed(bytes, format);
      return { features: { spoofLogits: features.spoofLogits, cues: features.cues, orientation: features.orientation }, face: result.faceRectArea };
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
  score: (bytes: Buffer, format: 'jpeg' | 'png') => Promise<Entry>,
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
            const asTaken = cache[`${key}|${row.dataset}|${row.file}|${AS_TAKEN}`] ?? (await score(bytes, format));
            src = { bytes, format, raw: data, width: info.width, height: info.height, face: asTaken.face };
          }
          const made = await v.make(src);
          entry = made ? await score(made, v.name === AS_TAKEN ? src.format : 'jpeg') : { error: 'not made' };
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
): { fusion: FusionParams; features: (s: ScoredVariant) => { logits: Record<string, number>; cues: Record<string, number> } } {
  const of = extra ? extra.forFold(fitting) : (s: ScoredVariant) => ({ logits: logitsOf(s), terms: {} });
  const features = (s: ScoredVariant) => {
    const { logits, terms } = of(s);
    return { logits, cues: { ...s.entry.features!.cues, ...terms } };
  };
  const rows = fitting.map((s): TrainingRow => ({ ...features(s), isSpoof: s.row.label === 'spoof', group: s.row.group }));
  const opts = { threshold: t, cues: [...Object.keys(shippedFusion.cues ?? {}), ...(extra?.names ?? [])] };
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
 * other repositories (unaltered, unless `fittedOn` names more variants: explore-closeups.ts fits on close-up
 * copies too), by fitOnVariants. `logitsOf` picks the spoof logits (the engine's, or an experiment candidate's);
 * `extra` adds terms. A frame the engine refused (400 invalid_image) is not accepted: score 1. Frames not made
 * are left out.
 */
export function outOfSourceScores(
  scored: ScoredVariant[],
  models: string[],
  t: number,
  logitsOf: (s: ScoredVariant) => Record<string, number>,
  fittedOn: readonly string[] = [AS_TAKEN],
  extra?: ExtraTerms,
): Map<ScoredVariant, number> {
  const fitting = scored.filter((s) => fittedOn.includes(s.variant) && s.entry.features);
  const score = new Map<ScoredVariant, number>();
  for (const g of groupsOf(scored.map((s) => s.row))) {
    const { fusion, features } = fitOnVariants(
      fitting.filter((s) => s.row.group !== g),
      models,
      t,
      logitsOf,
      extra,
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

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const valued = new Set(['--cache', '--only']);
  const dirs = args.filter((a, i) => !a.startsWith('--') && !valued.has(args[i - 1] ?? ''));
  if (dirs.length === 0) {
    process.stderr.write('usage: npm run eval:robustness -- <dir with manifest.csv> [<dir>...] [--cache var/eval-robustness.json] [--only name,name]\n');
    process.exit(2);
  }
  const only = option(args, '--only')?.split(',');
  const variants = only ? VARIANTS.filter((v) => v.name === AS_TAKEN || only.includes(v.name)) : VARIANTS;
  const cfg = loadConfig();
  const t = cfg.FAKE_THRESHOLD;
  const engine = await LivenessEngine.load(configuredEngineOptions(cfg));
  const models = engine.spoofSpecs.map((s) => s.name);
  const t0 = Date.now();
  const cacheFile = option(args, '--cache') ?? 'var/eval-robustness.json';
  const { scored, fresh } = await scoreAll(dirs, variants, cacheFile, engineCacheKey(engine, VARIANTS_VERSION), engineScore(engine));
  console.log(
    `robustness of the liveness verdict on ${dirs.map((d) => path.resolve(d)).join(', ')}: ${scored.length} frame variants (${fresh} scored now, the rest from the cache) in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );

  const score = outOfSourceScores(scored, models, t, (s) => s.entry.features!.spoofLogits);

  const key = (s: (typeof scored)[number]) => `${s.row.dataset}|${s.row.file}`;
  const base = new Map(scored.filter((s) => s.variant === AS_TAKEN && score.has(s)).map((s) => [key(s), score.get(s)!]));
  console.log(
    `\nout-of-source verdicts at FAKE_THRESHOLD=${t} (full frames; 95% bootstrap intervals over repositories; Δ = change against the same frames as taken, paired bootstrap)`,
  );
  console.log(
    '| variant | what | live n | BPCER (95% CI) | Δ BPCER, points (95% CI) | spoof n | APCER (95% CI) | Δ APCER, points (95% CI) | APCER print / screen / mask | not made / no face | turned scored upright |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const v of variants) {
    const all = scored.filter((s) => s.variant === v.name);
    const made = all.filter((s) => score.has(s));
    const live = made.filter((s) => s.row.label === 'live'),
      spoof = made.filter((s) => s.row.label === 'spoof');
    const [bl, bh] = rateInterval(live.map((s) => ({ group: s.row.group, hit: score.get(s)! > t })));
    const [al, ah] = rateInterval(spoof.map((s) => ({ group: s.row.group, hit: score.get(s)! <= t })));
    // Paired change against the same frames as taken.
    const paired = made
      .filter((s) => base.has(key(s)))
      .map((s) => ({ group: s.row.group, spoof: s.row.label === 'spoof', v: score.get(s)!, b: base.get(key(s))! }));
    const vs = new Map(paired.map((p) => [p, p.v])),
      bs = new Map(paired.map((p) => [p, p.b]));
    const delta = (m: (sp: number[], lv: number[]) => number) => {
      const d =
        m(
          paired.filter((p) => p.spoof).map((p) => p.v),
          paired.filter((p) => !p.spoof).map((p) => p.v),
        ) -
        m(
          paired.filter((p) => p.spoof).map((p) => p.b),
          paired.filter((p) => !p.spoof).map((p) => p.b),
        );
      if (v.name === AS_TAKEN) return '-';
      const [lo, hi] = pairedDelta(paired, (p) => p.spoof, vs, bs, m);
      return `${d >= 0 ? '+' : ''}${p1(d)} (${p1(lo)}..${p1(hi)})`;
    };
    const type = (ty: string) => {
      const sp = spoof.filter((s) => s.row.type === ty);
      return `${sp.filter((s) => score.get(s)! <= t).length}/${sp.length}`;
    };
    const notMade = all.filter((s) => s.entry.error === 'not made').length;
    const noFace = all.filter((s) => s.entry.error && s.entry.error !== 'not made').length;
    const turns = v.name.startsWith('turned') ? Number(v.name.replace(/\D/g, '')) / 90 : 0;
    const upright = turns
      ? `${made.filter((s) => s.entry.features?.orientation.turns === (4 - turns) % 4).length}/${made.length}`
      : `${made.filter((s) => s.entry.features?.orientation.searched).length} searched`;
    const rejected = live.filter((s) => score.get(s)! > t).length,
      accepted = spoof.filter((s) => score.get(s)! <= t).length;
    console.log(
      `| ${v.name} | ${v.what} | ${live.length} | ${pct(rejected / live.length)} (${p1(bl)}-${p1(bh)}) | ${delta((_, lv) => bpcer(lv, t))} | ${spoof.length} | ${pct(accepted / spoof.length)} (${p1(al)}-${p1(ah)}) | ${delta((sp) => apcer(sp, t))} | ${type('print')} / ${type('screen')} / ${type('mask')} | ${notMade} / ${noFace} | ${upright} |`,
    );
  }
}

// Run as a script (explore-framing.ts imports the variants and the scoring).
if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
