// The working image a JPEG is decoded to (workers/liveness/engine/decode.ts): how much it is shrunk, and that a
// phone-sized photo comes out at the size the rule gives, with its original size kept for the rectangles.
import { expect } from 'chai';
import sharp from 'sharp';
import { decodeImage, DEFAULT_DECODE_OPTIONS, workingShrink } from '../../../workers/liveness/engine/decode';
import { selfieJpeg } from '../../fixtures/liveness/images';

const MIN = DEFAULT_DECODE_OPTIONS.minWorkingSide;

describe('the working image of a JPEG', () => {
  it('is shrunk by s + 1 for the largest DCT scale 1/s that keeps the long side >= 480, never less than by powers of two', () => {
    const cases: Array<[number, number]> = [
      [640, 1], // under twice the minimum: decoded as it is
      [959, 1],
      [960, 2], // no DCT scale fits (960 / 3 < 480): whole, halved as before
      [1439, 2],
      [1440, 3], // loaded at 1/2, reduced to 480
      [1600, 3], // 533
      [2000, 4], // 500 by powers of two; loaded at 1/2 either way
      [3000, 5], // loaded at 1/4: 600 (by powers of two, 750 loaded at 1/2)
      [4032, 8], // 504 by powers of two, loaded at 1/4 (1/8 would leave 448)
      [8000, 9], // loaded at 1/8: 888
    ];
    for (const [side, shrink] of cases) expect(workingShrink(side, MIN), `long side ${side}`).to.equal(shrink);
  });

  it('keeps the long side at or above the minimum and below twice it once shrunk (up to 40 MP: 7300 px)', () => {
    for (let side = 2 * MIN; side <= 7300; side += 7) {
      const working = Math.floor(side / workingShrink(side, MIN));
      expect(working, `long side ${side}`)
        .to.be.at.least(MIN)
        .and.below(2 * MIN);
    }
  });

  it('decodes a 1600x1200 phone photo to 533x400 and keeps its original size for the rectangles', async () => {
    const photo = await sharp(await selfieJpeg())
      .resize(1600, 1200)
      .jpeg({ quality: 95 })
      .toBuffer();
    const img = await decodeImage(photo, 'jpeg');
    expect([img.width, img.height, img.origWidth, img.origHeight]).to.deep.equal([533, 400, 1600, 1200]);
    expect(img.scale).to.be.closeTo(1600 / 533, 1e-9);
    // The same picture as a plain resize of the whole photo, within JPEG's and the two filters' differences.
    const plain = await sharp(photo).resize(533, 400, { fit: 'fill', fastShrinkOnLoad: false }).raw().toBuffer();
    let sum = 0;
    for (let i = 0; i < plain.length; i++) sum += Math.abs(plain[i]! - img.data[i]!);
    expect(sum / plain.length).to.be.below(2);
  });
});
