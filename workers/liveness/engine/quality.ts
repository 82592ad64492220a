// Owns the quality gates behind isValidFace / msg / reasons: what a careful integrator must fix before trusting a score.
import type { Face } from './detect';
import { type Box, type RgbImage, lumaPatch, meanLuma } from './image';

export type QualityReason = 'face_too_small' | 'face_cut_off' | 'too_dark' | 'too_bright' | 'blurry' | 'multiple_faces' | 'low_confidence';

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
  similarFaceArea: 0.5,
  minScore: { 'fr-detect': 0.85, 'blazeface-front': 0.75, 'blazeface-back': 0.75 },
};

export const QUALITY_MESSAGES: Record<QualityReason, string> = {
  face_too_small: 'The face is too small; move closer to the camera or send a larger image.',
  face_cut_off: 'The face is cut off at the image border; centre the face in the frame.',
  too_dark: 'The face is too dark; add light in front of the face.',
  too_bright: 'The face is overexposed; reduce direct light or backlight compensation.',
  blurry: 'The face is blurry; hold the camera still and keep the face in focus.',
  multiple_faces: 'Several faces of similar size were found; only one person should be in the frame.',
  low_confidence: 'The face was detected with low confidence; face the camera with the whole face visible.',
};

export interface QualityReport {
  isValidFace: boolean;
  reasons: QualityReason[];
  msg: string;
  /** Measurements behind the verdict (working-image luma etc.), for tuning and logs. */
  measures: { brightness: number; sharpness: number; faceHeight: number; outside: number };
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

export function assessQuality(img: RgbImage, face: Face, all: Face[], t: QualityThresholds = DEFAULT_QUALITY): QualityReport {
  const reasons: QualityReason[] = [];
  const faceHeight = face.box.h * img.scale;
  const outside = outsideShare(face.box, img.width, img.height);
  const brightness = meanLuma(img, face.box);
  const sharp = sharpness(img, face.box);
  if (faceHeight < t.minFaceHeight) reasons.push('face_too_small');
  if (outside > t.maxOutside || touchesBorder(face.box, img.width, img.height, t.borderMargin)) reasons.push('face_cut_off');
  if (brightness < t.minBrightness) reasons.push('too_dark');
  if (brightness > t.maxBrightness) reasons.push('too_bright');
  // A dark face also has little contrast; report it as too dark only, not also as blurry.
  if (sharp < t.minSharpness && brightness >= t.minBrightness) reasons.push('blurry');
  const area = face.box.w * face.box.h;
  if (all.some((f) => f !== face && f.box.w * f.box.h >= t.similarFaceArea * area)) reasons.push('multiple_faces');
  if (face.score < t.minScore[face.detector]) reasons.push('low_confidence');
  return {
    isValidFace: reasons.length === 0,
    reasons,
    msg: reasons.map((r) => QUALITY_MESSAGES[r]).join(' '),
    measures: { brightness, sharpness: sharp, faceHeight, outside },
  };
}
