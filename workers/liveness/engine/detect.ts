// Owns face detection: BlazeFace front 128 / back 256 (MediaPipe) and faceplugin's fr_detect (UltraFace 320x240).
import { type Box, type QuarterTurns, type RgbImage, sampleToTensor, turnPixels } from './image';
import { ort, tensorData, type InferenceSession } from '../../runtime/onnx-session';

export type DetectorName = 'blazeface-front' | 'blazeface-back' | 'fr-detect';

/** A detection in working-image pixels; the box is not clamped, so it can tell that a face is cut off. */
export interface Face {
  box: Box;
  score: number;
  detector: DetectorName;
  /**
   * BlazeFace's six keypoints in working-image pixels: the subject's right eye (left in the image), left eye,
   * nose tip, mouth centre, right and left ear tragion. fr_detect gives none.
   */
  landmarks?: Point[];
}

export interface Point {
  x: number;
  y: number;
}

export function iou(a: Box, b: Box): number {
  const ix = Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));
  const inter = ix * iy;
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

/** MediaPipe's weighted NMS: overlapping boxes are averaged by score rather than dropped (steadier boxes). */
function weightedNms(cands: Face[], iouThreshold: number): Face[] {
  const rest = [...cands].sort((a, b) => b.score - a.score);
  const out: Face[] = [];
  while (rest.length > 0) {
    const top = rest[0]!;
    const group = rest.filter((c) => iou(top.box, c.box) > iouThreshold);
    const total = group.reduce((s, c) => s + c.score, 0);
    const avg = (k: keyof Box) => group.reduce((s, c) => s + c.box[k] * c.score, 0) / total;
    const merged: Face = { box: { x: avg('x'), y: avg('y'), w: avg('w'), h: avg('h') }, score: top.score, detector: top.detector };
    if (top.landmarks) {
      merged.landmarks = top.landmarks.map((_, j) => ({
        x: group.reduce((s, c) => s + c.landmarks![j]!.x * c.score, 0) / total,
        y: group.reduce((s, c) => s + c.landmarks![j]!.y * c.score, 0) / total,
      }));
    }
    out.push(merged);
    for (const g of group) rest.splice(rest.indexOf(g), 1);
  }
  return out;
}

function hardNms(cands: Face[], iouThreshold: number): Face[] {
  const rest = [...cands].sort((a, b) => b.score - a.score);
  const out: Face[] = [];
  for (const c of rest) if (out.every((o) => iou(o.box, c.box) <= iouThreshold)) out.push(c);
  return out;
}

/** BlazeFace anchors: 16x16 cells x 2, then 8x8 cells x 6; centres in input pixels. */
function blazeAnchors(size: number): Float32Array {
  const a: number[] = [];
  for (const [cells, perCell] of [
    [16, 2],
    [8, 6],
  ] as const) {
    for (let y = 0; y < cells; y++) {
      for (let x = 0; x < cells; x++) {
        for (let k = 0; k < perCell; k++) a.push(((x + 0.5) * size) / cells, ((y + 0.5) * size) / cells);
      }
    }
  }
  return Float32Array.from(a);
}

export class BlazeFace {
  private readonly anchors: Float32Array;
  private readonly input: Float32Array;
  private readonly turned: Float32Array;

  constructor(
    private readonly session: InferenceSession,
    private readonly size: 128 | 256,
    readonly name: 'blazeface-front' | 'blazeface-back',
    private readonly minScore = 0.5,
  ) {
    this.anchors = blazeAnchors(size);
    this.input = new Float32Array(size * size * 3);
    this.turned = new Float32Array(size * size * 3);
  }

  /**
   * Faces in `img`, or with `turns`, in `turnImage(img, turns)` (boxes and keypoints in that turned image's
   * pixels). The letterbox square is centred, so the turned image's input is the input tensor turned: trying
   * another orientation costs one model pass, not a turn of the whole image.
   */
  async detect(img: RgbImage, turns: QuarterTurns = 0): Promise<Face[]> {
    const S = this.size;
    // Letterbox: the image, centred in a black square of its long side, scaled to S x S.
    const side = Math.max(img.width, img.height);
    const [w, h] = turns % 2 === 1 ? [img.height, img.width] : [img.width, img.height];
    const sq: Box = { x: (w - side) / 2, y: (h - side) / 2, w: side, h: side };
    const unturned: Box = { x: (img.width - side) / 2, y: (img.height - side) / 2, w: side, h: side };
    sampleToTensor(img, unturned, { width: S, height: S, layout: 'nhwc', order: 'rgb', mean: 127.5, std: 127.5, border: 'black' }, this.input);
    const input = turns === 0 ? this.input : turnPixels(this.input, S, S, 3, turns, this.turned);
    const out = await this.session.run({ 'input:0': new ort.Tensor('float32', input, [1, S, S, 3]) });
    const scores = [tensorData(out, 'Identity:0'), tensorData(out, 'Identity_1:0')];
    const regs = [tensorData(out, 'Identity_2:0'), tensorData(out, 'Identity_3:0')];
    const k = side / S;
    const cands: Face[] = [];
    let anchor = 0;
    for (let part = 0; part < 2; part++) {
      const sc = scores[part]!;
      const rg = regs[part]!;
      for (let i = 0; i < sc.length; i++, anchor++) {
        const logit = Math.max(-100, Math.min(100, sc[i]!));
        const score = 1 / (1 + Math.exp(-logit));
        if (score < this.minScore) continue;
        const cx = this.anchors[anchor * 2]! + rg[i * 16]!;
        const cy = this.anchors[anchor * 2 + 1]! + rg[i * 16 + 1]!;
        const w = rg[i * 16 + 2]!;
        const h = rg[i * 16 + 3]!;
        if (w <= 0 || h <= 0) continue;
        const ax = this.anchors[anchor * 2]!,
          ay = this.anchors[anchor * 2 + 1]!;
        const landmarks: Point[] = [];
        for (let j = 0; j < 6; j++) landmarks.push({ x: (ax + rg[i * 16 + 4 + 2 * j]!) * k + sq.x, y: (ay + rg[i * 16 + 5 + 2 * j]!) * k + sq.y });
        cands.push({
          box: { x: (cx - w / 2) * k + sq.x, y: (cy - h / 2) * k + sq.y, w: w * k, h: h * k },
          score,
          detector: this.name,
          landmarks,
        });
      }
    }
    return weightedNms(cands, 0.3);
  }
}

/** faceplugin's fr_detect: an UltraFace RFB-320 (stretched 320x240 input, boxes decoded to 0..1 corners). */
export class FrDetect {
  private readonly input = new Float32Array(3 * 240 * 320);

  constructor(
    private readonly session: InferenceSession,
    private readonly minScore = 0.65,
  ) {}

  async detect(img: RgbImage): Promise<Face[]> {
    // BGR, as faceplugin's OpenCV-based training pipeline fed it; its boxes drive the spoof crop best.
    sampleToTensor(
      img,
      { x: 0, y: 0, w: img.width, h: img.height },
      { width: 320, height: 240, layout: 'nchw', order: 'bgr', mean: 127, std: 128 },
      this.input,
    );
    const out = await this.session.run({ input: new ort.Tensor('float32', this.input, [1, 3, 240, 320]) });
    const scores = tensorData(out, 'scores');
    const boxes = tensorData(out, 'boxes');
    const cands: Face[] = [];
    const n = scores.length / 2;
    for (let i = 0; i < n; i++) {
      const score = scores[i * 2 + 1]!;
      if (score < this.minScore) continue;
      const x0 = boxes[i * 4]! * img.width,
        y0 = boxes[i * 4 + 1]! * img.height;
      const x1 = boxes[i * 4 + 2]! * img.width,
        y1 = boxes[i * 4 + 3]! * img.height;
      if (x1 <= x0 || y1 <= y0) continue;
      cands.push({ box: { x: x0, y: y0, w: x1 - x0, h: y1 - y0 }, score, detector: 'fr-detect' });
    }
    return hardNms(cands, 0.4);
  }
}

export const largest = (faces: Face[]): Face | undefined =>
  faces.reduce<Face | undefined>((best, f) => (!best || f.box.w * f.box.h > best.box.w * best.box.h ? f : best), undefined);
