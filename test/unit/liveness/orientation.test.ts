// Frames that reach the engine turned (an upload path that strips the EXIF orientation tag without applying it):
// the known-answer photos turned 90/180/270 degrees must be scored as their upright selves, with the face box
// reported in the turned frame's own pixels, and an upright photo must not pay for the search.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import type { Rectangle } from '../../../shared/queues/contracts';
import { LivenessEngine } from '../../../workers/liveness/engine';
import { boxBeforeTurn, type QuarterTurns, turnImage } from '../../../workers/liveness/engine/orientation';
import type { RgbImage } from '../../../workers/liveness/engine/image';
import { modelsDir, selfieJpeg } from '../../fixtures/liveness/images';

const dir = path.join(__dirname, '..', '..', 'fixtures', 'liveness', 'known-answers');
/** The documented default threshold (FAKE_THRESHOLD). */
const THRESHOLD = 0.15;
const LIVE = ['silentface-live-T1.jpg', 'khanhn-live.jpg', 'doubango-live-selfie.jpg'];
const SPOOF = ['silentface-print-F1.jpg', 'silentface-screen-F2.jpg', 'khanhn-screen.jpg'];

/** The upright frame's rectangle where it lands once a W x H frame is turned `deg` clockwise. */
function turnedRect(r: Rectangle, deg: number, W: number, H: number): Rectangle {
  if (deg === 90) return { x: H - r.y - r.height, y: r.x, width: r.height, height: r.width };
  if (deg === 180) return { x: W - r.x - r.width, y: H - r.y - r.height, width: r.width, height: r.height };
  return { x: r.y, y: W - r.x - r.width, width: r.height, height: r.width };
}

function iou(a: Rectangle, b: Rectangle): number {
  const ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  return (ix * iy) / (a.width * a.height + b.width * b.height - ix * iy);
}

/**
 * The photo as displayed (its own EXIF orientation applied) turned `deg` clockwise, re-encoded without any
 * orientation tag (sharp writes no metadata unless asked).
 */
async function turned(bytes: Buffer, deg: number): Promise<Buffer> {
  const shown = await sharp(bytes).rotate().toBuffer();
  const out = await sharp(shown).rotate(deg).jpeg({ quality: 95 }).toBuffer();
  expect((await sharp(out).metadata()).orientation).to.equal(undefined);
  return out;
}

describe('liveness engine: frames that are not upright', () => {
  let engine: LivenessEngine;
  before(async () => {
    engine = await LivenessEngine.load({ modelsDir, intraOpThreads: 1, fakeThreshold: THRESHOLD });
  });

  for (const [files, label] of [
    [LIVE, 'live'],
    [SPOOF, 'spoof'],
  ] as const) {
    for (const file of files) {
      it(`scores ${file} turned 90/180/270 degrees without EXIF as its upright self (${label}), the face box in the turned frame`, async () => {
        const bytes = fs.readFileSync(path.join(dir, file));
        const { width: W, height: H } = await sharp(await sharp(bytes).rotate().toBuffer()).metadata();
        const upright = await engine.analyzeDetailed(bytes, 'jpeg');
        for (const deg of [90, 180, 270]) {
          const { result, features } = await engine.analyzeDetailed(await turned(bytes, deg), 'jpeg');
          expect(features.orientation, `${deg}°`).to.deep.equal({ turns: (4 - deg / 90) % 4, searched: true, upright: true });
          if (label === 'live') expect(result.isFakeLikelihood, `${deg}°`).to.be.lessThan(THRESHOLD);
          else expect(result.isFakeLikelihood, `${deg}°`).to.be.greaterThan(THRESHOLD);
          expect(result.isFakeFace).to.equal(label === 'spoof');
          // Same face, same verdict inputs: each model's logit near the upright frame's. Not equal: the turned copy is
          // re-encoded (q95) and detected afresh, which moves a logit by up to about 1.5; a sideways face moves them 5-10.
          for (const [m, v] of Object.entries(upright.features.spoofLogits)) expect(features.spoofLogits[m], `${m} at ${deg}°`).to.be.closeTo(v, 2);
          expect(iou(result.faceRectArea, turnedRect(upright.result.faceRectArea, deg, W, H)), `box at ${deg}°`).to.be.greaterThan(0.9);
          expect(result.stages).to.include.keys('orient');
        }
      });
    }
  }

  it('does not search for the orientation of upright photos (no orient stage)', async () => {
    for (const bytes of [await selfieJpeg(), ...[...LIVE, ...SPOOF].map((f) => fs.readFileSync(path.join(dir, f)))]) {
      const { result, features } = await engine.analyzeDetailed(bytes, 'jpeg');
      expect(features.orientation).to.deep.equal({ turns: 0, searched: false, upright: true });
      expect(result.stages).to.have.all.keys('decode', 'detect', 'spoof', 'total');
    }
  });
});

describe('quarter turns of a working image', () => {
  // A 3 x 2 image whose pixel values are its index, so every move is visible.
  const img: RgbImage = { data: Uint8Array.from({ length: 18 }, (_, i) => Math.floor(i / 3)), width: 3, height: 2, origWidth: 6, origHeight: 4, scale: 2 };

  it('turns clockwise, swapping the sizes on odd turns, and four turns give the image back', () => {
    const q = turnImage(img, 1);
    expect([q.width, q.height, q.origWidth, q.origHeight, q.scale]).to.deep.equal([2, 3, 4, 6, 2]);
    // Clockwise: the bottom-left pixel (index 3) comes to the top-left.
    expect(Array.from(q.data.filter((_, i) => i % 3 === 0))).to.deep.equal([3, 0, 4, 1, 5, 2]);
    let back = img;
    for (let k = 0; k < 4; k++) back = turnImage(back, 1);
    expect(Array.from(back.data)).to.deep.equal(Array.from(img.data));
  });

  it('maps a box of the turned image back onto the same pixels of the image as sent', () => {
    for (const turns of [1, 2, 3] as QuarterTurns[]) {
      const t = turnImage(img, turns);
      for (let y = 0; y < t.height; y++) {
        for (let x = 0; x < t.width; x++) {
          const b = boxBeforeTurn({ x, y, w: 1, h: 1 }, turns, img);
          expect([b.w, b.h]).to.deep.equal([1, 1]);
          expect(img.data[(b.y * img.width + b.x) * 3], `turns ${turns} (${x}, ${y})`).to.equal(t.data[(y * t.width + x) * 3]);
        }
      }
    }
  });
});
