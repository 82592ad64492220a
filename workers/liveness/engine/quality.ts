// Owns the quality gates behind isValidFace / msg / reasons: what a careful integrator must fix before trusting a score.
import type { Face } from './detect';
import { type Box, type RgbImage, lumaCrop, lumaPatch, meanLuma } from './image';

export type QualityReason =
  'face_too_small' | 'face_cut_off' | 'too_dark' | 'too_bright' | 'blurry' | 'noisy' | 'too_compressed' | 'multiple_faces' | 'low_confidence';

export interface QualityThresholds {
  /** Face height in original pixels below which the spoof model sees too little detail. */
  minFaceHeight: number;
  /** Share of the face box that may lie outside the image before we call it cut off. */
  maxOutside: number;
  /**
   * fr_detect clamps its boxes to the frame, so a cut-off face shows up as a box touching the border:
   * within this share of the image size of an edge.
   */
  borderMargin: number;
  minBrightness: number;
  maxBrightness: number;
  /** Variance of the Laplacian of the face resampled to 96x96 luma; below it the face is blurry. */
  minSharpness: number;
  /**
   * Blur effect (blurEffect) of the face above which it is blurry: Laplacian variance alone misses a soft face with
   * strong features; the blur effect is normalised by the face's own variation, so it does not.
   */
  maxBlurEffect: number;
  /**
   * Sensor noise (standard deviation, luma levels; noiseSigma) above which a face in a dim scene is too grainy: the
   * gain a camera adds in little light, which the spoof models read as a screen's or a print's texture (and an
   * attacker can add on purpose). Only below `noisyBelowBrightness`: phones denoise bright scenes, and a bright
   * face's fine texture is not grain.
   */
  maxNoise: number;
  noisyBelowBrightness: number;
  /** Estimated JPEG quality (IJG scale, header.ts) below which the file is too compressed to judge. */
  minJpegQuality: number;
  /** A second face at least this share of the adopted face's area makes the subject ambiguous. */
  similarFaceArea: number;
  /** Minimum detector score, per detector (their scores are not on the same scale). */
  minScore: Record<Face['detector'], number>;
}

export const DEFAULT_QUALITY: QualityThresholds = {
  minFaceHeight: 80,
  maxOutside: 0.08,
  borderMargin: 0.004,
  minBrightness: 45,
  maxBrightness: 215,
  minSharpness: 20,
  maxBlurEffect: 0.7,
  maxNoise: 3,
  noisyBelowBrightness: 100,
  minJpegQuality: 30,
  similarFaceArea: 0.5,
  minScore: { 'fr-detect': 0.85, 'blazeface-front': 0.75, 'blazeface-back': 0.75 },
};

export const QUALITY_MESSAGES: Record<QualityReason, string> = {
  face_too_small: 'The face is too small; move closer to the camera or send a larger image.',
  face_cut_off: 'The face is cut off at the image border; centre the face in the frame.',
  too_dark: 'The face is too dark; add light in front of the face.',
  too_bright: 'The face is overexposed; reduce direct light or backlight compensation.',
  blurry: 'The face is blurry; hold the camera still and keep the face in focus.',
  noisy: 'The image is grainy (too little light for the camera); add light in front of the face.',
  too_compressed: 'The image is too heavily compressed; send the photo as the camera took it (JPEG quality 30 or more).',
  multiple_faces: 'Several faces of similar size were found; only one person should be in the frame.',
  low_confidence: 'The face was detected with low confidence; face the camera with the whole face visible.',
};

export interface QualityReport {
  isValidFace: boolean;
  reasons: QualityReason[];
  msg: string;
  /** Measurements behind the verdict (working-image luma etc.), for tuning and logs. */
  measures: { brightness: number; sharpness: number; blurEffect: number; noise: number; jpegQuality?: number; faceHeight: number; outside: number };
}

/** Variance of a 4-neighbour Laplacian: the usual focus measure, on a fixed-size patch so it is scale-free. */
function sharpness(img: RgbImage, box: Box): number {
  const N = 96;
  const p = lumaPatch(img, box, N);
  let sum = 0,
    sum2 = 0,
    n = 0;
  for (let y = 1; y < N - 1; y++) {
    for (let x = 1; x < N - 1; x++) {
      const i = y * N + x;
      const l = p[i - 1]! + p[i + 1]! + p[i - N]! + p[i + N]! - 4 * p[i]!;
      sum += l;
      sum2 += l * l;
      n++;
    }
  }
  const mean = sum / n;
  return sum2 / n - mean * mean;
}

/**
 * The blur effect of Crété-Roffet, Dolmière, Ladret and Nicolas (2007), "The blur effect: perception and
 * estimation with a new no-reference perceptual blur metric": blur the face again with a 9-tap box filter and see
 * how much of its pixel-to-pixel variation that removes. A sharp face loses most of it, a blurred one little, so
 * 0 is sharp and 1 is blurred, whatever the face's contrast. The larger of the horizontal and vertical figures, on
 * the working image's pixels (unresampled) of the face box's inner 80 %, on a grid of rows and columns of at most
 * ~96 each way.
 */
function blurEffect(img: RgbImage, box: Box): number {
  const x0 = Math.max(0, Math.floor(box.x + 0.1 * box.w)),
    x1 = Math.min(img.width, Math.ceil(box.x + 0.9 * box.w));
  const y0 = Math.max(0, Math.floor(box.y + 0.1 * box.h)),
    y1 = Math.min(img.height, Math.ceil(box.y + 0.9 * box.h));
  const w = x1 - x0,
    h = y1 - y0;
  if (w < 12 || h < 12) return 1;
  const luma = lumaCrop(img, x0, y0, w, h);
  // Along one direction: `lines` lines of `len` pixels, pixel i of line l at l * lineStride + i * stride.
  const along = (lines: number, len: number, lineStride: number, stride: number): number => {
    const every = Math.max(1, Math.floor(lines / 96));
    let varied = 0,
      kept = 0;
    for (let l = 0; l < lines; l += every) {
      const base = l * lineStride;
      let box9 = 0;
      for (let i = 0; i < 9; i++) box9 += luma[base + i * stride]!;
      let prevBlur = box9 / 9;
      let prev = luma[base + 4 * stride]!;
      for (let i = 5, p = base + 5 * stride; i + 4 < len; i++, p += stride) {
        box9 += luma[p + 4 * stride]! - luma[p - 5 * stride]!;
        const blur = box9 / 9;
        const cur = luma[p]!;
        const dF = Math.abs(cur - prev),
          dB = Math.abs(blur - prevBlur);
        varied += dF;
        if (dF > dB) kept += dF - dB;
        prevBlur = blur;
        prev = cur;
      }
    }
    return varied > 0 ? (varied - kept) / varied : 1;
  };
  return Math.max(along(h, w, w, 1), along(w, h, 1, w));
}

/**
 * Noise sigma in luma levels: Immerkaer's estimator (1996), |I * N| with N = [1 -2 1; -2 4 -2; 1 -2 1] (which
 * cancels smooth shading and has gain 6 on white noise), made robust to the face's own edges by a median
 * (x 1.4826 for a Gaussian) instead of a mean. Measured on the working image's pixels, unresampled, in the central
 * 60 % of the face box (skin, not hair or background), on a grid of at most ~16k points.
 */
function noiseSigma(img: RgbImage, box: Box): number {
  const x0 = Math.max(1, Math.floor(box.x + 0.2 * box.w)),
    x1 = Math.min(img.width - 1, Math.ceil(box.x + 0.8 * box.w));
  const y0 = Math.max(1, Math.floor(box.y + 0.2 * box.h)),
    y1 = Math.min(img.height - 1, Math.ceil(box.y + 0.8 * box.h));
  if (x1 <= x0 || y1 <= y0) return 0;
  const step = Math.max(1, Math.round(Math.sqrt(((x1 - x0) * (y1 - y0)) / 16_000)));
  // Luma of the region and its one-pixel rim, once.
  const w = x1 - x0 + 2,
    h = y1 - y0 + 2;
  const luma = lumaCrop(img, x0 - 1, y0 - 1, w, h);
  const r = new Float32Array(Math.ceil((x1 - x0) / step) * Math.ceil((y1 - y0) / step));
  let n = 0;
  for (let y = 1; y < h - 1; y += step) {
    for (let x = 1, i = y * w + 1; x < w - 1; x += step, i += step) {
      const v =
        luma[i - w - 1]! +
        luma[i - w + 1]! +
        luma[i + w - 1]! +
        luma[i + w + 1]! -
        2 * (luma[i - w]! + luma[i - 1]! + luma[i + 1]! + luma[i + w]!) +
        4 * luma[i]!;
      r[n++] = Math.abs(v);
    }
  }
  return (1.4826 * nthSmallest(r.subarray(0, n), Math.floor(n / 2))) / 6;
}

/** The k-th smallest value (0-based) of `a`, reordering it in place: Hoare's selection, O(n) on average. */
function nthSmallest(a: Float32Array, k: number): number {
  let lo = 0,
    hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo,
      j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

function touchesBorder(box: Box, w: number, h: number, margin: number): boolean {
  const mx = margin * w,
    my = margin * h;
  return box.x <= mx || box.y <= my || box.x + box.w >= w - mx || box.y + box.h >= h - my;
}

function outsideShare(box: Box, w: number, h: number): number {
  const ix = Math.max(0, Math.min(box.x + box.w, w) - Math.max(box.x, 0));
  const iy = Math.max(0, Math.min(box.y + box.h, h) - Math.max(box.y, 0));
  return 1 - (ix * iy) / (box.w * box.h);
}

/** What is known of the file itself, apart from its pixels. */
export interface SourceFacts {
  /** Estimated JPEG quality (header.ts estimateJpegQuality); undefined for PNG or an unreadable table. */
  jpegQuality?: number;
}

export function assessQuality(img: RgbImage, face: Face, all: Face[], source: SourceFacts = {}, t: QualityThresholds = DEFAULT_QUALITY): QualityReport {
  const reasons: QualityReason[] = [];
  const faceHeight = face.box.h * img.scale;
  const outside = outsideShare(face.box, img.width, img.height);
  const brightness = meanLuma(img, face.box);
  const sharp = sharpness(img, face.box);
  const blur = blurEffect(img, face.box);
  const noise = noiseSigma(img, face.box);
  if (faceHeight < t.minFaceHeight) reasons.push('face_too_small');
  if (outside > t.maxOutside || touchesBorder(face.box, img.width, img.height, t.borderMargin)) reasons.push('face_cut_off');
  if (brightness < t.minBrightness) reasons.push('too_dark');
  if (brightness > t.maxBrightness) reasons.push('too_bright');
  // A dark face also has little contrast; report it as too dark only, not also as blurry.
  if ((sharp < t.minSharpness || blur > t.maxBlurEffect) && brightness >= t.minBrightness) reasons.push('blurry');
  // A too dark face is grainy as well; too_dark alone says what to fix.
  if (noise > t.maxNoise && brightness >= t.minBrightness && brightness < t.noisyBelowBrightness) reasons.push('noisy');
  if (source.jpegQuality !== undefined && source.jpegQuality < t.minJpegQuality) reasons.push('too_compressed');
  const area = face.box.w * face.box.h;
  if (all.some((f) => f !== face && f.box.w * f.box.h >= t.similarFaceArea * area)) reasons.push('multiple_faces');
  if (face.score < t.minScore[face.detector]) reasons.push('low_confidence');
  return {
    isValidFace: reasons.length === 0,
    reasons,
    msg: reasons.map((r) => QUALITY_MESSAGES[r]).join(' '),
    measures: {
      brightness,
      sharpness: sharp,
      blurEffect: blur,
      noise,
      ...(source.jpegQuality !== undefined && { jpegQuality: source.jpegQuality }),
      faceHeight,
      outside,
    },
  };
}
