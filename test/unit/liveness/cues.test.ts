// The hand-crafted face cues the fusion weighs (cues.ts), on synthetic images whose values can be worked out
// by hand: a cue computed wrongly shifts every score, so each formula is pinned here.
import { expect } from 'chai';
import { CUE_NAMES, faceCues } from '../../../workers/liveness/engine/cues';
import type { RgbImage } from '../../../workers/liveness/engine/image';

function image(size: number, pixel: (x: number, y: number) => [number, number, number]): RgbImage {
  const data = new Uint8Array(size * size * 3);
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) data.set(pixel(x, y), (y * size + x) * 3);
  return { data, width: size, height: size, origWidth: size, origHeight: size, scale: 1 };
}

// A 64x64 box on a 64x64 image samples every pixel exactly once (half-pixel centres), so the patch is the image.
const whole = (size: number) => ({ x: 0, y: 0, w: size, h: size });
const RED: [number, number, number] = [255, 0, 0];
const GREY: [number, number, number] = [100, 100, 100];

describe('liveness face cues', () => {
  it('are all zero on a flat grey face: no colour, no detail, no highlight, no range, one LBP pattern', () => {
    const c = faceCues(
      image(64, () => [128, 128, 128]),
      whole(64),
    );
    expect(Object.keys(c)).to.have.members([...CUE_NAMES]);
    for (const name of CUE_NAMES) expect(c[name], name).to.be.closeTo(0, 1e-9);
  });

  it('counts near-white unsaturated pixels as highlights', () => {
    const c = faceCues(
      image(64, (x) => (x < 16 ? [250, 250, 245] : [180, 150, 130])),
      whole(64),
    );
    expect(c.highlightShare).to.be.closeTo(0.25, 1e-9);
  });

  it('measures saturation spread, chroma spread and the luma range of a half red, half grey face', () => {
    const c = faceCues(
      image(64, (x) => (x < 32 ? RED : GREY)),
      whole(64),
    );
    // Saturation is 1 on red and 0 on grey: standard deviation 0.5.
    expect(c.satStd).to.be.closeTo(0.5, 1e-6);
    // Grey has Cb = Cr = 0; red has Cb = -0.168736 x 255, Cr = 0.5 x 255: each spread is half the gap.
    expect(c.chromaStd).to.be.closeTo(Math.hypot(0.168736 * 255, 0.5 * 255) / 2, 1e-3);
    // 3rd percentile is red's luma (0.299 x 255), 97th grey's (100).
    expect(c.dynRange).to.be.closeTo((100 - 0.299 * 255) / 255, 1e-4);
    expect(c.highlightShare).to.equal(0);
  });

  it('does not depend on the resolution the face was captured at', () => {
    const small = faceCues(
      image(64, (x) => (x < 32 ? RED : GREY)),
      whole(64),
    );
    const large = faceCues(
      image(128, (x) => (x < 64 ? RED : GREY)),
      whole(128),
    );
    for (const name of ['satStd', 'chromaStd', 'dynRange', 'highlightShare'] as const) expect(large[name], name).to.be.closeTo(small[name], 1e-4);
  });

  it('finds the most detail and two LBP patterns (1 bit of entropy) on a one-pixel checkerboard', () => {
    const c = faceCues(
      image(64, (x, y) => ((x + y) % 2 === 0 ? [0, 0, 0] : [255, 255, 255])),
      whole(64),
    );
    // Laplacian +-4 x 255 everywhere (variance 1020^2); luma variance 127.5^2.
    expect(c.hfRatio).to.be.closeTo(Math.log((1020 ** 2 + 1) / (127.5 ** 2 + 1)), 1e-3);
    // Black centres see 8 brighter neighbours (uniform, 8 ones); white centres alternate (8 transitions, non-uniform).
    expect(c.lbpEntropy).to.be.closeTo(1, 1e-9);
    expect(c.satStd).to.equal(0);
  });

  it('gives the same values for the same pixels every time', () => {
    let seed = 3;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
    const img = image(200, () => [rand(), rand(), rand()]);
    const box = { x: 20.5, y: 31.25, w: 120, h: 140 };
    expect(faceCues(img, box)).to.deep.equal(faceCues(img, box));
  });
});
