// Owns the in-memory image type and the pixel operations the models need (crop + resize into tensors, luma).
// Done in plain TypedArray loops: one sharp pipeline per crop would cost more than the resampling itself.

/** A decoded, EXIF-oriented RGB image, possibly shrunk on load; `scale` maps its pixels to the original's. */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
  /** Size of the oriented original image, in pixels. */
  origWidth: number;
  origHeight: number;
  /** origWidth / width (1 when decoded at full size). */
  scale: number;
}

/** Axis-aligned box in floating-point pixel coordinates of some image. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export type ChannelOrder = 'rgb' | 'bgr';
export type Layout = 'nchw' | 'nhwc';

export interface TensorSpec {
  width: number;
  height: number;
  layout: Layout;
  order: ChannelOrder;
  /** value = (pixel - mean) / std, per channel in the tensor's channel order. */
  mean: readonly [number, number, number] | number;
  std: readonly [number, number, number] | number;
  /** Mirror horizontally (test-time augmentation). */
  flip?: boolean;
  /** Average several bilinear taps per output pixel when shrinking more than 2x (default true). */
  antialias?: boolean;
  /** Outside the image: repeat edge pixels (default) or read black (letterboxing). */
  border?: 'replicate' | 'black';
  /**
   * Clamp taps to the source box's own pixels rather than the image's, as cv2.resize does on an ROI
   * (a box with integer corners whose right/bottom pixels are included).
   */
  clampToBox?: boolean;
}

/**
 * Samples `src` (a box of the image, may extend past it: edge pixels repeat) into a float tensor.
 * Bilinear with half-pixel centres like cv2.resize INTER_LINEAR, which is what these models were trained
 * with; when shrinking more than 2x it averages a small grid of bilinear taps instead, so a big crop
 * does not alias into moiré the model never saw.
 */
export function sampleToTensor(img: RgbImage, src: Box, spec: TensorSpec, out?: Float32Array): Float32Array {
  const { width: ow, height: oh } = spec;
  const plane = ow * oh;
  const dst = out ?? new Float32Array(plane * 3);
  const taps = spec.antialias === false ? 1 : Math.max(1, Math.min(4, Math.floor(Math.max(src.w / ow, src.h / oh) / 2)));
  const mean = typeof spec.mean === 'number' ? [spec.mean, spec.mean, spec.mean] : spec.mean;
  const std = typeof spec.std === 'number' ? [spec.std, spec.std, spec.std] : spec.std;
  const bgr = spec.order === 'bgr';
  const { data, width: iw, height: ih } = img;
  const black = spec.border === 'black';
  // Sampling tables, one entry per (output coordinate, tap): source pixel offsets and weights, computed
  // once per axis so the inner loop is table lookups and multiply-adds (3x faster than per-pixel math).
  const axis = (n: number, start: number, step: number, size: number, stride: number, lo: number, hi: number) => {
    const i0 = new Int32Array(n * taps),
      i1 = new Int32Array(n * taps),
      w = new Float32Array(n * taps);
    const ok = new Uint8Array(n * taps);
    for (let o = 0; o < n; o++) {
      for (let t = 0; t < taps; t++) {
        const u = start + (o + (t + 0.5) / taps) * step - 0.5;
        const k = o * taps + t;
        ok[k] = black && (u < -0.5 || u > size - 0.5) ? 0 : 1;
        const f = Math.min(hi, Math.max(lo, u));
        const f0 = Math.floor(f);
        i0[k] = f0 * stride;
        i1[k] = Math.min(hi, f0 + 1) * stride;
        w[k] = f - f0;
      }
    }
    return { i0, i1, w, ok };
  };
  const roi = spec.clampToBox === true;
  const X = axis(ow, src.x, src.w / ow, iw, 3, roi ? Math.max(0, src.x) : 0, roi ? Math.min(iw - 1, src.x + src.w - 1) : iw - 1);
  const Y = axis(oh, src.y, src.h / oh, ih, iw * 3, roi ? Math.max(0, src.y) : 0, roi ? Math.min(ih - 1, src.y + src.h - 1) : ih - 1);
  const inv = 1 / (taps * taps);
  const m0 = mean[0],
    m1 = mean[1],
    m2 = mean[2];
  const k0 = 1 / std[0],
    k1 = 1 / std[1],
    k2 = 1 / std[2];
  const nchw = spec.layout === 'nchw';
  if (taps === 1) {
    sampleOneTap(data, X, Y, ow, oh, { bgr, nchw, flip: spec.flip === true, m0, m1, m2, k0, k1, k2 }, dst);
    return dst;
  }
  for (let oy = 0; oy < oh; oy++) {
    for (let ox = 0; ox < ow; ox++) {
      let r = 0,
        g = 0,
        b = 0;
      for (let ty = 0; ty < taps; ty++) {
        const ky = oy * taps + ty;
        if (!Y.ok[ky]) continue;
        const ra = Y.i0[ky]!,
          rb = Y.i1[ky]!,
          wy = Y.w[ky]!;
        for (let tx = 0; tx < taps; tx++) {
          const kx = ox * taps + tx;
          if (!X.ok[kx]) continue;
          const ca = X.i0[kx]!,
            cb = X.i1[kx]!,
            wx = X.w[kx]!;
          const a = ra + ca,
            bb = ra + cb,
            c = rb + ca,
            d = rb + cb;
          const w00 = (1 - wx) * (1 - wy),
            w01 = wx * (1 - wy),
            w10 = (1 - wx) * wy,
            w11 = wx * wy;
          r += data[a]! * w00 + data[bb]! * w01 + data[c]! * w10 + data[d]! * w11;
          g += data[a + 1]! * w00 + data[bb + 1]! * w01 + data[c + 1]! * w10 + data[d + 1]! * w11;
          b += data[a + 2]! * w00 + data[bb + 2]! * w01 + data[c + 2]! * w10 + data[d + 2]! * w11;
        }
      }
      r *= inv;
      g *= inv;
      b *= inv;
      const v0 = ((bgr ? b : r) - m0) * k0,
        v1 = (g - m1) * k1,
        v2 = ((bgr ? r : b) - m2) * k2;
      const p = oy * ow + (spec.flip ? ow - 1 - ox : ox);
      if (nchw) {
        dst[p] = v0;
        dst[plane + p] = v1;
        dst[2 * plane + p] = v2;
      } else {
        dst[p * 3] = v0;
        dst[p * 3 + 1] = v1;
        dst[p * 3 + 2] = v2;
      }
    }
  }
  return dst;
}

interface AxisTable {
  i0: Int32Array;
  i1: Int32Array;
  w: Float32Array;
  ok: Uint8Array;
}

interface Normalise {
  bgr: boolean;
  nchw: boolean;
  flip: boolean;
  m0: number;
  m1: number;
  m2: number;
  k0: number;
  k1: number;
  k2: number;
}

/**
 * sampleToTensor's loop for one bilinear tap per output pixel (no anti-aliasing needed: the detectors'
 * inputs and most crops). The same arithmetic in the same order as the general loop, so the same floats,
 * without its per-tap loops and checks: about 2x faster, and it runs on every frame.
 */
function sampleOneTap(data: Uint8Array, X: AxisTable, Y: AxisTable, ow: number, oh: number, n: Normalise, dst: Float32Array): void {
  const plane = ow * oh;
  const { bgr, nchw, flip, m0, m1, m2, k0, k1, k2 } = n;
  const xi0 = X.i0,
    xi1 = X.i1,
    xw = X.w,
    xok = X.ok;
  for (let oy = 0; oy < oh; oy++) {
    const rowOk = Y.ok[oy] === 1;
    const ra = Y.i0[oy]!,
      rb = Y.i1[oy]!,
      wy = Y.w[oy]!;
    const row = oy * ow;
    for (let ox = 0; ox < ow; ox++) {
      let r = 0,
        g = 0,
        b = 0;
      if (rowOk && xok[ox] === 1) {
        const ca = xi0[ox]!,
          cb = xi1[ox]!,
          wx = xw[ox]!;
        const a = ra + ca,
          bb = ra + cb,
          c = rb + ca,
          d = rb + cb;
        const w00 = (1 - wx) * (1 - wy),
          w01 = wx * (1 - wy),
          w10 = (1 - wx) * wy,
          w11 = wx * wy;
        r = data[a]! * w00 + data[bb]! * w01 + data[c]! * w10 + data[d]! * w11;
        g = data[a + 1]! * w00 + data[bb + 1]! * w01 + data[c + 1]! * w10 + data[d + 1]! * w11;
        b = data[a + 2]! * w00 + data[bb + 2]! * w01 + data[c + 2]! * w10 + data[d + 2]! * w11;
      }
      const v0 = ((bgr ? b : r) - m0) * k0,
        v1 = (g - m1) * k1,
        v2 = ((bgr ? r : b) - m2) * k2;
      const p = row + (flip ? ow - 1 - ox : ox);
      if (nchw) {
        dst[p] = v0;
        dst[plane + p] = v1;
        dst[2 * plane + p] = v2;
      } else {
        dst[p * 3] = v0;
        dst[p * 3 + 1] = v1;
        dst[p * 3 + 2] = v2;
      }
    }
  }
}

/** Rec. 601 luma of the pixels inside `box` (clamped to the image); 0..255. */
export function meanLuma(img: RgbImage, box: Box): number {
  const x0 = Math.max(0, Math.floor(box.x)),
    y0 = Math.max(0, Math.floor(box.y));
  const x1 = Math.min(img.width, Math.ceil(box.x + box.w)),
    y1 = Math.min(img.height, Math.ceil(box.y + box.h));
  if (x1 <= x0 || y1 <= y0) return 0;
  let sum = 0;
  for (let y = y0; y < y1; y++) {
    let p = (y * img.width + x0) * 3;
    for (let x = x0; x < x1; x++, p += 3) {
      sum += 0.299 * img.data[p]! + 0.587 * img.data[p + 1]! + 0.114 * img.data[p + 2]!;
    }
  }
  return sum / ((x1 - x0) * (y1 - y0));
}

/** Rec. 601 luma of the w x h pixels from (x0, y0), unresampled, row-major; the caller keeps them inside the image. */
export function lumaCrop(img: RgbImage, x0: number, y0: number, w: number, h: number): Float32Array {
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    let p = ((y + y0) * img.width + x0) * 3;
    for (let x = 0; x < w; x++, p += 3) out[y * w + x] = 0.299 * img.data[p]! + 0.587 * img.data[p + 1]! + 0.114 * img.data[p + 2]!;
  }
  return out;
}

/** Grey (luma) patch of `box` resampled to size x size, values 0..255. */
export function lumaPatch(img: RgbImage, box: Box, size: number): Float32Array {
  const rgb = sampleToTensor(img, box, { width: size, height: size, layout: 'nhwc', order: 'rgb', mean: 0, std: 1 });
  const out = new Float32Array(size * size);
  for (let i = 0; i < out.length; i++) {
    out[i] = 0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!;
  }
  return out;
}

/** Clockwise quarter turns of a raster (0: as it is). */
export type QuarterTurns = 0 | 1 | 2 | 3;

/**
 * Pixels (row-major, `channels` interleaved values each) of a W x H raster turned clockwise by `turns`
 * quarters into `out` (H x W for odd turns). Shared by the working image and BlazeFace's input tensor.
 */
export function turnPixels<T extends Uint8Array | Float32Array>(src: T, W: number, H: number, channels: number, turns: QuarterTurns, out: T): T {
  const w = turns % 2 === 1 ? H : W;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      // Destination of source pixel (x, y) after `turns` clockwise quarter turns.
      const [dx, dy] = turns === 1 ? [H - 1 - y, x] : turns === 2 ? [W - 1 - x, H - 1 - y] : turns === 3 ? [y, W - 1 - x] : [x, y];
      const s = (y * W + x) * channels,
        d = (dy * w + dx) * channels;
      for (let c = 0; c < channels; c++) out[d + c] = src[s + c]!;
    }
  }
  return out;
}
