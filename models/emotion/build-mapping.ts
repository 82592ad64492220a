// Owns the emotion mapping model: the modal-speech reference (mean and spread of each acoustic feature) and
// the logistic weights that turn normalised features into rough and soft, written as a small ONNX graph
// (IsNaN/Where → Sub → Div → Clip → MatMul → Add → Sigmoid) to models/dist/emotion-mapping.onnx.
// The protobuf is hand-encoded (a dozen fields of onnx.proto3), so building it needs no dependency.
// Re-fitting means changing the numbers below (or replacing the file): the engine has no weights of its own.
import fs from 'node:fs';
import path from 'node:path';
import { defaultModelsDir } from '../../shared/paths';

export const EMOTION_MAPPING_FILE = 'emotion-mapping.onnx';
export const EMOTION_MAPPING_VERSION = '1';

/** Must match FEATURE_NAMES in workers/emotion/engine/features.ts (the engine checks the column count). */
const FEATURES = [
  'f0_mean_st',
  'f0_range_st',
  'jitter_local',
  'shimmer_local',
  'hnr_db',
  'cpps_db',
  'alpha_ratio_db',
  'hammarberg_db',
  'voiced_fraction',
  'loudness_db',
] as const;

/**
 * Modal (neutral) connected speech as this engine measures it at 8 kHz, per 5 s window.
 * mean: the reference value; a missing feature (NaN, e.g. F0 of whispered speech) is replaced by it.
 * sd: the spread that counts as one unit of deviation.
 * Sources: jitter and shimmer in Praat's "local" terms, which this extractor matches within a few tenths of
 * a percent (docs/emotion-engine.md): running speech has jitter ≈ 1–2 % and shimmer ≈ 10–15 %, well above
 * sustained-vowel norms (1.04 %, 3.81 %); HNR of running speech ≈ 10 dB; F0 level halfway between typical
 * male and female voices (≈ 150 Hz = 30 st re 27.5 Hz); F0 range (20th–80th percentile) of neutral reading
 * ≈ 3–4 st. CPPS, alpha ratio, Hammarberg index and voiced fraction depend on the extractor and the 8 kHz
 * band, so they are this extractor's values on modal espeak-ng voices (en-us, m3, f3; the calibration mode
 * of `npm run bench:emotion -- --calibrate` prints them), rounded.
 */
const REFERENCE: Record<(typeof FEATURES)[number], { mean: number; sd: number }> = {
  f0_mean_st: { mean: 30.0, sd: 6.0 },
  f0_range_st: { mean: 3.5, sd: 2.0 },
  jitter_local: { mean: 0.015, sd: 0.01 },
  shimmer_local: { mean: 0.15, sd: 0.05 },
  hnr_db: { mean: 10.0, sd: 4.0 },
  cpps_db: { mean: 12.0, sd: 3.0 },
  alpha_ratio_db: { mean: -9.0, sd: 5.0 },
  hammarberg_db: { mean: 17.0, sd: 6.0 },
  voiced_fraction: { mean: 0.65, sd: 0.15 },
  loudness_db: { mean: -26.0, sd: 8.0 },
};

/**
 * Logistic weights per normalised feature (z-score, clipped to ±4), from the literature's directions:
 * rough (pressed/strained, aroused): more jitter and shimmer, less HNR and CPPS, flatter tilt (higher alpha
 * ratio, lower Hammarberg index), wider F0 range, louder, and phonation at all (whisper cannot be strained).
 * soft (breathy, gentle): aperiodicity without perturbation (low HNR and CPPS, jitter not raised), steeper
 * tilt, fewer voiced frames, quieter, narrower F0 range.
 */
const WEIGHTS: Record<(typeof FEATURES)[number], { rough: number; soft: number }> = {
  f0_mean_st: { rough: 0.1, soft: 0.0 },
  f0_range_st: { rough: 0.35, soft: -0.2 },
  jitter_local: { rough: 0.8, soft: -0.5 },
  shimmer_local: { rough: 0.4, soft: -0.1 },
  hnr_db: { rough: -0.25, soft: -0.6 },
  cpps_db: { rough: -0.2, soft: -0.5 },
  alpha_ratio_db: { rough: 0.6, soft: -0.5 },
  hammarberg_db: { rough: -0.5, soft: 0.5 },
  voiced_fraction: { rough: 0.3, soft: -0.6 },
  loudness_db: { rough: 0.3, soft: -0.3 },
};

/** Modal speech (all z = 0) maps to sigmoid(bias): about 0.2 on both scales, leaving room above. */
const BIAS = { rough: -1.4, soft: -1.4 };
const Z_CLIP = 4;

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

/** The serialised model; deterministic, so rebuilding gives the same bytes and sha256. */
export function emotionMappingBytes(): Buffer {
  const F = FEATURES.length;
  const mean = FEATURES.map((f) => REFERENCE[f].mean);
  const sd = FEATURES.map((f) => REFERENCE[f].sd);
  const w: number[] = [];
  for (const f of FEATURES) w.push(WEIGHTS[f].rough, WEIGHTS[f].soft); // row-major [F, 2]

  const graph = new Msg()
    .msg(1, node('IsNaN', ['features'], ['missing']))
    .msg(1, node('Where', ['missing', 'reference_mean', 'features'], ['filled']))
    .msg(1, node('Sub', ['filled', 'reference_mean'], ['centred']))
    .msg(1, node('Div', ['centred', 'reference_sd'], ['z']))
    .msg(1, node('Clip', ['z', 'z_min', 'z_max'], ['z_clipped']))
    .msg(1, node('MatMul', ['z_clipped', 'weights'], ['logits_raw']))
    .msg(1, node('Add', ['logits_raw', 'bias'], ['logits']))
    .msg(1, node('Sigmoid', ['logits'], ['scores']))
    .str(2, 'emotion_mapping')
    .msg(5, tensor('reference_mean', [F], mean))
    .msg(5, tensor('reference_sd', [F], sd))
    .msg(5, tensor('z_min', [], [-Z_CLIP]))
    .msg(5, tensor('z_max', [], [Z_CLIP]))
    .msg(5, tensor('weights', [F, 2], w))
    .msg(5, tensor('bias', [2], [BIAS.rough, BIAS.soft]))
    .str(10, `inputs: ${FEATURES.join(', ')}; outputs: scores[:,0] = rough, scores[:,1] = soft`)
    .msg(11, valueInfo('features', FLOAT, ['n', F]))
    .msg(12, valueInfo('scores', FLOAT, ['n', 2]));

  const meta = (key: string, value: string): Msg => new Msg().str(1, key).str(2, value);
  return new Msg()
    .int(1, 8) // ir_version
    .str(2, 'lc-emotion-build-mapping') // producer_name
    .str(3, EMOTION_MAPPING_VERSION) // producer_version
    .msg(7, graph)
    .msg(8, new Msg().str(1, '').int(2, 13)) // opset_import: ai.onnx 13
    .msg(14, meta('features', FEATURES.join(',')))
    .msg(14, meta('outputs', 'rough,soft'))
    .build();
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
