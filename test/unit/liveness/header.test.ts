// Image sizes and JPEG orientation read in JS (workers/liveness/engine/header.ts) against libvips' reading
// (sharp's metadata) on the kinds of files clients send; and unreadable headers left to libvips.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import { estimateJpegQuality, readJpegHeader, readPngHeader } from '../../../workers/liveness/engine/header';
import { decodeImage } from '../../../workers/liveness/engine/decode';
import { modelsDir, pngBombHeader, selfieJpeg } from '../../fixtures/liveness/images';

async function expectSameAsSharp(bytes: Buffer, format: 'jpeg' | 'png'): Promise<void> {
  const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  const header = format === 'jpeg' ? readJpegHeader(bytes) : readPngHeader(bytes);
  expect(header, 'header read').to.not.equal(undefined);
  expect([header!.width, header!.height]).to.deep.equal([meta.width, meta.height]);
  if (format === 'jpeg') expect(header!.orientation).to.equal(meta.orientation ?? 1);
}

describe('image headers read in JS', () => {
  let selfie: Buffer;
  before(async () => {
    selfie = await selfieJpeg();
  });

  it('JPEG: baseline, progressive, greyscale, 4:4:4, odd sizes, the samples photo', async () => {
    const base = sharp(selfie);
    const files = [
      selfie,
      fs.readFileSync(path.join(modelsDir, 'fixtures', 'human-samples.jpg')),
      await base.clone().jpeg({ progressive: true }).toBuffer(),
      await base.clone().greyscale().jpeg().toBuffer(),
      await base.clone().jpeg({ chromaSubsampling: '4:4:4', quality: 95 }).toBuffer(),
      await base.clone().resize(333, 101, { fit: 'fill' }).jpeg({ optimiseCoding: false }).toBuffer(),
      await base.clone().withIccProfile('p3').jpeg().toBuffer(),
    ];
    for (const f of files) await expectSameAsSharp(f, 'jpeg');
  });

  it('JPEG: every EXIF orientation, big- and little-endian EXIF', async () => {
    for (let orientation = 1; orientation <= 8; orientation++) {
      const tagged = await sharp(selfie).withMetadata({ orientation }).jpeg().toBuffer();
      await expectSameAsSharp(tagged, 'jpeg');
      expect(readJpegHeader(tagged)!.orientation).to.equal(orientation);
    }
    // libvips writes little-endian ("II") EXIF; the same block in big-endian ("MM") must read the same.
    const ii = await sharp(selfie).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    const mm = bigEndianExif(ii);
    expect(mm.equals(ii)).to.equal(false);
    expect(readJpegHeader(mm)!.orientation).to.equal(6);
  });

  it('PNG: RGB, RGBA, grey, 16-bit, and a bomb header', async () => {
    const files = [
      await sharp(selfie).png().toBuffer(),
      await sharp(selfie).ensureAlpha().png().toBuffer(),
      await sharp(selfie).greyscale().png().toBuffer(),
      await sharp(selfie).resize(99, 77).png().toBuffer(),
      await sharp(selfie).toColourspace('rgb16').png().toBuffer(),
      pngBombHeader(50_000, 50_000),
    ];
    for (const f of files) await expectSameAsSharp(f, 'png');
  });

  it('leaves unreadable headers to libvips: the decoder still answers as before', async () => {
    expect(readJpegHeader(selfie.subarray(0, 40))).to.equal(undefined);
    expect(readJpegHeader(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2]))).to.equal(undefined);
    expect(readPngHeader(pngBombHeader(0, 10))).to.equal(undefined);
    const err = await decodeImage(selfie.subarray(0, 40), 'jpeg').catch((e: unknown) => e);
    expect(String(err)).to.match(/corrupt/);
  });

  it('decodes a rotated 12 MP JPEG at 1/8 with the original (upright) size from the JS header', async () => {
    // Stored 3024 wide and 4032 high, pixels turned anticlockwise; Orientation 6 turns them upright.
    const stored = await sharp(selfie).rotate(-90).toBuffer();
    const big = await sharp(stored).resize(3024, 4032).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    const img = await decodeImage(big, 'jpeg');
    expect([img.origWidth, img.origHeight, img.width, img.height, img.scale]).to.deep.equal([4032, 3024, 504, 378, 8]);
  });

  it('estimates the JPEG quality a file was saved at from its luminance table (libjpeg, progressive, greyscale)', async () => {
    const base = sharp(selfie);
    for (const q of [20, 30, 50, 75, 90, 95]) {
      expect(estimateJpegQuality(await base.clone().jpeg({ quality: q }).toBuffer()), `q${q}`).to.be.closeTo(q, 1);
      expect(estimateJpegQuality(await base.clone().jpeg({ quality: q, progressive: true }).toBuffer()), `progressive q${q}`).to.be.closeTo(q, 1);
    }
    expect(estimateJpegQuality(await base.clone().greyscale().jpeg({ quality: 40 }).toBuffer())).to.be.closeTo(40, 1);
    // Below ~q25 baseline tables clip at 255: the estimate stays low, which is all the gate needs.
    expect(estimateJpegQuality(await base.clone().jpeg({ quality: 5 }).toBuffer())).to.be.below(20);
  });

  it('has no JPEG quality for a PNG or a JPEG cut before its tables', async () => {
    expect(estimateJpegQuality(await sharp(selfie).png().toBuffer())).to.equal(undefined);
    expect(estimateJpegQuality(selfie.subarray(0, 4))).to.equal(undefined);
  });
});

/** Rewrites a JPEG's EXIF IFD0 (as libvips writes it: little-endian) in big-endian byte order. */
function bigEndianExif(jpeg: Buffer): Buffer {
  const out = Buffer.from(jpeg);
  const tiff = out.indexOf('Exif\0\0', 0, 'latin1') + 6;
  expect(out.toString('latin1', tiff, tiff + 2)).to.equal('II');
  const ifd = tiff + out.readUInt32LE(tiff + 4);
  const count = out.readUInt16LE(ifd);
  out.write('MM', tiff, 'latin1');
  out.writeUInt16BE(42, tiff + 2);
  out.writeUInt32BE(ifd - tiff, tiff + 4);
  out.writeUInt16BE(count, ifd);
  for (let i = 0; i < count; i++) {
    const e = ifd + 2 + i * 12;
    const [tag, type, n] = [out.readUInt16LE(e), out.readUInt16LE(e + 2), out.readUInt32LE(e + 4)];
    out.writeUInt16BE(tag, e);
    out.writeUInt16BE(type, e + 2);
    out.writeUInt32BE(n, e + 4);
    // Only the orientation's value is rewritten: the test reads nothing else.
    if (tag === 0x0112) out.writeUInt16BE(out.readUInt16LE(e + 8), e + 8);
  }
  return out;
}
