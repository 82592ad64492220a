// How the photo was taken must not flip the verdict: the known-answer photos as a close-up (the same frame cropped
// to 1/1.5 of each side around its centre, whole face kept, no resampling) and rolled +-20 degrees (cut so no empty
// corner shows) keep the verdict they get as taken.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import type { Rectangle } from '../../../shared/queues/contracts';
import { LivenessEngine } from '../../../workers/liveness/engine';
import { modelsDir } from '../../fixtures/liveness/images';

const dir = path.join(__dirname, '..', '..', 'fixtures', 'liveness', 'known-answers');
/** The documented default threshold (FAKE_THRESHOLD). */
const THRESHOLD = 0.15;
const PHOTOS = [
  { file: 'silentface-live-T1.jpg', live: true },
  { file: 'khanhn-live.jpg', live: true },
  { file: 'doubango-live-selfie.jpg', live: true },
  { file: 'silentface-print-F1.jpg', live: false },
  { file: 'silentface-screen-F2.jpg', live: false },
  { file: 'khanhn-screen.jpg', live: false },
];

/** A 1/f crop of each side around the centre, moved as little as needed to keep the face box whole. */
async function closeUp(shown: Buffer, face: Rectangle, f: number): Promise<Buffer> {
  const { width: W, height: H } = await sharp(shown).metadata();
  const [w, h] = [Math.round(W / f), Math.round(H / f)];
  const x = Math.max(0, Math.min(Math.max(Math.round((W - w) / 2), face.x + face.width - w), face.x));
  const y = Math.max(0, Math.min(Math.max(Math.round((H - h) / 2), face.y + face.height - h), face.y));
  return sharp(shown).extract({ left: x, top: y, width: w, height: h }).jpeg({ quality: 95 }).toBuffer();
}

/** Rolled `deg` about the centre, then the largest centred cut of the frame's aspect with no empty corner. */
async function rolled(shown: Buffer, deg: number): Promise<Buffer> {
  const { width: W, height: H } = await sharp(shown).metadata();
  const t = (Math.abs(deg) * Math.PI) / 180;
  const k = Math.min(W / (W * Math.cos(t) + H * Math.sin(t)), H / (W * Math.sin(t) + H * Math.cos(t)));
  const [w, h] = [Math.floor(W * k), Math.floor(H * k)];
  const { data, info } = await sharp(shown).rotate(deg).raw().toBuffer({ resolveWithObject: true });
  return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
    .extract({ left: Math.floor((info.width - w) / 2), top: Math.floor((info.height - h) / 2), width: w, height: h })
    .jpeg({ quality: 95 })
    .toBuffer();
}

describe('liveness engine: close-ups and roll', () => {
  let engine: LivenessEngine;
  before(async () => {
    engine = await LivenessEngine.load({ modelsDir, intraOpThreads: 1, fakeThreshold: THRESHOLD });
  });

  for (const p of PHOTOS) {
    it(`calls ${p.file} ${p.live ? 'live' : 'a spoof'} cropped to 1/1.5 of each side and rolled +-20 degrees`, async () => {
      const shown = await sharp(fs.readFileSync(path.join(dir, p.file)))
        .rotate()
        .toBuffer();
      const asTaken = await engine.analyze(shown, 'jpeg');
      const variants = {
        'close-up 1/1.5': await closeUp(shown, asTaken.faceRectArea, 1.5),
        'rolled +20°': await rolled(shown, 20),
        'rolled -20°': await rolled(shown, -20),
      };
      for (const [name, bytes] of Object.entries(variants)) {
        const r = await engine.analyze(bytes, 'jpeg');
        expect(r.isFakeFace, name).to.equal(!p.live);
        if (p.live) expect(r.isFakeLikelihood, name).to.be.lessThan(THRESHOLD);
        else expect(r.isFakeLikelihood, name).to.be.greaterThan(THRESHOLD);
      }
    });
  }
});
