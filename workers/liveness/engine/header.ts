// Owns reading an image's size (and a JPEG's EXIF orientation) from its first bytes, without libvips:
// the decoder needs them to refuse pixel bombs and to choose a JPEG's DCT scale, and asking sharp for
// metadata first costs a second pass through its thread pool. Anything unusual returns undefined and
// the caller asks sharp instead, so this only has to be right, not complete.

export interface ImageHeader {
  /** Stored size, before EXIF orientation. */
  width: number;
  height: number;
  /** JPEG: EXIF Orientation 1..8 (1 when the file has none). PNG: undefined (not read here). */
  orientation?: number;
}

const be16 = (b: Uint8Array, p: number) => (b[p]! << 8) | b[p + 1]!;
const be32 = (b: Uint8Array, p: number) => be16(b, p) * 65536 + be16(b, p + 2);

/** Width and height from a PNG's IHDR, which the format requires to be the first chunk. */
export function readPngHeader(b: Uint8Array): ImageHeader | undefined {
  if (b.length < 24 || String.fromCharCode(...b.subarray(12, 16)) !== 'IHDR') return undefined;
  const width = be32(b, 16),
    height = be32(b, 20);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** Orientation from an APP1 "Exif\0\0" payload (TIFF IFD0 tag 0x0112); 1 when absent, undefined when unreadable. */
function exifOrientation(b: Uint8Array, start: number, end: number): number | undefined {
  const tiff = start + 6;
  if (end - tiff < 8) return undefined;
  const little = b[tiff] === 0x49 && b[tiff + 1] === 0x49;
  if (!little && !(b[tiff] === 0x4d && b[tiff + 1] === 0x4d)) return undefined;
  const u16 = (p: number) => (little ? b[p]! | (b[p + 1]! << 8) : be16(b, p));
  const u32 = (p: number) => (little ? u16(p) + u16(p + 2) * 65536 : be32(b, p));
  if (u16(tiff + 2) !== 42) return undefined;
  const ifd = tiff + u32(tiff + 4);
  if (ifd + 2 > end) return undefined;
  const count = u16(ifd);
  if (ifd + 2 + count * 12 > end) return undefined;
  for (let i = 0; i < count; i++) {
    const e = ifd + 2 + i * 12;
    if (u16(e) !== 0x0112) continue;
    const value = u16(e + 8);
    // SHORT, one value, 1..8; anything else is left to libvips' own reading.
    return u16(e + 2) === 3 && u32(e + 4) === 1 && value >= 1 && value <= 8 ? value : undefined;
  }
  return 1;
}

/** Size from the first SOFn segment and the orientation from the EXIF APP1 before it. */
export function readJpegHeader(b: Uint8Array): ImageHeader | undefined {
  let p = 2;
  let orientation: number | undefined = 1;
  let exifSeen = false;
  while (p + 4 <= b.length) {
    if (b[p] !== 0xff) return undefined;
    const marker = b[p + 1]!;
    if (marker === 0xff) {
      p++; // fill byte
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      p += 2; // markers without a length
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return undefined; // scan data or end before any frame header
    const len = be16(b, p + 2);
    const start = p + 4,
      end = p + 2 + len;
    if (len < 2 || end > b.length) return undefined;
    if (marker === 0xe1 && end - start >= 6 && String.fromCharCode(...b.subarray(start, start + 6)) === 'Exif\0\0') {
      if (exifSeen) return undefined; // two EXIF blocks: which one libvips reads is its business
      exifSeen = true;
      orientation = exifOrientation(b, start, end);
      if (orientation === undefined) return undefined;
    }
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (len < 7) return undefined;
      const height = be16(b, start + 1),
        width = be16(b, start + 3);
      return width > 0 && height > 0 ? { width, height, orientation } : undefined;
    }
    p = end;
  }
  return undefined;
}
