// Owns the emotion mapping model: the neutral-speech reference (mean and spread of each acoustic feature),
// the piecewise-linear logistic weights that turn normalised features into rough and soft, and soft's
// one-sided harshness term, written as a small ONNX graph (IsNaN/Where → Sub → MatMul by the correction matrix
// (v4: H1–H2 less its F0 share) → Div → Clip → Relu split into above/below the reference → two MatMuls → Add;
// harshness = Relu(z · h + b) subtracted from soft → Sigmoid) to models/dist/emotion-mapping.v4.onnx
// (EMOTION_MAPPING_FILE).
// The protobuf is hand-encoded (a dozen fields of onnx.proto3), so building it needs no dependency.
// The feature names (models/emotion/feature-names.ts) are stored in the model's metadata and checked by name
// when the engine loads it. `npm run fit:emotion` writes a fitted model through the same builder.
import fs from 'node:fs';
import path from 'node:path';
import { defaultModelsDir } from '../../shared/paths';

import { FEATURE_NAMES, FEATURES_METADATA_KEY, type FeatureName } from './feature-names';

export const EMOTION_MAPPING_VERSION = '4';
/** The file name carries the version: a mapping is built for one feature list, so engines of different
 *  versions can share one models directory and none loads another's file. */
export const EMOTION_MAPPING_FILE = `emotion-mapping.v${EMOTION_MAPPING_VERSION}.onnx`;

/** Weights of one feature for one output: `above` multiplies the z-score where it is above the reference,
 *  `below` where it is below. Different slopes on each side let a cue count in one direction only (soft falls
 *  with more high-frequency energy than neutral speech has, but does not rise with less: sadness has less). */
export interface SideWeights {
  above: number;
  below: number;
}

/** Everything the mapping model holds: the reference (filled in for a missing feature, and the centre and
 *  unit of each z-score), the logistic weights and biases, and where they came from. */
export interface MappingParameters {
  reference: Record<FeatureName, { mean: number; sd: number }>;
  /** dB of H1–H2 per semitone of F0 away from the reference F0, taken off H1–H2 before it is scored:
   *  uncorrected H1–H2 rises with F0 (Iseli, Shue & Alwan 2007), which would read a high voice as lax. */
  h1h2PerSemitone: number;
  weights: Record<FeatureName, { rough: SideWeights; soft: SideWeights }>;
  bias: { rough: number; soft: number };
  /** soft −= soft · max(0, bias + Σ weights · z): a harsh (pressed, strained, irregular) voice loses soft;
   *  a voice with the opposite cues (breathy, lax) gets no bonus from it (the Relu). */
  harshness: { weights: Record<FeatureName, number>; bias: number; soft: number };
  /** One line saying where the numbers come from (stored in the model's metadata as `source`). */
  source: string;
}

/**
 * Neutral connected speech as this engine measures it at 8 kHz, per 5 s window.
 * mean: the reference value; a missing feature (NaN, e.g. F0 of whispered speech) is replaced by it.
 * sd: the spread that counts as one unit of deviation.
 * Sources: jitter and shimmer in Praat's "local" terms, which this extractor matches within a few tenths of
 * a percent (docs/emotion-engine.md): running speech has jitter ≈ 1–2 % and shimmer ≈ 10–15 %; HNR of running
 * speech ≈ 10 dB; F0 level halfway between typical male and female voices (≈ 150 Hz = 30 st re 27.5 Hz);
 * F0 range (20th–80th percentile) of neutral reading ≈ 3–4 st, within-run slopes near 0 (declination is
 * slow); articulation rate of read speech ≈ 4–5 syllables per second (de Jong & Wempe 2009 count ≈ 3.5–4.5
 * nuclei/s); F1/F2 region centroids of a mixed male/female vowel space (Hillenbrand et al. 1995, weighted to
 * the regions' limits). CPPS, alpha ratio, Hammarberg index, spectral slope and flux, voiced fraction and
 * level range depend on the extractor and the 8 kHz band, so they are this extractor's values on neutral
 * espeak-ng voices (en-us, f3; plain and through the test stimuli's Praat resynthesis; `npm run bench:emotion
 * -- --calibrate` prints the plain voices' values), rounded.
 */
const REFERENCE: MappingParameters['reference'] = {
  f0_mean_st: { mean: 30.0, sd: 6.0 },
  f0_range_st: { mean: 3.5, sd: 2.0 },
  f0_slope_st_s: { mean: 0.0, sd: 8.0 },
  jitter_local: { mean: 0.015, sd: 0.01 },
  shimmer_local: { mean: 0.15, sd: 0.05 },
  hnr_db: { mean: 10.0, sd: 4.0 },
  cpps_db: { mean: 12.0, sd: 3.0 },
  alpha_ratio_db: { mean: -9.0, sd: 5.0 },
  hammarberg_db: { mean: 17.0, sd: 6.0 },
  spectral_slope_db_khz: { mean: -6.0, sd: 2.0 },
  spectral_flux_db: { mean: 5.0, sd: 0.8 },
  f1_proxy_hz: { mean: 500, sd: 50 },
  f2_proxy_hz: { mean: 1700, sd: 80 },
  voiced_fraction: { mean: 0.65, sd: 0.15 },
  syllable_rate: { mean: 4.5, sd: 1.0 },
  level_range_db: { mean: 22.0, sd: 4.0 },
  h1_h2_db: { mean: 0.0, sd: 4.0 },
  level_rise_db_s: { mean: 330, sd: 120 },
  f0_rel_st: { mean: 0, sd: 2.0 },
  level_rel_db: { mean: 0, sd: 6.0 },
};

/** About 0.3 dB per semitone across espeak-ng's male and female voices (docs/emotion-engine.md). */
const H1H2_PER_SEMITONE = 0.3;

/** [rough above, rough below, soft above, soft below] → SideWeights per output. */
function w(roughAbove: number, roughBelow: number, softAbove: number, softBelow: number): { rough: SideWeights; soft: SideWeights } {
  return { rough: { above: roughAbove, below: roughBelow }, soft: { above: softAbove, below: softBelow } };
}

/**
 * Logistic weights per normalised feature (z-score, clipped to ±4), on each side of the reference, from the
 * emotion profiles of Juslin & Laukka (2003, table 7), Banse & Scherer (1996) and Eyben et al. (2016):
 * rough = how charged the voice is (anger and joy high, sadness and calm low): more and faster F0 movement,
 * more high-frequency energy (higher alpha ratio, lower Hammarberg index, shallower slope), fast rate,
 * large energy dynamics and spectral flux, irregularity (jitter, shimmer, low HNR) — above the reference only:
 * a very regular voice is not calmer for it. (Unchanged since v2; the v3 features do not enter it.)
 * soft = gentle and friendly, in three parts (docs/emotion-engine.md, "Soft in v4"):
 *  - valence: rises with a higher, wider and faster delivery (F0 level and range, rate) and falls with a low, flat,
 *    slow one (sadness; a low HNR or a narrow level range lowers it too); in a long recording, F0 above and level
 *    below its own baseline raise it. v4 dropped the contour slope and the F2 proxy (weights 0; the docs say why);
 *  - gentleness: a high H1–H2, less its F0 share (the graph's correction) — breathy, lax, soft-spoken phonation;
 *  - harshness (HARSHNESS below): one-sided, it only lowers soft.
 */
const WEIGHTS: MappingParameters['weights'] = {
  f0_mean_st: w(0.15, 0.1, 0.3, 0.3),
  f0_range_st: w(0.5, 0.4, 0.5, 0.6),
  f0_slope_st_s: w(0.05, 0.05, 0.0, 0.0),
  jitter_local: w(0.45, 0.0, 0.0, 0.0),
  shimmer_local: w(0.25, 0.0, 0.0, 0.0),
  hnr_db: w(0.0, -0.2, 0.0, 0.15),
  cpps_db: w(0.0, -0.1, 0.0, 0.0),
  alpha_ratio_db: w(0.5, 0.3, 0.0, 0.0),
  hammarberg_db: w(-0.3, -0.35, 0.0, 0.0),
  spectral_slope_db_khz: w(0.25, 0.15, 0.0, 0.0),
  spectral_flux_db: w(0.2, 0.15, 0.0, 0.0),
  f1_proxy_hz: w(0.1, 0.05, 0.0, 0.0),
  f2_proxy_hz: w(0.0, 0.0, 0.0, 0.0),
  voiced_fraction: w(0.2, 0.2, 0.0, 0.0),
  syllable_rate: w(0.35, 0.35, 0.2, 0.35),
  level_range_db: w(0.25, 0.15, 0.0, 0.1),
  h1_h2_db: w(0.0, 0.0, 0.5, 0.5),
  level_rise_db_s: w(0.0, 0.0, 0.0, 0.0),
  f0_rel_st: w(0.0, 0.0, 0.4, 0.4),
  level_rel_db: w(0.0, 0.0, 0.0, -0.4),
};

/**
 * The harshness term: a weighted sum of the z-scores of a pressed, strained, loud voice, cut at zero, taken
 * from soft's logit. Sources: vocal effort and anger flatten the spectrum (higher alpha ratio, shallower
 * slope, lower Hammarberg index: Hammarberg et al. 1980; Sluijter & van Heuven 1996; Banse & Scherer 1996;
 * Eyben et al. 2016), pressed phonation lowers H1–H2 (Gobl & Ní Chasaide 2003; Kreiman & Sidtis 2011),
 * harsh voice adds aperiodicity (jitter, shimmer, lower HNR and CPPS: Laver 1980; Scherer 1986) and anger
 * starts syllables abruptly (fast loudness attacks: Scherer 2003; eGeMAPS' rising slope). Level itself is not
 * used — the recording gain must not change a score — but its acoustic trace is: the flatter tilt.
 * A breathy voice has low HNR too, but its steep slope and high H1–H2 pull the sum below zero, so it is not
 * counted as harsh (the reason this is one unit with a Relu and not a penalty per cue).
 */
const HARSHNESS: MappingParameters['harshness'] = {
  weights: {
    // Raised vocal effort raises F0 along with the flatter tilt (Traunmüller & Eriksson 2000). H1–H2's own
    // share of F0 is taken off before (h1h2PerSemitone), so a low voice is not read as pressed.
    f0_mean_st: 0.18,
    f0_range_st: 0,
    f0_slope_st_s: 0,
    jitter_local: 0.35,
    shimmer_local: 0.2,
    hnr_db: -0.35,
    cpps_db: -0.15,
    alpha_ratio_db: 0.6,
    hammarberg_db: -0.4,
    spectral_slope_db_khz: 0.2,
    spectral_flux_db: 0,
    f1_proxy_hz: 0,
    f2_proxy_hz: 0,
    voiced_fraction: 0,
    syllable_rate: 0,
    level_range_db: 0,
    h1_h2_db: -0.5,
    level_rise_db_s: 0.3,
    f0_rel_st: 0,
    level_rel_db: 0,
  },
  bias: -0.6,
  soft: 6.0,
};

/** Neutral speech (all z = 0) maps to sigmoid(bias): rough about 0.2 (as v2), soft about 0.35 — room below
 *  for sad and angry speech, above for friendly and soft-spoken speech (docs/emotion-engine.md). */
const BIAS = { rough: -1.4, soft: 0.1 };

/** The shipped, knowledge-based mapping (the default; `npm run fit:emotion` can fit one on licensed data). */
export const KNOWLEDGE_MAPPING: MappingParameters = {
  reference: REFERENCE,
  h1h2PerSemitone: H1H2_PER_SEMITONE,
  weights: WEIGHTS,
  bias: BIAS,
  harshness: HARSHNESS,
  source:
    'knowledge-based: Juslin & Laukka 2003; Banse & Scherer 1996; Eyben et al. 2016 (eGeMAPS); Gobl & Ní Chasaide 2003; Hammarberg et al. 1980; docs/emotion-engine.md',
};
const Z_CLIP = 4;

/** One window's z-scores as the graph computes them (missing → reference, H1–H2 corrected for F0, clipped):
 *  the reference implementation the fit and the research scripts score with. */
export function zScores(p: Pick<MappingParameters, 'reference' | 'h1h2PerSemitone'>, x: Record<FeatureName, number>): number[] {
  const centred = FEATURE_NAMES.map((f) => (Number.isNaN(x[f]) ? 0 : x[f] - p.reference[f].mean));
  centred[H1H2] = centred[H1H2]! - p.h1h2PerSemitone * centred[F0]!;
  return FEATURE_NAMES.map((f, j) => Math.max(-Z_CLIP, Math.min(Z_CLIP, centred[j]! / p.reference[f].sd)));
}
const H1H2 = FEATURE_NAMES.indexOf('h1_h2_db');
const F0 = FEATURE_NAMES.indexOf('f0_mean_st');

// ---- a minimal protobuf writer (wire types 0 varint, 2 length-delimited) ----

function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

class Msg {
  private readonly parts: Buffer[] = [];

  int(field: number, value: number | bigint): this {
    this.parts.push(Buffer.from([...varint((field << 3) | 0), ...varint(value)]));
    return this;
  }

  bytes(field: number, value: Buffer): this {
    this.parts.push(Buffer.from([...varint((field << 3) | 2), ...varint(value.length)]), value);
    return this;
  }

  str(field: number, value: string): this {
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  msg(field: number, value: Msg): this {
    return this.bytes(field, value.build());
  }

  build(): Buffer {
    return Buffer.concat(this.parts);
  }
}

// onnx.proto3 field numbers used below.
const FLOAT = 1;

function tensor(name: string, dims: number[], values: number[]): Msg {
  const raw = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => raw.writeFloatLE(v, i * 4));
  const t = new Msg();
  for (const d of dims) t.int(1, d); // dims
  return t.int(2, FLOAT).str(8, name).bytes(9, raw); // data_type, name, raw_data
}

function node(op: string, inputs: string[], outputs: string[]): Msg {
  const n = new Msg();
  for (const i of inputs) n.str(1, i);
  for (const o of outputs) n.str(2, o);
  return n.str(3, `${op}_${outputs[0]}`).str(4, op);
}

function valueInfo(name: string, elemType: number, dims: Array<number | string>): Msg {
  const shape = new Msg();
  for (const d of dims) shape.msg(1, typeof d === 'number' ? new Msg().int(1, d) : new Msg().str(2, d));
  const tensorType = new Msg().int(1, elemType).msg(2, shape);
  return new Msg().str(1, name).msg(2, new Msg().msg(1, tensorType));
}

/** The serialised model; deterministic, so rebuilding gives the same bytes and sha256. `metadata` adds
 *  entries (the fit command records its data and figures there). */
export function mappingBytes(p: MappingParameters, metadata: Record<string, string> = {}): Buffer {
  const F = FEATURE_NAMES.length;
  const mean = FEATURE_NAMES.map((f) => p.reference[f].mean);
  const sd = FEATURE_NAMES.map((f) => p.reference[f].sd);
  const above: number[] = [];
  const below: number[] = [];
  for (const f of FEATURE_NAMES) {
    // row-major [F, 2]: column 0 rough, column 1 soft
    above.push(p.weights[f].rough.above, p.weights[f].soft.above);
    below.push(p.weights[f].rough.below, p.weights[f].soft.below);
  }

  // Identity, except that H1–H2 loses h1h2PerSemitone dB per semitone of F0 away from the reference.
  const correction = FEATURE_NAMES.flatMap((_, i) => FEATURE_NAMES.map((__, j) => (i === j ? 1 : i === F0 && j === H1H2 ? -p.h1h2PerSemitone : 0)));

  const graph = new Msg()
    .msg(1, node('IsNaN', ['features'], ['missing']))
    .msg(1, node('Where', ['missing', 'reference_mean', 'features'], ['filled']))
    .msg(1, node('Sub', ['filled', 'reference_mean'], ['centred_raw']))
    .msg(1, node('MatMul', ['centred_raw', 'correction'], ['centred']))
    .msg(1, node('Div', ['centred', 'reference_sd'], ['z']))
    .msg(1, node('Clip', ['z', 'z_min', 'z_max'], ['z_clipped']))
    .msg(1, node('Relu', ['z_clipped'], ['z_above']))
    .msg(1, node('Sub', ['z_clipped', 'z_above'], ['z_below']))
    .msg(1, node('MatMul', ['z_above', 'weights_above'], ['logits_above']))
    .msg(1, node('MatMul', ['z_below', 'weights_below'], ['logits_below']))
    .msg(1, node('Add', ['logits_above', 'logits_below'], ['logits_raw']))
    .msg(1, node('MatMul', ['z_clipped', 'harsh_weights'], ['harsh_sum']))
    .msg(1, node('Add', ['harsh_sum', 'harsh_bias'], ['harsh_shifted']))
    .msg(1, node('Relu', ['harsh_shifted'], ['harshness']))
    .msg(1, node('MatMul', ['harshness', 'harsh_out'], ['logits_harsh']))
    .msg(1, node('Add', ['logits_raw', 'logits_harsh'], ['logits_unbiased']))
    .msg(1, node('Add', ['logits_unbiased', 'bias'], ['logits']))
    .msg(1, node('Sigmoid', ['logits'], ['scores']))
    .str(2, 'emotion_mapping')
    .msg(5, tensor('reference_mean', [F], mean))
    .msg(5, tensor('reference_sd', [F], sd))
    .msg(5, tensor('correction', [F, F], correction))
    .msg(5, tensor('z_min', [], [-Z_CLIP]))
    .msg(5, tensor('z_max', [], [Z_CLIP]))
    .msg(5, tensor('weights_above', [F, 2], above))
    .msg(5, tensor('weights_below', [F, 2], below))
    .msg(5, tensor('bias', [2], [p.bias.rough, p.bias.soft]))
    .msg(
      5,
      tensor(
        'harsh_weights',
        [F, 1],
        FEATURE_NAMES.map((f) => p.harshness.weights[f]),
      ),
    )
    .msg(5, tensor('harsh_bias', [1], [p.harshness.bias]))
    .msg(5, tensor('harsh_out', [1, 2], [0, -p.harshness.soft]))
    .str(10, `inputs: ${FEATURE_NAMES.join(', ')}; outputs: scores[:,0] = rough, scores[:,1] = soft`)
    .msg(11, valueInfo('features', FLOAT, ['n', F]))
    .msg(12, valueInfo('scores', FLOAT, ['n', 2]));

  const meta = (key: string, value: string): Msg => new Msg().str(1, key).str(2, value);
  const model = new Msg()
    .int(1, 8) // ir_version
    .str(2, 'lc-emotion-build-mapping') // producer_name
    .str(3, EMOTION_MAPPING_VERSION) // producer_version
    .msg(7, graph)
    .msg(8, new Msg().str(1, '').int(2, 13)) // opset_import: ai.onnx 13
    .msg(14, meta(FEATURES_METADATA_KEY, FEATURE_NAMES.join(',')))
    .msg(14, meta('outputs', 'rough,soft'))
    .msg(14, meta('source', p.source));
  for (const [k, v] of Object.entries(metadata)) model.msg(14, meta(k, v));
  return model.build();
}

export function emotionMappingBytes(): Buffer {
  return mappingBytes(KNOWLEDGE_MAPPING);
}

/** The metadata_props of a serialised ONNX model (ModelProto field 14: key 1, value 2), read without a
 *  protobuf library: the engine checks the stored feature names against FEATURE_NAMES before scoring. */
export function onnxMetadata(bytes: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  forEachField(bytes, (field, value) => {
    if (field !== 14 || !Buffer.isBuffer(value)) return;
    let key = '';
    let val = '';
    forEachField(value, (f, v) => {
      if (Buffer.isBuffer(v) && f === 1) key = v.toString('utf8');
      if (Buffer.isBuffer(v) && f === 2) val = v.toString('utf8');
    });
    out[key] = val;
  });
  return out;
}

function forEachField(buf: Buffer, visit: (field: number, value: bigint | Buffer) => void): void {
  let at = 0;
  const readVarint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= buf.length) throw new Error('truncated protobuf varint');
      const byte = buf[at++]!;
      v |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  while (at < buf.length) {
    const tag = Number(readVarint());
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) visit(field, readVarint());
    else if (wire === 2) {
      const len = Number(readVarint());
      if (at + len > buf.length) throw new Error('truncated protobuf field');
      visit(field, buf.subarray(at, at + len));
      at += len;
    } else if (wire === 5) at += 4;
    else if (wire === 1) at += 8;
    else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
}

/** Writes models/dist/emotion-mapping.onnx (or into outDir); called by `npm run models`. */
export function buildEmotionMapping(outDir: string): void {
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, EMOTION_MAPPING_FILE);
  const bytes = emotionMappingBytes();
  if (fs.existsSync(file) && fs.readFileSync(file).equals(bytes)) return;
  fs.writeFileSync(file, bytes);
}

if (require.main === module) {
  buildEmotionMapping(process.argv[2] ?? defaultModelsDir);
  console.log(`models: emotion mapping -> ${path.join(process.argv[2] ?? defaultModelsDir, EMOTION_MAPPING_FILE)}`);
}
