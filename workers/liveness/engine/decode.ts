// Owns turning request bytes into an oriented RGB image: format check, pixel-bomb guard, shrink-on-load.
import sharp, { type Metadata, type OutputInfo } from 'sharp';
import { InvalidInputError } from '../../../shared/errors';
import { type ImageHeader, readJpegHeader, readPngHeader } from './header';
import type { RgbImage } from './image';

export type ImageFormat = 'jpeg' | 'png';

export interface DecodeOptions {
  /** Refuse images with more pixels than this before decoding them (decompression bombs). */
  maxPixels: number;
  /**
   * Large JPEGs are decoded at 1/2, 1/4 or 1/8 scale (libjpeg's DCT scaling: the inverse transform and colour
   * conversion run at the smaller size) and reduced to a working image whose long side stays >= this
   * (workingShrink).
   */
  minWorkingSide: number;
}

export const DEFAULT_DECODE_OPTIONS: DecodeOptions = { maxPixels: 40_000_000, minWorkingSide: 480 };

function sniff(bytes: Buffer): ImageFormat | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length >= 8 && png.every((b, i) => bytes[i] === b)) return 'png';
  return undefined;
}

const invalid = (message: string) => new InvalidInputError('invalid_image', message);

export async function decodeImage(bytes: Buffer, format: ImageFormat, opts: DecodeOptions = DEFAULT_DECODE_OPTIONS): Promise<RgbImage> {
  const actual = sniff(bytes);
  if (!actual) throw invalid('The image is neither a JPEG nor a PNG file.');
  if (actual !== format) {
    throw invalid(`image_format is "${format}" but the bytes are a ${actual.toUpperCase()} image.`);
  }
  // failOn 'warning' makes libjpeg/libspng warnings such as "premature end of data" fatal: truncated
  // uploads are refused instead of being analysed with a grey lower half.
  const input = { failOn: 'warning' as const, limitInputPixels: opts.maxPixels };
  // Size (and a JPEG's orientation) from the header in JS; libvips only when that cannot read it.
  const header = actual === 'jpeg' ? readJpegHeader(bytes) : readPngHeader(bytes);
  const meta = header ?? (await sharpHeader(bytes));
  const { width, height } = meta;
  if (width * height > opts.maxPixels) {
    throw invalid(`The image has ${width}x${height} pixels; at most ${opts.maxPixels / 1e6} megapixels are accepted.`);
  }

  const shrink = actual === 'jpeg' ? workingShrink(Math.max(width, height), opts.minWorkingSide) : 1;
  let pipeline = sharp(bytes, input).rotate();
  let oriented: { width: number; height: number } | undefined;
  if (shrink > 1) {
    const orientation = meta.orientation ?? (await sharpHeader(bytes)).orientation ?? 1;
    oriented = orientation >= 5 ? { width: height, height: width } : { width, height };
    // Rounded down: sharp's shrink is then at least `shrink` on both axes, and loads at its DCT scale.
    const side = (n: number) => Math.max(1, Math.floor(n / shrink));
    pipeline = pipeline.resize(side(oriented.width), side(oriented.height), { fit: 'fill' });
  }
  let raw: { data: Buffer; info: OutputInfo };
  try {
    raw = await pipeline.removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  } catch {
    throw invalid('The image could not be decoded; it may be truncated or corrupted.');
  }
  const { info } = raw;
  if (info.channels !== 3) throw invalid(`Unsupported image with ${info.channels} channels.`);
  // Not shrunk: the decoded (rotated) image is the original's size, whatever its orientation was.
  const orig = oriented ?? { width: info.width, height: info.height };
  return {
    data: new Uint8Array(raw.data.buffer, raw.data.byteOffset, raw.data.byteLength),
    width: info.width,
    height: info.height,
    origWidth: orig.width,
    origHeight: orig.height,
    scale: orig.width / info.width,
  };
}

/**
 * How much a JPEG of this long side is shrunk into the working image (1 = not at all). Two rules, the larger
 * shrink wins: by a power of two (2, 4, 8) while the long side stays >= minSide, as always; and by s + 1 for the
 * largest DCT scale 1/s (s = 2, 4, 8) that keeps it. The second is there because sharp (0.35) decodes at 1/s only
 * when asked to shrink by s + 1 or more: a shrink whose integer part is s is loaded at s/2 (a guard against
 * libjpeg's rounding) and reduced with Lanczos. So 1600x1200, shrunk by 2, was decoded whole and halved (9.0 ms
 * of CPU; the whole decode alone is 7.5); shrunk by 3 it is loaded at 1/2 and reduced to 533x400 (5.2 ms). The
 * working image is never larger than before, so what the models see changes only where the load gets smaller.
 */
export function workingShrink(longSide: number, minSide: number): number {
  let byPowers = 1;
  while (byPowers < 8 && longSide / (byPowers * 2) >= minSide) byPowers *= 2;
  for (const s of [8, 4, 2]) if (longSide / (s + 1) >= minSide) return Math.max(byPowers, s + 1);
  return byPowers;
}

/** libvips' reading of the header, for files readJpegHeader / readPngHeader leave alone. */
async function sharpHeader(bytes: Buffer): Promise<ImageHeader> {
  let meta: Metadata;
  try {
    // Header only: no pixel limit here, so the size check can say what was too big.
    meta = await sharp(bytes, { failOn: 'warning', limitInputPixels: false }).metadata();
  } catch {
    throw invalid('The image could not be decoded; it may be corrupted.');
  }
  if (!meta.width || !meta.height) throw invalid('The image has no dimensions; it may be corrupted.');
  return { width: meta.width, height: meta.height, orientation: meta.orientation ?? 1 };
}
