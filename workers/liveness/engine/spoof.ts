// Owns spoof scoring: the crop geometries and preprocessing of the built-in spoof models (faceplugin
// fr_liveness, Silent-Face MiniFASNetV2 / V1SE) and of operator-added ones; each yields one fake logit.
import fs from 'node:fs';
import { z } from 'zod';
import { type Box, type RgbImage, sampleToTensor } from './image';
import { openSession, ort, tensorData, type InferenceSession } from '../../runtime/onnx-session';
import { rewritePRelu } from './prelu';

/**
 * Opens a (verified) spoof model with its PRelu nodes rewritten in memory: the same outputs, bit for bit,
 * in about half the time for the MiniFASNets (see prelu.ts). The one place spoof sessions are opened.
 */
export async function openSpoofSession(file: string, intraOpThreads: number): Promise<InferenceSession> {
  return openSession(rewritePRelu(fs.readFileSync(file)).bytes, { intraOpThreads });
}

/**
 * faceplugin's context window: a square of `factor` x the face's height around its centre, shrunk to fit
 * the image and shifted inside it (no padding). The context (bezel, hand, paper edge) is what these
 * models see; tighter crops lose most of the signal.
 */
export function contextCrop(face: Box, imgW: number, imgH: number, factor: number): Box {
  const side = face.h; // faceplugin squares its detector box by height
  const cx = face.x + face.w / 2;
  const cy = face.y + face.h / 2;
  const f = Math.max(0.1, Math.min((imgH - 1) / side, (imgW - 1) / side, factor));
  const s = side * f;
  const x = Math.min(Math.max(0, cx - s / 2), imgW - s);
  const y = Math.min(Math.max(0, cy - s / 2), imgH - s);
  return { x: Math.max(0, x), y: Math.max(0, y), w: s, h: s };
}

/**
 * Silent-Face's window (CropImage._get_new_box in minivision-ai/Silent-Face-Anti-Spoofing): each side of
 * the face box scaled on its own by s' = min((H-1)/h, (W-1)/w, scale) around the box centre, shifted back
 * inside the image, corners truncated to integers. The right and bottom corners are inclusive, so the
 * box returned is x0..x1 by y0..y1 pixels: w = x1 - x0 + 1, h = y1 - y0 + 1.
 */
export function silentFaceCrop(face: Box, imgW: number, imgH: number, scale: number): Box {
  const s = Math.min((imgH - 1) / face.h, (imgW - 1) / face.w, scale);
  const nw = face.w * s,
    nh = face.h * s;
  const cx = face.x + face.w / 2,
    cy = face.y + face.h / 2;
  let x0 = cx - nw / 2,
    y0 = cy - nh / 2,
    x1 = cx + nw / 2,
    y1 = cy + nh / 2;
  if (x0 < 0) {
    x1 -= x0;
    x0 = 0;
  }
  if (y0 < 0) {
    y1 -= y0;
    y0 = 0;
  }
  if (x1 > imgW - 1) {
    x0 -= x1 - imgW + 1;
    x1 = imgW - 1;
  }
  if (y1 > imgH - 1) {
    y0 -= y1 - imgH + 1;
    y1 = imgH - 1;
  }
  // Python's int(): truncation toward zero.
  const [l, t, r, b] = [Math.trunc(x0), Math.trunc(y0), Math.trunc(x1), Math.trunc(y1)];
  return { x: l, y: t, w: r - l + 1, h: b - t + 1 };
}

/**
 * A window kept at the size the model wants around the face, wherever the frame ends (`window: 'padded-edge'` or
 * `'padded-black'`): Silent-Face's sides (each side of the face box x `scale`), faceplugin's square (`scale` x the
 * face's height), centred on the face, neither shrunk nor shifted. What lies outside the frame is filled by the
 * sampler (the edge's pixels, or black), so a close-up cuts the model's context but leaves the face where it was.
 */
export function paddedCrop(face: Box, crop: 'square' | 'silent-face', scale: number): Box {
  const w = (crop === 'silent-face' ? face.w : face.h) * scale;
  const h = face.h * scale;
  return { x: face.x + face.w / 2 - w / 2, y: face.y + face.h / 2 - h / 2, w, h };
}

/** The window of the image a spoof model reads for a face (working-image pixels), by its spec's crop and window. */
export function spoofWindow(spec: Pick<SpoofModelSpec, 'crop' | 'scale' | 'window'>, img: RgbImage, face: Box): Box {
  if (spec.window !== 'shifted') return paddedCrop(face, spec.crop, spec.scale);
  return spec.crop === 'silent-face' ? silentFaceCrop(face, img.width, img.height, spec.scale) : contextCrop(face, img.width, img.height, spec.scale);
}

function softmax(v: ArrayLike<number>): number[] {
  const m = Math.max(...Array.from(v));
  const e = Array.from(v, (x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

const EPS = 1e-6;
export const logit = (p: number) => {
  const q = Math.min(1 - EPS, Math.max(EPS, p));
  return Math.log(q / (1 - q));
};

/** How to feed one spoof model; the built-in models are instances, operators can add more. */
export const spoofModelSpecSchema = z.object({
  name: z.string().min(1),
  /** Path of the ONNX file (operator models); the built-in models are resolved through the manifest. */
  path: z.string().min(1).optional(),
  /** Optional sha256 of `path`; when given, the worker refuses to start on a mismatch. */
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  inputSize: z.number().int().positive(),
  /** Context crop factor around the face. */
  scale: z.number().positive().default(2.7),
  /** "square": faceplugin's square of the face height (contextCrop); "silent-face": each side scaled (silentFaceCrop). */
  crop: z.enum(['square', 'silent-face']).default('square'),
  /**
   * A window the frame does not hold: "shifted" shrinks it to fit and shifts it inside (the upstream models' own
   * crops); "padded-edge" / "padded-black" keep it whole around the face and fill the outside (paddedCrop).
   */
  window: z.enum(['shifted', 'padded-edge', 'padded-black']).default('shifted'),
  /** Also score the mirrored crop and average the two fake logits (test-time augmentation; one more pass). */
  mirror: z.boolean().default(false),
  channelOrder: z.enum(['rgb', 'bgr']).default('bgr'),
  layout: z.enum(['nchw', 'nhwc']).default('nchw'),
  mean: z.number().default(0),
  std: z.number().positive().default(1),
  /** Output index that means "live" after softmax (or the sigmoid output's meaning when it has one value). */
  liveIndex: z.number().int().min(0).default(0),
  /**
   * Multiplies this model's coefficient in the fusion (fusion.json); a model the fusion was not fitted
   * with gets weight x the mean fitted coefficient. 0 drops a built-in model (no pass is run).
   */
  weight: z.number().min(0).default(1),
});
export type SpoofModelSpec = z.infer<typeof spoofModelSpecSchema>;

/** Built-in spoof models, by manifest name (index order is the fusion's feature order). */
export const BUILTIN_SPOOF_SPECS: readonly SpoofModelSpec[] = [
  // No mirrored passes: averaging a mirrored crop in gave +0.004 AUC for fr_liveness alone and nothing once
  // fused (leave-one-source-out on both sets), for one more 5 ms pass; likewise for the two MiniFASNets.
  // fr_liveness is not run: with the MiniFASNets fine-tuned for capture invariance, the fusion without it moved
  // least with how a photo was taken (docs/liveness-engine.md, "Robustness"). It stays verifiable and an operator
  // can weigh it back in (EXTRA_SPOOF_MODELS: [{"name": "faceplugin-liveness", "inputSize": 128, "weight": 1}]).
  {
    name: 'faceplugin-liveness',
    inputSize: 128,
    scale: 2.7,
    crop: 'square',
    window: 'shifted',
    mirror: false,
    channelOrder: 'bgr',
    layout: 'nchw',
    mean: 0,
    std: 1,
    liveIndex: 0,
    weight: 0,
  },
  {
    name: 'silent-face-v2',
    inputSize: 80,
    scale: 2.7,
    crop: 'silent-face',
    window: 'shifted',
    mirror: false,
    channelOrder: 'bgr',
    layout: 'nchw',
    mean: 0,
    std: 1,
    liveIndex: 1,
    weight: 1,
  },
  {
    name: 'silent-face-v1se',
    inputSize: 80,
    scale: 4.0,
    crop: 'silent-face',
    window: 'shifted',
    mirror: false,
    channelOrder: 'bgr',
    layout: 'nchw',
    mean: 0,
    std: 1,
    liveIndex: 1,
    weight: 1,
  },
];

export class SpoofModel {
  private readonly inputName: string;
  private readonly outputName: string;
  private readonly buf: Float32Array;

  constructor(
    private readonly session: InferenceSession,
    readonly spec: SpoofModelSpec,
  ) {
    this.inputName = session.inputNames[0]!;
    this.outputName = session.outputNames[0]!;
    this.buf = new Float32Array(3 * spec.inputSize * spec.inputSize);
  }

  /**
   * Fake logit of one pass over the face's window: logit(1 - P(live)). `capture` receives a copy of the input
   * tensor (the training stack's windows are the very tensors the engine feeds; research/liveness/train/).
   */
  async fakeLogit(img: RgbImage, face: Box, opts: { flip?: boolean; capture?: (input: Float32Array) => void } = {}): Promise<number> {
    const { spec } = this;
    const S = spec.inputSize;
    const silent = spec.crop === 'silent-face';
    sampleToTensor(
      img,
      spoofWindow(spec, img, face),
      {
        width: S,
        height: S,
        layout: spec.layout,
        order: spec.channelOrder,
        mean: spec.mean,
        std: spec.std,
        flip: opts.flip,
        // Silent-Face's training crops were cut as an ROI and stretched by plain cv2.resize (no anti-aliasing).
        antialias: !silent,
        // A shifted window lies inside the frame; a padded one's outside is the frame's edge or black.
        clampToBox: silent && spec.window === 'shifted',
        border: spec.window === 'padded-black' ? 'black' : 'replicate',
      },
      this.buf,
    );
    opts.capture?.(this.buf.slice());
    const shape = spec.layout === 'nchw' ? [1, 3, S, S] : [1, S, S, 3];
    const out = await this.session.run({ [this.inputName]: new ort.Tensor('float32', this.buf, shape) });
    const raw = tensorData(out, this.outputName);
    if (raw.length === 1) {
      const p = 1 / (1 + Math.exp(-raw[0]!));
      return logit(spec.liveIndex === 0 ? 1 - p : p);
    }
    return logit(1 - (softmax(raw)[spec.liveIndex] ?? 0));
  }

  /** The model's fake logit for the face: one pass, or the mean of the plain and mirrored passes. */
  async score(img: RgbImage, face: Box, capture?: (input: Float32Array) => void): Promise<{ logit: number; passes: number[] }> {
    const passes = [await this.fakeLogit(img, face, { capture })];
    if (this.spec.mirror) passes.push(await this.fakeLogit(img, face, { flip: true }));
    return { logit: passes.reduce((a, b) => a + b, 0) / passes.length, passes };
  }
}
