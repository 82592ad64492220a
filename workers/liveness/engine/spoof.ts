// Owns spoof scoring: the crop geometry and preprocessing of fr_liveness and of operator-added spoof models.
import type { InferenceSession } from 'onnxruntime-node';
import { z } from 'zod';
import { type Box, type ChannelOrder, type Layout, type RgbImage, sampleToTensor } from './image';
import { ort, tensorData } from './ort';

/**
 * The context window a spoof model reads: a square of `factor` x the face's height around its centre,
 * shrunk to fit the image and shifted inside it (no padding), as faceplugin's and Silent-Face's crops do.
 * The context (bezel, hand, paper edge) is what these models see; tighter crops lose most of the signal.
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

/** How to feed one spoof model; the built-in fr_liveness is one instance, operators can add more. */
export const spoofModelSpecSchema = z.object({
  name: z.string().min(1),
  /** Path of the ONNX file (operator models); the built-in model is resolved through the manifest. */
  path: z.string().min(1).optional(),
  /** Optional sha256 of `path`; when given, the worker refuses to start on a mismatch. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  inputSize: z.number().int().positive(),
  /** Context crop factor around the face (see contextCrop). */
  scale: z.number().positive().default(2.7),
  channelOrder: z.enum(['rgb', 'bgr']).default('bgr'),
  layout: z.enum(['nchw', 'nhwc']).default('nchw'),
  mean: z.number().default(0),
  std: z.number().positive().default(1),
  /** Output index that means "live" after softmax (or the sigmoid output's meaning when it has one value). */
  liveIndex: z.number().int().min(0).default(0),
  /** Weight of this model's fake logit in the ensemble (the built-in model's weight is 1 unless overridden). */
  weight: z.number().min(0).default(1),
});
export type SpoofModelSpec = z.infer<typeof spoofModelSpecSchema>;

export const FR_LIVENESS_SPEC: SpoofModelSpec = {
  name: 'faceplugin-liveness',
  inputSize: 128,
  scale: 2.7,
  channelOrder: 'bgr',
  layout: 'nchw',
  mean: 0,
  std: 1,
  liveIndex: 0,
  weight: 1,
};

export interface SpoofScore {
  /** P(fake) = 1 - P(live). */
  fake: number;
}

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

  /** Scores the face's context crop; `factor` and `flip` override the spec for test-time augmentation. */
  async score(img: RgbImage, face: Box, opts: { factor?: number; flip?: boolean; antialias?: boolean } = {}): Promise<SpoofScore> {
    const { spec } = this;
    const crop = contextCrop(face, img.width, img.height, opts.factor ?? spec.scale);
    const S = spec.inputSize;
    sampleToTensor(img, crop, {
      width: S, height: S, layout: spec.layout as Layout, order: spec.channelOrder as ChannelOrder,
      mean: spec.mean, std: spec.std, flip: opts.flip, antialias: opts.antialias,
    }, this.buf);
    const shape = spec.layout === 'nchw' ? [1, 3, S, S] : [1, S, S, 3];
    const out = await this.session.run({ [this.inputName]: new ort.Tensor('float32', this.buf, shape) });
    const raw = tensorData(out, this.outputName);
    if (raw.length === 1) {
      const p = 1 / (1 + Math.exp(-raw[0]!));
      return { fake: spec.liveIndex === 0 ? 1 - p : p };
    }
    const probs = softmax(raw);
    return { fake: 1 - (probs[spec.liveIndex] ?? 0) };
  }
}
