// Test images made from the photo the models step fetches (models/dist/fixtures/human-samples.jpg,
// @vladmandic/human's MIT-licensed sample sheet) or synthesized; never from ../shared.
import path from 'node:path';
import sharp from 'sharp';
import { defaultModelsDir } from '../../shared/paths';

const SAMPLES = path.join(defaultModelsDir, 'fixtures', 'human-samples.jpg');

/** A single-person portrait (the sheet's third thumbnail), upscaled to 640x480 like a webcam frame. */
export async function portrait(format: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const img = sharp(SAMPLES).extract({ left: 330, top: 0, width: 210, height: 158 }).resize(640, 480);
  return format === 'jpeg' ? img.jpeg({ quality: 90 }).toBuffer() : img.png().toBuffer();
}

/** The same portrait at `width` × ¾ width, JPEG at `quality` (1280 at 92: ~109 KB, like a phone's selfie). */
export async function portraitAt(width: number, quality: number): Promise<Buffer> {
  const img = sharp(SAMPLES).extract({ left: 330, top: 0, width: 210, height: 158 });
  return img
    .resize(width, Math.round((width * 3) / 4))
    .jpeg({ quality })
    .toBuffer();
}

/**
 * bench:field's phone-sized photo: the sheet's third face (framed a little wider than `portrait`) upscaled to
 * 1600x1200, at the JPEG quality that lands nearest 250 KB (97: 264 KB).
 */
export async function phonePhoto(): Promise<Buffer> {
  const face = sharp(SAMPLES).extract({ left: 325, top: 0, width: 213, height: 160 }).resize(1600, 1200, { fit: 'cover' });
  let best: Buffer | null = null;
  for (const quality of [70, 80, 85, 90, 93, 95, 97]) {
    const jpeg = await face.clone().jpeg({ quality }).toBuffer();
    if (!best || Math.abs(jpeg.length - 250_000) < Math.abs(best.length - 250_000)) best = jpeg;
  }
  return best!;
}

/** A flat grey picture: decodes fine, shows no face. */
export async function blank(format: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const img = sharp({ create: { width: 320, height: 240, channels: 3, background: { r: 128, g: 128, b: 128 } } });
  return format === 'jpeg' ? img.jpeg().toBuffer() : img.png().toBuffer();
}
