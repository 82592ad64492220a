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

/**
 * The marker segments of a JPEG before its first scan, in order: marker byte and the payload's [start, end).
 * Fill bytes and markers without a length are skipped; it stops at the first scan or end of image, or at
 * anything malformed (a byte that is not a marker, a length past the file).
 */
function* jpegSegments(b: Uint8Array): Generator<{ marker: number; start: number; end: number }> {
  let p = 2;
  while (p + 4 <= b.length) {
    if (b[p] !== 0xff) return;
    const marker = b[p + 1]!;
    if (marker === 0xff) {
      p++; // fill byte
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      p += 2; // markers without a length
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return; // scan data or end of image
    const len = be16(b, p + 2);
    const end = p + 2 + len;
    if (len < 2 || end > b.length) return;
    yield { marker, start: p + 4, end };
    p = end;
  }
}

/** Size from the first SOFn segment and the orientation from the EXIF APP1 before it. */
export function readJpegHeader(b: Uint8Array): ImageHeader | undefined {
  let orientation: number | undefined = 1;
  let exifSeen = false;
  for (const { marker, start, end } of jpegSegments(b)) {
    if (marker === 0xe1 && end - start >= 6 && String.fromCharCode(...b.subarray(start, start + 6)) === 'Exif\0\0') {
      if (exifSeen) return undefined; // two EXIF blocks: which one libvips reads is its business
      exifSeen = true;
      orientation = exifOrientation(b, start, end);
      if (orientation === undefined) return undefined;
    }
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (end - start < 5) return undefined;
      const height = be16(b, start + 1),
        width = be16(b, start + 3);
      return width > 0 && height > 0 ? { width, height, orientation } : undefined;
    }
  }
  return undefined;
}

/** IJG's (libjpeg's) luminance quantisation table at quality 50, the base every quality setting scales. */
const IJG_LUMA_SUM = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103,
  77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
].reduce((a, b) => a + b, 0);

/**
 * The JPEG quality (1..100, IJG scale) the file was encoded at, estimated from its luminance quantisation table
 * (DQT table 0, read before the first scan): libjpeg, phones and browsers scale IJG's base table by
 * S = q < 50 ? 5000 / q : 200 - 2q percent, so the tables' sum ratio gives S and S gives q (within about one
 * step; an encoder with its own tables gets the IJG quality of the same average step). Undefined when the file
 * has no readable table 0.
 */
export function estimateJpegQuality(b: Uint8Array): number | undefined {
  for (const { marker, start, end } of jpegSegments(b)) {
    if (marker !== 0xdb) continue;
    // One DQT segment may hold several tables: Pq/Tq byte, then 64 values of 8 (Pq 0) or 16 bits (Pq 1).
    for (let q = start; q < end;) {
      const precision = b[q]! >> 4,
        id = b[q]! & 15;
      const size = precision ? 128 : 64;
      if (q + 1 + size > end) return undefined;
      if (id === 0) {
        let sum = 0;
        for (let i = 0; i < 64; i++) sum += precision ? be16(b, q + 1 + 2 * i) : b[q + 1 + i]!;
        const scale = (100 * sum) / IJG_LUMA_SUM;
        const quality = scale <= 100 ? (200 - scale) / 2 : 5000 / scale;
        return Math.max(1, Math.min(100, Math.round(quality)));
      }
      q += 1 + size;
    }
  }
  return undefined;
}
