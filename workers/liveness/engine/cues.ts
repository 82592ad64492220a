// Owns the hand-crafted image cues of the adopted face (colour spread, texture, sharpness, highlights):
// cheap statistics of the face box that print and replay attacks are known to shift (recapture compresses
// the colour gamut and the dynamic range, paper loses fine texture, gloss and screens add highlights).
// They are measured on the detector's box resampled to a fixed size, so they do not depend on resolution.
import { type Box, type RgbImage, sampleToTensor } from './image';

/** Side of the square patch the cues are measured on. */
export const CUE_PATCH = 64;

export const CUE_NAMES = ['satStd', 'chromaStd', 'hfRatio', 'highlightShare', 'dynRange', 'lbpEntropy'] as const;
export type CueName = (typeof CUE_NAMES)[number];
export type Cues = Record<CueName, number>;

/** LBP bin of each 8-bit neighbour code: its count of ones when uniform (<= 2 circular transitions), else 9. */
const LBP_BIN = Uint8Array.from({ length: 256 }, (_, code) => {
  let ones = 0,
    transitions = 0;
  for (let k = 0; k < 8; k++) {
    const bit = (code >> k) & 1;
    ones += bit;
    if (bit !== ((code >> ((k + 1) % 8)) & 1)) transitions++;
  }
  return transitions <= 2 ? ones : 9;
});

/**
 * - satStd: standard deviation of HSV saturation (0..1) over the face (Boulkenafet et al.: recaptured faces
 *   lose colour variety).
 * - chromaStd: sqrt(var Cb + var Cr) of YCbCr (BT.601, 0..255 units).
 * - hfRatio: ln((variance of the 4-neighbour Laplacian of luma + 1) / (variance of luma + 1)): fine detail
 *   relative to contrast, so lighting and exposure cancel out (blurred paper and screens have less).
 * - highlightShare: share of face pixels that are near-white and unsaturated (luma >= 230, saturation < 0.2):
 *   specular glare of glossy paper or a screen.
 * - dynRange: (97th - 3rd percentile of luma) / 255.
 * - lbpEntropy: entropy (bits) of the 10-bin histogram of uniform rotation-invariant LBP(8,1) codes of luma.
 */
export function faceCues(img: RgbImage, face: Box): Cues {
  const N = CUE_PATCH;
  const rgb = sampleToTensor(img, face, { width: N, height: N, layout: 'nhwc', order: 'rgb', mean: 0, std: 1 });
  const n = N * N;
  const luma = new Float32Array(n);
  let sS = 0,
    sS2 = 0,
    sCb = 0,
    sCb2 = 0,
    sCr = 0,
    sCr2 = 0,
    sY = 0,
    sY2 = 0,
    highlights = 0;
  for (let i = 0; i < n; i++) {
    const r = rgb[i * 3]!,
      g = rgb[i * 3 + 1]!,
      b = rgb[i * 3 + 2]!;
    const y = 0.299 * r + 0.587 * g + 0.114 * b;
    const cb = -0.168736 * r - 0.331264 * g + 0.5 * b;
    const cr = 0.5 * r - 0.418688 * g - 0.081312 * b;
    const mx = Math.max(r, g, b),
      mn = Math.min(r, g, b);
    const s = mx > 0 ? (mx - mn) / mx : 0;
    luma[i] = y;
    sY += y;
    sY2 += y * y;
    sS += s;
    sS2 += s * s;
    sCb += cb;
    sCb2 += cb * cb;
    sCr += cr;
    sCr2 += cr * cr;
    if (y >= 230 && s < 0.2) highlights++;
  }
  const variance = (s: number, s2: number) => Math.max(0, s2 / n - (s / n) ** 2);

  let sL = 0,
    sL2 = 0,
    m = 0;
  const lbp = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
  for (let y = 1; y < N - 1; y++) {
    for (let x = 1; x < N - 1; x++) {
      const i = y * N + x;
      const c = luma[i]!;
      const l = luma[i - 1]! + luma[i + 1]! + luma[i - N]! + luma[i + N]! - 4 * c;
      sL += l;
      sL2 += l * l;
      m++;
      // The 8 neighbours in circular order as bits; uniform codes (<= 2 transitions round the circle)
      // are binned by their count of ones, the rest share bin 9.
      const code =
        (luma[i - N - 1]! >= c ? 1 : 0) |
        (luma[i - N]! >= c ? 2 : 0) |
        (luma[i - N + 1]! >= c ? 4 : 0) |
        (luma[i + 1]! >= c ? 8 : 0) |
        (luma[i + N + 1]! >= c ? 16 : 0) |
        (luma[i + N]! >= c ? 32 : 0) |
        (luma[i + N - 1]! >= c ? 64 : 0) |
        (luma[i - 1]! >= c ? 128 : 0);
      lbp[LBP_BIN[code]!]!++;
    }
  }
  const lapVar = Math.max(0, sL2 / m - (sL / m) ** 2);
  let entropy = 0;
  for (const c of lbp) if (c > 0) entropy -= (c / m) * Math.log2(c / m);

  const sorted = luma.slice().sort();
  const pctl = (q: number) => sorted[Math.min(n - 1, Math.max(0, Math.round(q * (n - 1))))]!;

  return {
    satStd: Math.sqrt(variance(sS, sS2)),
    chromaStd: Math.sqrt(variance(sCb, sCb2) + variance(sCr, sCr2)),
    hfRatio: Math.log((lapVar + 1) / (variance(sY, sY2) + 1)),
    highlightShare: highlights / n,
    dynRange: (pctl(0.97) - pctl(0.03)) / 255,
    lbpEntropy: entropy,
  };
}
