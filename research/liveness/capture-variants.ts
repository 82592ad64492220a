// Owns the photometric capture variants beyond eval-robustness.ts's originals — defocus, dim light with sensor
// noise, heavy JPEG compression, a small photo — as parameterised recipes, and the seeded random draws of every
// recipe that the training stack learns invariance from (research/liveness/train/). The evaluation uses fixed
// parameters; training draws its own from ranges around them, per frame, from a seed.
import sharp, { type Sharp } from 'sharp';
import type { Rectangle } from '../../shared/queues/contracts';
import { seededRandom } from '../stats';

/** The oriented frame's pixels, the bytes as taken and the face the engine found on them. */
export interface Source {
  /** The frame's identity (`dataset|file`): what a per-frame random draw is seeded by. */
  id: string;
  bytes: Buffer;
  format: 'jpeg' | 'png';
  raw: Buffer;
  width: number;
  height: number;
  face?: Rectangle;
}

export interface Variant {
  name: string;
  /** What the variant stands for (the table's middle column). */
  what: string;
  /** The altered frame, or undefined when it cannot be made with the whole face kept in the frame. */
  make: (src: Source) => Promise<Buffer | undefined>;
}

export const fromRaw = (src: Source) => sharp(src.raw, { raw: { width: src.width, height: src.height, channels: 3 } });
export const jpeg95 = (s: Sharp) => s.jpeg({ quality: 95 }).toBuffer();

/** Whether the rectangle lies inside the crop (x, y, w, h), all in the same pixels. */
const inside = (r: Rectangle, x: number, y: number, w: number, h: number) => r.x >= x && r.y >= y && r.x + r.width <= x + w && r.y + r.height <= y + h;

/** A crop of 1/f of each side around the frame's centre, shifted as little as needed to keep the whole face. */
export function closeUp(f: number): Variant {
  return {
    name: `crop 1/${f}`,
    what: 'close-up: centre crop, no resampling',
    make: async (src) => {
      const w = Math.round(src.width / f),
        h = Math.round(src.height / f);
      let x = Math.round((src.width - w) / 2),
        y = Math.round((src.height - h) / 2);
      const face = src.face;
      if (!face || face.width > w || face.height > h) return undefined;
      x = Math.min(Math.max(x, face.x + face.width - w), face.x);
      y = Math.min(Math.max(y, face.y + face.height - h), face.y);
      return jpeg95(fromRaw(src).extract({ left: x, top: y, width: w, height: h }));
    },
  };
}

/**
 * The largest centred rectangle of the frame's aspect that shows no empty corner once the frame is turned by
 * `deg` about its centre: scale s of each side with s(A cos + B sin) <= A and s(A sin + B cos) <= B.
 */
function rollCut(width: number, height: number, deg: number): { w: number; h: number } {
  const t = (Math.abs(deg) * Math.PI) / 180;
  const [c, s] = [Math.cos(t), Math.sin(t)];
  const k = Math.min(width / (width * c + height * s), height / (width * s + height * c));
  return { w: Math.floor(width * k), h: Math.floor(height * k) };
}

/** The face's corners turned by `deg` (clockwise, about the frame's centre), as a rectangle in the turned canvas. */
function turnedFace(face: Rectangle, src: Source, deg: number, canvas: { w: number; h: number }): Rectangle {
  const t = (deg * Math.PI) / 180;
  const [c, s] = [Math.cos(t), Math.sin(t)];
  const pts = [
    [face.x, face.y],
    [face.x + face.width, face.y],
    [face.x, face.y + face.height],
    [face.x + face.width, face.y + face.height],
  ].map(([px, py]) => {
    const dx = px! - src.width / 2,
      dy = py! - src.height / 2;
    return [canvas.w / 2 + dx * c - dy * s, canvas.h / 2 + dx * s + dy * c];
  });
  const xs = pts.map((p) => p[0]!),
    ys = pts.map((p) => p[1]!);
  return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
}

/** Rolled by `deg` and cut so no empty corner shows; `control`: the same cut of the unrotated frame. */
export function roll(deg: number, control = false): Variant {
  return {
    name: control ? `cut for ${Math.abs(deg)}°, no roll` : `roll ${deg > 0 ? '+' : ''}${deg}°`,
    what: control ? "control: the roll's cut without rotation" : 'roll, cut so no empty corner shows',
    make: async (src) => {
      const cut = rollCut(src.width, src.height, deg);
      const a = control ? 0 : deg;
      const t = (Math.abs(a) * Math.PI) / 180;
      const canvas = {
        w: Math.round(src.width * Math.cos(t) + src.height * Math.sin(t)),
        h: Math.round(src.width * Math.sin(t) + src.height * Math.cos(t)),
      };
      const left = Math.floor((canvas.w - cut.w) / 2),
        top = Math.floor((canvas.h - cut.h) / 2);
      if (!src.face || !inside(turnedFace(src.face, src, a, canvas), left, top, cut.w, cut.h)) return undefined;
      const turned =
        a === 0
          ? { data: src.raw, info: { width: src.width, height: src.height } }
          : await fromRaw(src).rotate(a, { background: '#000000' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      // The canvas computed above is libvips' own (rounded) size; the cut is placed on the canvas it returned.
      const { width, height } = turned.info;
      return jpeg95(sharp(turned.data, { raw: { width, height, channels: 3 } }).extract({ left, top, width: cut.w, height: cut.h }));
    },
  };
}

/** Applies f to every 8-bit channel value (c = 0, 1, 2 for R, G, B), JPEG q95 (as explore-augment.ts). */
export function perChannel(name: string, what: string, f: (v: number, c: number) => number): Variant {
  return {
    name,
    what,
    make: async (src) => {
      const out = Buffer.alloc(src.raw.length);
      for (let i = 0; i < out.length; i++) out[i] = Math.max(0, Math.min(255, Math.round(f(src.raw[i]!, i % 3))));
      return jpeg95(sharp(out, { raw: { width: src.width, height: src.height, channels: 3 } }));
    },
  };
}

/** Gaussian blur of sigma x (long side / 640) pixels: the same softness on any frame size. */
export function defocus(sigma640: number, name = `defocus σ${sigma640}`): Variant {
  return {
    name,
    what: `Gaussian blur σ = ${sigma640} px per 640 px of the long side`,
    make: (src) => jpeg95(fromRaw(src).blur(Math.max(0.3, (sigma640 * Math.max(src.width, src.height)) / 640))),
  };
}

/** research/stats.ts's seeded uniform generator, with ranges and a standard normal from it (Box-Muller). */
export function rng(seed: number): { uniform: (lo?: number, hi?: number) => number; normal: () => number } {
  const next = seededRandom(seed);
  return {
    uniform: (lo = 0, hi = 1) => lo + (hi - lo) * next(),
    normal: () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()),
  };
}

/**
 * Dim light: the exposure scaled by `gain` in linear light, then sensor noise (luma sigma `noise` and chroma
 * noise half of it, in 8-bit units at the dimmed level) and a phone's JPEG at q85. Seeded per frame.
 */
export function dimNoise(gain: number, noise: number, seed: number, name = `dim ×${gain} + noise σ${noise}`): Variant {
  return {
    name,
    what: `exposure ×${gain} (linear light), sensor noise σ ${noise} luma / ${noise / 2} chroma, JPEG q85`,
    make: async (src) => {
      const r = rng(seed);
      const out = Buffer.alloc(src.raw.length);
      const lin = new Float32Array(256).map((_, v) => ((v / 255) ** 2.2 * gain) ** (1 / 2.2) * 255);
      for (let i = 0; i < out.length; i += 3) {
        const luma = noise * r.normal();
        for (let c = 0; c < 3; c++) {
          const v = lin[src.raw[i + c]!]! + luma + (noise / 2) * r.normal();
          out[i + c] = Math.max(0, Math.min(255, Math.round(v)));
        }
      }
      return sharp(out, { raw: { width: src.width, height: src.height, channels: 3 } })
        .jpeg({ quality: 85 })
        .toBuffer();
    },
  };
}

export function jpegQuality(q: number, name = `JPEG q${q}`): Variant {
  return { name, what: 'heavy compression', make: (src) => fromRaw(src).jpeg({ quality: q }).toBuffer() };
}

export function smallPhoto(longSide: number, name = `long side ${longSide}`): Variant {
  return {
    name,
    what: 'a small photo',
    make: (src) => jpeg95(fromRaw(src).resize(src.width >= src.height ? { width: longSide } : { height: longSide })),
  };
}

export function whiteBalance(rGain: number, bGain: number, name = `WB R×${rGain} B×${bGain}`): Variant {
  return perChannel(name, 'white balance', (v, c) => (c === 0 ? v * rGain : c === 2 ? v * bGain : v));
}

export function gamma(g: number, name = `gamma ${g}`): Variant {
  return perChannel(name, 'exposure curve', (v) => 255 * (v / 255) ** g);
}

/** Two variants in turn: the first's output decoded and fed to the second (e.g. a close-up taken in dim light). */
export function chain(a: Variant, b: Variant): Variant {
  return {
    name: `${a.name} + ${b.name}`,
    what: `${a.what}, then ${b.what}`,
    make: async (src) => {
      const first = await a.make(src);
      if (!first) return undefined;
      const { data, info } = await sharp(first).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      // The face moves with a crop; the second step (photometric) does not need it.
      return b.make({ ...src, raw: data, width: info.width, height: info.height, bytes: first, format: 'jpeg', face: undefined });
    },
  };
}

const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;

/** A stable 31-bit seed from a frame's identity and draw number (FNV-1a). */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h & 0x7fffffff;
}

/** One random capture of a frame for training: a recipe and its parameters drawn from `seed`. */
export function randomCapture(seed: number): Variant {
  const r = rng(seed);
  const photometric = (): Variant => {
    const kind = Math.floor(r.uniform(0, 6));
    if (kind === 0) return defocus(round(r.uniform(1, 3.5), 1));
    if (kind === 1) return dimNoise(round(r.uniform(0.25, 0.65)), round(r.uniform(3, 10), 1), Math.floor(r.uniform(0, 2 ** 31)));
    if (kind === 2) return jpegQuality(Math.round(r.uniform(5, 40)));
    if (kind === 3) return smallPhoto(Math.round(r.uniform(280, 480)));
    if (kind === 4) return whiteBalance(round(r.uniform(0.86, 1.14)), round(r.uniform(0.86, 1.14)));
    return gamma(round(r.uniform(0.72, 1.45)));
  };
  const kind = r.uniform();
  if (kind < 0.3) return closeUp(round(r.uniform(1.1, 2.3)));
  if (kind < 0.42) return roll(Math.round(r.uniform(5, 20)) * (r.uniform() < 0.5 ? -1 : 1));
  if (kind < 0.82) return photometric();
  return chain(closeUp(round(r.uniform(1.1, 1.9))), photometric());
}

/**
 * The k-th random capture of each frame under `salt`: randomCapture seeded by `<frame id>|<salt>|<k>`, so each frame
 * gets its own recipe (explore-fusion-captures.ts; the training's draws are seeded `<frame id>|<k>`).
 */
export function frameCapture(salt: string, k: number): Variant {
  return {
    name: `capture ${salt} ${k}`,
    what: `random capture ${k} of each frame (seeds ${salt})`,
    make: (src) => randomCapture(seedOf(`${src.id}|${salt}|${k}`)).make(src),
  };
}
