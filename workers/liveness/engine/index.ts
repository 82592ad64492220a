// Owns the liveness engine: loads the verified models once, and turns one JPEG/PNG into a LivenessResult.
import fs from 'node:fs';
import { z } from 'zod';
import { verifiedModelPath, modelEntry, sha256File, ModelIntegrityError } from '../../../models/manifest';
import { InvalidInputError } from '../../../shared/errors';
import type { Config } from '../../../shared/config';
import type { LivenessResult, Rectangle } from '../../../shared/queues/contracts';
import { type FusionParams, fusedLogit, shippedFusion, sigmoid } from './fusion';
import { DEFAULT_DECODE_OPTIONS, type DecodeOptions, decodeImage, type ImageFormat } from './decode';
import { estimateJpegQuality } from './header';
import { BlazeFace, type Face, FrDetect, largest } from './detect';
import type { Box, RgbImage } from './image';
import { meanLuma } from './image';
import { openSession, type InferenceSession } from '../../runtime/onnx-session';
import { type Cues, faceCues } from './cues';
import { assessQuality, DEFAULT_QUALITY, QUALITY_MESSAGES, type QualityReport, type QualityThresholds } from './quality';
import { boxBeforeTurn, type QuarterTurns, turnImage, turnsToUpright } from './orientation';
import { BUILTIN_SPOOF_SPECS, openSpoofSession, SpoofModel, type SpoofModelSpec, spoofModelSpecSchema } from './spoof';

export interface LivenessEngineOptions {
  modelsDir: string;
  intraOpThreads: number;
  fakeThreshold: number;
  /** JSON array of spoof model specs (see spoof.ts); an entry with a built-in model's name and no path only re-weights it. */
  extraSpoofModels?: string;
  /** Override for scripts (cross-validation scores with each fold's own fusion). */
  fusion?: FusionParams;
  /** Override for scripts: a built-in spoof model's ONNX file by name (cross-validation folds' own weights). */
  spoofModelFiles?: Record<string, string>;
  /** Override for scripts: a built-in spoof model's window by name (weights trained on other windows). */
  spoofWindows?: Record<string, SpoofModelSpec['window']>;
  decode?: Partial<DecodeOptions>;
  quality?: Partial<QualityThresholds>;
}

/** The engine as the worker runs it, from the validated configuration (the worker and the scripts share it). */
export function configuredEngineOptions(
  config: Pick<Config, 'MODELS_DIR' | 'ORT_INTRA_OP_THREADS' | 'FAKE_THRESHOLD' | 'EXTRA_SPOOF_MODELS'>,
): LivenessEngineOptions {
  return {
    modelsDir: config.MODELS_DIR,
    intraOpThreads: config.ORT_INTRA_OP_THREADS,
    fakeThreshold: config.FAKE_THRESHOLD,
    extraSpoofModels: config.EXTRA_SPOOF_MODELS,
  };
}

/** What the ensemble saw, for the fitting and evaluation scripts (not part of the API's answer). */
export interface LivenessFeatures {
  detector: Face['detector'];
  detectorScore: number;
  /** Fake logit of each spoof model (averaged over its plain and mirrored pass when it has both). */
  spoofLogits: Record<string, number>;
  /** Each pass's fake logit: "<model>" and "<model>:mirror". */
  passLogits: Record<string, number>;
  /** bias + weighted sum of spoofLogits: isFakeLikelihood = sigmoid(fused). */
  fused: number;
  quality: QualityReport['measures'];
  /** Hand-crafted colour/texture statistics of the face box (cues.ts). */
  cues: Cues;
  orientation: Orientation;
  /** Each spoof model's input tensor (its plain pass), when asked for with captureInputs. */
  inputs?: Record<string, Float32Array>;
}

/** Which way up the frame was scored (see LivenessEngine.orient). */
export interface Orientation {
  /** Clockwise quarter turns applied to the frame as sent before detection and scoring. */
  turns: QuarterTurns;
  /** Whether the other quarter turns were tried (the frame did not show a confident upright face). */
  searched: boolean;
  /** Whether some orientation showed a confident, upright face (BlazeFace front with level eyes). */
  upright: boolean;
}

const extraModelsSchema = z.array(spoofModelSpecSchema);

/**
 * BlazeFace front's score above which a level-eyed face is taken as upright without trying other turns. On the
 * dev sets' full frames (research/liveness/explore-orientation.ts) upright faces score 0.85-0.98 at it; the same
 * frames upside down still show "level eyes" (its keypoints assume an upright face) but score 0.5-0.82 (1 in 93
 * above 0.85), so below it the turns are compared.
 */
const UPRIGHT_SCORE = 0.85;

export class LivenessEngine {
  readonly modelInfo: Array<{ name: string; file: string; sha256: string }>;

  private constructor(
    private readonly frDetect: FrDetect,
    private readonly front: BlazeFace,
    private readonly back: BlazeFace,
    private readonly spoofModels: SpoofModel[],
    /** The fusion actually applied: fitted weights times each spec's weight (see coefficients()). */
    readonly fusion: FusionParams,
    private readonly fakeThreshold: number,
    private readonly decodeOpts: DecodeOptions,
    private readonly qualityOpts: QualityThresholds,
    modelInfo: Array<{ name: string; file: string; sha256: string }>,
  ) {
    this.modelInfo = modelInfo;
  }

  /** Verifies every model file's hash (throws ModelIntegrityError: the worker must not start) and opens sessions. */
  static async load(opts: LivenessEngineOptions): Promise<LivenessEngine> {
    const info: Array<{ name: string; file: string; sha256: string }> = [];
    const open = async (
      name: string,
      opener: (file: string, threads: number) => Promise<InferenceSession> = (file, intraOpThreads) => openSession(file, { intraOpThreads }),
    ) => {
      const file = verifiedModelPath(opts.modelsDir, name);
      info.push({ name, file: modelEntry(name).file, sha256: modelEntry(name).sha256 });
      return opener(file, opts.intraOpThreads);
    };
    const frDetect = new FrDetect(await open('faceplugin-detect'));
    const front = new BlazeFace(await open('blazeface-front'), 128, 'blazeface-front');
    const back = new BlazeFace(await open('blazeface-back'), 256, 'blazeface-back');

    const builtins = BUILTIN_SPOOF_SPECS.map((s) => ({ ...s, window: opts.spoofWindows?.[s.name] ?? s.window }));
    const extras: SpoofModelSpec[] = [];
    for (const spec of parseExtraSpoofModels(opts.extraSpoofModels)) {
      const same = builtins.find((b) => b.name === spec.name);
      // Only the weight: the parsed entry's defaults (liveIndex 0, square crop...) are not the built-in's.
      if (same && !spec.path) same.weight = spec.weight;
      else extras.push(spec);
    }
    const spoofModels: SpoofModel[] = [];
    for (const spec of builtins) {
      if (spec.weight <= 0) continue;
      const file = opts.spoofModelFiles?.[spec.name];
      if (file) info.push({ name: spec.name, file, sha256: sha256File(file) });
      const session = file ? await openSpoofSession(file, opts.intraOpThreads) : await open(spec.name, openSpoofSession);
      spoofModels.push(new SpoofModel(session, spec));
    }
    for (const spec of extras) {
      if (!spec.path) throw new Error(`EXTRA_SPOOF_MODELS: "${spec.name}" needs a path`);
      if (!fs.existsSync(spec.path)) throw new ModelIntegrityError(`spoof model file ${spec.path} is missing`);
      const sha = sha256File(spec.path);
      if (spec.sha256 && spec.sha256 !== sha) {
        throw new ModelIntegrityError(`spoof model file ${spec.path} has sha256 ${sha}, expected ${spec.sha256}`);
      }
      info.push({ name: spec.name, file: spec.path, sha256: sha });
      spoofModels.push(new SpoofModel(await openSpoofSession(spec.path, opts.intraOpThreads), spec));
    }
    if (spoofModels.length === 0) throw new Error('EXTRA_SPOOF_MODELS leaves no spoof model with a positive weight');

    return new LivenessEngine(
      frDetect,
      front,
      back,
      spoofModels,
      coefficients(
        opts.fusion ?? shippedFusion,
        spoofModels.map((m) => m.spec),
      ),
      opts.fakeThreshold,
      { ...DEFAULT_DECODE_OPTIONS, ...opts.decode },
      { ...DEFAULT_QUALITY, ...opts.quality },
      info,
    );
  }

  /** The spoof models this engine runs, in order (their names are the fusion's feature names). */
  get spoofSpecs(): SpoofModelSpec[] {
    return this.spoofModels.map((m) => m.spec);
  }

  async analyze(image: Buffer, format: ImageFormat): Promise<LivenessResult> {
    return (await this.analyzeDetailed(image, format)).result;
  }

  async analyzeDetailed(
    image: Buffer,
    format: ImageFormat,
    opts: { captureInputs?: boolean } = {},
  ): Promise<{ result: LivenessResult; features: LivenessFeatures }> {
    const t0 = performance.now();
    const sent = await decodeImage(image, format, this.decodeOpts);
    const t1 = performance.now();
    const orientation = await this.orient(sent);
    const tOrient = performance.now();
    const img = orientation.image;
    const faces = await this.detect(img);
    const face = largest(faces);
    if (!face) throw new InvalidInputError('invalid_image', 'No face was detected in the image.');
    const t2 = performance.now();
    const inputs: Record<string, Float32Array> | undefined = opts.captureInputs ? {} : undefined;
    const { spoofLogits, passLogits } = await this.scoreSpoof(img, face.box, inputs);
    const t3 = performance.now();

    const cues = faceCues(img, face.box);
    const fused = fusedLogit(this.fusion, spoofLogits, cues);
    const likelihood = sigmoid(fused);
    const quality = assessQuality(img, face, faces, { jpegQuality: format === 'jpeg' ? estimateJpegQuality(image) : undefined }, this.qualityOpts);
    // No quarter turn showed a confident upright face: the verdict is on a face we could not confirm the
    // orientation of, so the integrator is told (the detector's own confidence may still be high).
    if (!orientation.upright && !quality.reasons.includes('low_confidence')) {
      quality.reasons.push('low_confidence');
      quality.isValidFace = false;
      quality.msg = [quality.msg, QUALITY_MESSAGES.low_confidence].filter(Boolean).join(' ');
    }
    const t4 = performance.now();

    // Boxes are reported in the frame as it was sent, whichever way it was scored.
    const rect = (b: Box) => toRect(boxBeforeTurn(b, orientation.turns, sent), sent);
    const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;
    // An upright frame's probe counts as detection; a search is its own stage, present only when it ran.
    const stages: Record<string, number> = orientation.searched
      ? { decode: round(t1 - t0), orient: round(tOrient - t1), detect: round(t2 - tOrient) }
      : { decode: round(t1 - t0), detect: round(t2 - t1) };
    const result: LivenessResult = {
      isFakeFace: likelihood > this.fakeThreshold,
      isFakeLikelihood: round(likelihood, 4),
      isValidFace: quality.isValidFace,
      faceBrightness: round(meanLuma(img, face.box), 1),
      faceRectArea: rect(face.box),
      vFaceRect: [...faces].sort((a, b) => b.box.w * b.box.h - a.box.w * a.box.h).map((f) => rect(f.box)),
      msg: quality.msg,
      reasons: quality.reasons,
      latency_ms: Math.round(t4 - t0),
      stages: { ...stages, spoof: round(t3 - t2), total: round(t4 - t0) },
    };
    return {
      result,
      features: {
        detector: face.detector,
        detectorScore: face.score,
        spoofLogits,
        passLogits,
        fused,
        quality: quality.measures,
        cues,
        orientation: { turns: orientation.turns, searched: orientation.searched, upright: orientation.upright },
        ...(inputs && { inputs }),
      },
    };
  }

  /**
   * Which way up to score the frame. Uploads that strip the EXIF orientation tag without applying it reach
   * us turned, and the spoof models call most turned live faces fake. BlazeFace front (about 1 ms) looks at
   * the frame as sent: a face at UPRIGHT_SCORE or more with its eyes within 45 degrees of level means upright
   * and nothing more is done. Otherwise the three other quarter turns are tried (one BlazeFace pass each, on
   * its turned input) and the frame is scored the way that shows a confident level-eyed face with the
   * highest score. When no way does, it is scored as sent and the answer says so (low_confidence).
   */
  private async orient(img: RgbImage): Promise<Orientation & { image: RgbImage }> {
    const level = (faces: Face[]) => this.confidentFrontFace(faces.filter((f) => turnsToUpright(f) === 0));
    const probe = level(await this.front.detect(img));
    if (probe && probe.score >= UPRIGHT_SCORE) return { turns: 0, searched: false, upright: true, image: img };
    let best: { turns: QuarterTurns; score: number } | undefined = probe && { turns: 0, score: probe.score };
    for (const turns of [1, 2, 3] as const) {
      const face = level(await this.front.detect(img, turns));
      if (face && (!best || face.score > best.score)) best = { turns, score: face.score };
    }
    if (!best) return { turns: 0, searched: true, upright: false, image: img };
    return { turns: best.turns, searched: true, upright: true, image: turnImage(img, best.turns) };
  }

  private confidentFrontFace(faces: Face[]): Face | undefined {
    return largest(faces.filter((f) => f.score >= this.qualityOpts.minScore['blazeface-front']));
  }

  /**
   * fr_detect first: its box (taller, higher than BlazeFace's) is the geometry fr_liveness was trained on
   * and scored best on the dev set; BlazeFace front, then back (small faces), catch the frames it misses.
   */
  private async detect(img: RgbImage): Promise<Face[]> {
    for (const det of [this.frDetect, this.front, this.back]) {
      const faces = await det.detect(img);
      if (faces.length > 0) return faces;
    }
    return [];
  }

  /** Every spoof model reads the one decoded image; nothing is decoded or resized twice. */
  private async scoreSpoof(
    img: RgbImage,
    face: Box,
    inputs?: Record<string, Float32Array>,
  ): Promise<{ spoofLogits: Record<string, number>; passLogits: Record<string, number> }> {
    const spoofLogits: Record<string, number> = {};
    const passLogits: Record<string, number> = {};
    for (const m of this.spoofModels) {
      const { logit, passes } = await m.score(img, face, inputs && ((t) => (inputs[m.spec.name] = t)));
      spoofLogits[m.spec.name] = logit;
      passes.forEach((p, i) => (passLogits[i === 0 ? m.spec.name : `${m.spec.name}:mirror`] = p));
    }
    return { spoofLogits, passLogits };
  }
}

/**
 * The fusion the engine applies to the models it runs: each model's fitted weight times its spec weight;
 * a model the fusion was not fitted with (an operator's) gets its spec weight times the mean fitted weight.
 */
export function coefficients(fusion: FusionParams, specs: SpoofModelSpec[]): FusionParams {
  const fitted = Object.values(fusion.weights);
  const mean = fitted.length ? fitted.reduce((a, b) => a + b, 0) / fitted.length : 1;
  const out: FusionParams = {
    bias: fusion.bias,
    weights: Object.fromEntries(specs.map((s) => [s.name, s.weight * (fusion.weights[s.name] ?? mean)])),
  };
  if (fusion.cues && Object.keys(fusion.cues).length > 0) out.cues = fusion.cues;
  return out;
}

/** Every manifest model the engine loads (detectors and built-in spoof models, vendored ones included). */
const LIVENESS_MODELS = ['faceplugin-detect', 'blazeface-front', 'blazeface-back', ...BUILTIN_SPOOF_SPECS.map((s) => s.name)];

/** Checks every liveness model file's sha256 against the manifest; throws ModelIntegrityError on the first mismatch. */
export function verifyLivenessModels(modelsDir: string): void {
  for (const name of LIVENESS_MODELS) verifiedModelPath(modelsDir, name);
}

function parseExtraSpoofModels(json: string | undefined): SpoofModelSpec[] {
  if (!json || json.trim() === '') return [];
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('EXTRA_SPOOF_MODELS is not valid JSON');
  }
  const parsed = extraModelsSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`EXTRA_SPOOF_MODELS: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** Working-image box to an integer rectangle in original-image pixels, clamped to the image. */
function toRect(box: Box, img: RgbImage): Rectangle {
  const s = img.scale;
  const x0 = Math.max(0, Math.min(img.origWidth, Math.round(box.x * s)));
  const y0 = Math.max(0, Math.min(img.origHeight, Math.round(box.y * s)));
  const x1 = Math.max(0, Math.min(img.origWidth, Math.round((box.x + box.w) * s)));
  const y1 = Math.max(0, Math.min(img.origHeight, Math.round((box.y + box.h) * s)));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

export { ModelIntegrityError };
export type { ImageFormat };
