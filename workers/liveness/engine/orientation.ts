// Owns which way up a face is: the eye line's roll from BlazeFace's keypoints, quarter turns of a working
// image, and mapping boxes found in a turned image back to the frame as it was sent.
import type { Face } from './detect';
import { type Box, type QuarterTurns, type RgbImage, turnPixels } from './image';

/** Clockwise quarter turns applied to the frame as sent (0..3); the pixel turn itself lives with the raster code. */
export type { QuarterTurns };

/**
 * Roll of the face in degrees, from the eye line (subject's right eye to left eye, in image coordinates with
 * y down): 0 upright, +90 when the frame was turned a quarter clockwise, +-180 upside down.
 */
export function eyeRoll(face: Face): number | undefined {
  const [right, left] = face.landmarks ?? [];
  if (!right || !left) return undefined;
  return (Math.atan2(left.y - right.y, left.x - right.x) * 180) / Math.PI;
}

/**
 * The quarter turns that bring this face upright (the nearest multiple of 90 degrees against its roll), or
 * undefined when it has no keypoints. Within 45 degrees of level it is 0: roll is left to the crops.
 */
export function turnsToUpright(face: Face): QuarterTurns | undefined {
  const roll = eyeRoll(face);
  if (roll === undefined) return undefined;
  return (((Math.round(-roll / 90) % 4) + 4) % 4) as QuarterTurns;
}

/** The image turned clockwise by `turns` quarters; origWidth/origHeight and scale follow the turn. */
export function turnImage(img: RgbImage, turns: QuarterTurns): RgbImage {
  if (turns === 0) return img;
  const odd = turns % 2 === 1;
  return {
    data: turnPixels(img.data, img.width, img.height, 3, turns, new Uint8Array(img.data.length)),
    width: odd ? img.height : img.width,
    height: odd ? img.width : img.height,
    origWidth: odd ? img.origHeight : img.origWidth,
    origHeight: odd ? img.origWidth : img.origHeight,
    scale: img.scale,
  };
}

/**
 * A box found in `turnImage(img, turns)` as the same region of `img` (working pixels of the frame as sent).
 * `img` is the unturned image: its width and height are the frame's.
 */
export function boxBeforeTurn(box: Box, turns: QuarterTurns, img: Pick<RgbImage, 'width' | 'height'>): Box {
  const { width: W, height: H } = img;
  if (turns === 1) return { x: box.y, y: H - box.x - box.w, w: box.h, h: box.w };
  if (turns === 2) return { x: W - box.x - box.w, y: H - box.y - box.h, w: box.w, h: box.h };
  if (turns === 3) return { x: W - box.y - box.h, y: box.x, w: box.h, h: box.w };
  return box;
}
