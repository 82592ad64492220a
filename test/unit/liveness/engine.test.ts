// The liveness engine against real models and real (or synthesized) images: results, refusals, quality reasons.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import { AppError } from '../../../shared/errors';
import type { LivenessResult, Rectangle } from '../../../shared/queues/contracts';
import { LivenessEngine, ModelIntegrityError } from '../../../workers/liveness/engine';
import { parseConfig } from '../../../shared/config';
import { startLivenessWorker } from '../../../workers/liveness/worker';
import { blankJpeg, modelsDir, pngBombHeader, seededNormal, selfieJpeg } from '../../fixtures/liveness/images';
import { quietLog } from '../../support/config';

/** Replaces a symlinked model in `dir` by a copy with its last byte flipped. */
function tamper(dir: string, file: string): void {
  const bytes = fs.readFileSync(path.join(modelsDir, file));
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
  fs.rmSync(path.join(dir, file));
  fs.writeFileSync(path.join(dir, file), bytes);
}

const load = (extra: Partial<Parameters<typeof LivenessEngine.load>[0]> = {}) =>
  LivenessEngine.load({ modelsDir, intraOpThreads: 1, fakeThreshold: 0.15, ...extra });

async function rejection(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected the engine to refuse the image');
}

function iou(a: Rectangle, b: Rectangle): number {
  const ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  return (ix * iy) / (a.width * a.height + b.width * b.height - ix * iy);
}

describe('liveness engine', () => {
  let engine: LivenessEngine;
  let selfie: Buffer;
  let selfieResult: LivenessResult;

  before(async () => {
    engine = await load();
    selfie = await selfieJpeg();
    selfieResult = await engine.analyze(selfie, 'jpeg');
  });

  it('finds the face in a portrait photo and answers a likelihood in [0, 1]', () => {
    const r = selfieResult;
    expect(r.isFakeLikelihood).to.be.within(0, 1);
    expect(r.isFakeFace).to.equal(r.isFakeLikelihood > 0.15);
    // The face of the man in the photo sits right of centre, in the upper half of the 640x480 frame.
    expect(r.faceRectArea.x).to.be.within(280, 380);
    expect(r.faceRectArea.y).to.be.within(20, 100);
    expect(r.faceRectArea.height).to.be.within(90, 180);
    expect(r.vFaceRect).to.have.length(1);
    expect(r.vFaceRect[0]).to.deep.equal(r.faceRectArea);
    for (const v of Object.values(r.faceRectArea)) expect(Number.isInteger(v)).to.equal(true);
    expect(r.faceBrightness).to.be.within(60, 220);
    expect(r.isValidFace).to.equal(true);
    expect(r.msg).to.equal('');
    expect(r.reasons).to.deep.equal([]);
    expect(Number.isInteger(r.latency_ms)).to.equal(true);
    expect(r.stages).to.have.all.keys('decode', 'detect', 'spoof', 'total');
  });

  it('lists its verified models with their hashes', () => {
    expect(engine.modelInfo.map((m) => m.name)).to.include.members(['faceplugin-detect', 'blazeface-front', 'silent-face-v2', 'silent-face-v1se']);
    for (const m of engine.modelInfo) expect(m.sha256).to.match(/^[0-9a-f]{64}$/);
  });

  it('answers invalid_image when there is no face in the image', async () => {
    const err = await rejection(engine.analyze(await blankJpeg(), 'jpeg'));
    expect(err.code).to.equal('invalid_image');
    expect(err.message).to.match(/no face/i);
  });

  it('answers invalid_image when PNG bytes are declared as jpeg, and JPEG bytes as png', async () => {
    const png = await sharp(selfie).png().toBuffer();
    const a = await rejection(engine.analyze(png, 'jpeg'));
    expect(a.code).to.equal('invalid_image');
    expect(a.message).to.match(/PNG/);
    const b = await rejection(engine.analyze(selfie, 'png'));
    expect(b.code).to.equal('invalid_image');
    expect(b.message).to.match(/JPEG/);
  });

  it('accepts the same photo as a PNG when it is declared png', async () => {
    const r = await engine.analyze(await sharp(selfie).png().toBuffer(), 'png');
    expect(iou(r.faceRectArea, selfieResult.faceRectArea)).to.be.greaterThan(0.9);
  });

  it('answers invalid_image when the bytes are not an image at all', async () => {
    const err = await rejection(engine.analyze(Buffer.from('definitely not a picture'), 'jpeg'));
    expect(err.code).to.equal('invalid_image');
  });

  it('answers invalid_image when the JPEG is truncated', async () => {
    const err = await rejection(engine.analyze(selfie.subarray(0, Math.floor(selfie.length * 0.6)), 'jpeg'));
    expect(err.code).to.equal('invalid_image');
    expect(err.message).to.match(/truncated|corrupt/i);
  });

  it('refuses a 50000x50000 PNG header (decompression bomb) from its header, before decoding any pixel', async () => {
    const err = await rejection(engine.analyze(pngBombHeader(), 'png'));
    expect(err.code).to.equal('invalid_image');
    // The size guard's answer: a decode attempt would have failed on the one-row IDAT as "truncated or corrupted".
    expect(err.message).to.match(/50000x50000 pixels; at most 40 megapixels/);
  });

  it('applies the EXIF orientation before detecting, and answers rectangles in the upright frame', async () => {
    // Pixels stored rotated 90 degrees anticlockwise with Orientation 6 ("rotate 90 clockwise to view").
    const stored = await sharp(selfie).rotate(-90).withMetadata({ orientation: 6 }).jpeg({ quality: 92 }).toBuffer();
    const meta = await sharp(stored).metadata();
    expect([meta.width, meta.height, meta.orientation]).to.deep.equal([480, 640, 6]);
    const r = await engine.analyze(stored, 'jpeg');
    expect(iou(r.faceRectArea, selfieResult.faceRectArea)).to.be.greaterThan(0.8);
    // Without the tag the same pixels show the face lying on its side, somewhere else entirely.
    const untagged = await engine.analyze(await sharp(selfie).rotate(-90).jpeg({ quality: 92 }).toBuffer(), 'jpeg');
    expect(iou(untagged.faceRectArea, selfieResult.faceRectArea)).to.be.lessThan(0.2);
  });

  it('maps face rectangles back to original pixels when a 12 MP JPEG is decoded at reduced size', async () => {
    const big = await sharp(selfie).resize(4032, 3024).jpeg({ quality: 90 }).toBuffer();
    const r = await engine.analyze(big, 'jpeg');
    const k = 4032 / 640;
    const scaled = {
      x: selfieResult.faceRectArea.x * k,
      y: selfieResult.faceRectArea.y * k,
      width: selfieResult.faceRectArea.width * k,
      height: selfieResult.faceRectArea.height * k,
    };
    expect(iou(r.faceRectArea, scaled)).to.be.greaterThan(0.8);
    expect(Math.abs(r.isFakeLikelihood - selfieResult.isFakeLikelihood)).to.be.lessThan(0.2);
  });

  it('reports face_too_small when the face is a few dozen pixels high', async () => {
    const r = await engine.analyze(await sharp(selfie).resize(200, 150).jpeg().toBuffer(), 'jpeg');
    expect(r.isValidFace).to.equal(false);
    expect(r.reasons).to.include('face_too_small');
    expect(r.msg).to.match(/too small/);
  });

  it('reports too_dark for an underexposed photo', async () => {
    const r = await engine.analyze(await sharp(selfie).linear(0.22, 0).jpeg().toBuffer(), 'jpeg');
    expect(r.faceBrightness).to.be.lessThan(45);
    expect(r.isValidFace).to.equal(false);
    expect(r.reasons).to.include('too_dark');
    expect(r.msg).to.match(/too dark/);
  });

  it('reports multiple_faces when two faces of the same size are in the frame', async () => {
    const two = await sharp({ create: { width: 1280, height: 480, channels: 3, background: '#000' } })
      .composite([
        { input: selfie, left: 0, top: 0 },
        { input: selfie, left: 640, top: 0 },
      ])
      .jpeg()
      .toBuffer();
    const r = await engine.analyze(two, 'jpeg');
    expect(r.vFaceRect).to.have.length(2);
    expect(r.reasons).to.include('multiple_faces');
  });

  it('reports face_cut_off when the face runs past the image border', async () => {
    const cut = await sharp(selfie).extract({ left: 380, top: 0, width: 260, height: 480 }).jpeg().toBuffer();
    const r = await engine.analyze(cut, 'jpeg');
    expect(r.reasons).to.include('face_cut_off');
  });

  it('reports blurry for a defocused face', async () => {
    const r = await engine.analyze(await sharp(selfie).blur(6).jpeg().toBuffer(), 'jpeg');
    expect(r.reasons).to.include('blurry');
  });

  it('reports too_compressed for a photo saved at JPEG quality 15, and not at quality 50', async () => {
    const q15 = await engine.analyze(await sharp(selfie).jpeg({ quality: 15 }).toBuffer(), 'jpeg');
    expect(q15.isValidFace).to.equal(false);
    expect(q15.reasons).to.include('too_compressed');
    expect(q15.msg).to.match(/compressed/);
    const q50 = await engine.analyze(await sharp(selfie).jpeg({ quality: 50 }).toBuffer(), 'jpeg');
    expect(q50.reasons).to.not.include('too_compressed');
  });

  it('reports blurry for a soft photo whose strong edges keep its Laplacian variance up (the blur effect)', async () => {
    const sharpPhoto = fs.readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'liveness', 'known-answers', 'silentface-live-T1.jpg'));
    const soft = await engine.analyzeDetailed(await sharp(sharpPhoto).blur(2).jpeg({ quality: 95 }).toBuffer(), 'jpeg');
    expect(soft.features.quality.sharpness, 'Laplacian variance alone would pass it').to.be.at.least(20);
    expect(soft.features.quality.blurEffect).to.be.above(0.7);
    expect(soft.result.reasons).to.deep.equal(['blurry']);
    const asTaken = await engine.analyzeDetailed(sharpPhoto, 'jpeg');
    expect(asTaken.features.quality.blurEffect).to.be.below(0.7);
    expect(asTaken.result.isValidFace).to.equal(true);
  });

  it('reports noisy for a grainy face in a dim scene, not for the same grain on a well-lit face', async () => {
    const { data, info } = await sharp(selfie).raw().toBuffer({ resolveWithObject: true });
    /** The photo's exposure times `gain`, plus seeded Gaussian grain of sigma 8 luma levels, as a lossless PNG. */
    const grainy = async (gain: number) => {
      const normal = seededNormal(11);
      const out = Buffer.alloc(data.length);
      for (let i = 0; i < data.length; i += 3) {
        const n = 8 * normal();
        for (let c = 0; c < 3; c++) out[i + c] = Math.max(0, Math.min(255, Math.round(data[i + c]! * gain + n)));
      }
      return engine.analyzeDetailed(
        await sharp(out, { raw: { width: info.width, height: info.height, channels: 3 } })
          .png()
          .toBuffer(),
        'png',
      );
    };
    const dim = await grainy(0.6);
    expect(dim.result.faceBrightness).to.be.within(45, 100);
    expect(dim.features.quality.noise).to.be.above(3);
    expect(dim.result.reasons).to.include('noisy');
    expect(dim.result.msg).to.match(/grainy/);
    const lit = await grainy(1);
    expect(lit.result.faceBrightness).to.be.at.least(100);
    expect(lit.features.quality.noise).to.be.above(3);
    expect(lit.result.reasons).to.not.include('noisy');
    expect(selfieResult.reasons).to.not.include('noisy');
  });

  it('sets isFakeFace from its own threshold', async () => {
    const strict = await load({ fakeThreshold: 0 });
    expect((await strict.analyze(selfie, 'jpeg')).isFakeFace).to.equal(true);
    const lax = await load({ fakeThreshold: 1 });
    expect((await lax.analyze(selfie, 'jpeg')).isFakeFace).to.equal(false);
  });

  it('drops a built-in spoof model given weight 0 in EXTRA_SPOOF_MODELS, keeping the others as they are', async () => {
    const without = await load({ extraSpoofModels: JSON.stringify([{ name: 'silent-face-v1se', inputSize: 80, weight: 0 }]) });
    const { features } = await without.analyzeDetailed(selfie, 'jpeg');
    expect(features.spoofLogits).to.have.all.keys('silent-face-v2');
    const full = await engine.analyzeDetailed(selfie, 'jpeg');
    expect(features.spoofLogits['silent-face-v2']).to.equal(full.features.spoofLogits['silent-face-v2']);
  });

  it('runs fr_liveness only when an operator weighs it back in (off by default since the fine-tuned MiniFASNets)', async () => {
    expect((await engine.analyzeDetailed(selfie, 'jpeg')).features.spoofLogits).to.have.all.keys('silent-face-v2', 'silent-face-v1se');
    const withIt = await load({ extraSpoofModels: JSON.stringify([{ name: 'faceplugin-liveness', inputSize: 128, weight: 1 }]) });
    const { features } = await withIt.analyzeDetailed(selfie, 'jpeg');
    expect(features.spoofLogits).to.have.all.keys('faceplugin-liveness', 'silent-face-v2', 'silent-face-v1se');
    expect(features.spoofLogits['faceplugin-liveness']).to.be.lessThan(0); // the selfie is live
  });

  describe('spoof windows', () => {
    // A close-up: the middle of the selfie, so MiniFASNetV1SE's 4x window cannot fit in the frame.
    const closeUp = async () =>
      sharp(await selfieJpeg())
        .extract({ left: 160, top: 60, width: 320, height: 360 })
        .jpeg({ quality: 95 })
        .toBuffer();
    /** The V1SE input's top-left pixel (B, G, R: NCHW planes) for a close-up, under `window`. */
    const corner = async (window?: 'padded-edge' | 'padded-black') => {
      const engine = await load(window ? { spoofWindows: { 'silent-face-v1se': window } } : {});
      expect(engine.spoofSpecs.find((s) => s.name === 'silent-face-v1se')!.window).to.equal(window ?? 'shifted');
      const { features } = await engine.analyzeDetailed(await closeUp(), 'jpeg', { captureInputs: true });
      const t = features.inputs!['silent-face-v1se']!;
      return [t[0]!, t[80 * 80]!, t[2 * 80 * 80]!];
    };

    it('reads the frame itself by default (the window shrunk and shifted inside), black outside a padded-black window', async () => {
      expect((await corner()).some((v) => v > 0)).to.equal(true);
      expect(await corner('padded-black')).to.deep.equal([0, 0, 0]);
    });

    it("repeats the frame's edge outside a padded-edge window", async () => {
      expect((await corner('padded-edge')).some((v) => v > 0)).to.equal(true);
    });
  });

  describe('loading', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liveness-models-'));
      for (const f of fs.readdirSync(modelsDir)) {
        if (f.endsWith('.onnx')) fs.symlinkSync(path.join(modelsDir, f), path.join(dir, f));
      }
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('refuses to load a model file whose sha256 differs from the manifest', async () => {
      tamper(dir, 'fr_detect.onnx');
      let err: unknown;
      await load({ modelsDir: dir }).catch((e: unknown) => (err = e));
      expect(err).to.be.instanceOf(ModelIntegrityError);
      expect((err as Error).message).to.match(/fr_detect\.onnx has sha256/);
    });

    it('refuses to load a vendored Silent-Face model whose sha256 differs from the manifest', async () => {
      tamper(dir, 'MiniFASNetV2_2.7_80x80.ft.onnx');
      let err: unknown;
      await load({ modelsDir: dir }).catch((e: unknown) => (err = e));
      expect(err).to.be.instanceOf(ModelIntegrityError);
      expect((err as Error).message).to.match(/MiniFASNetV2_2\.7_80x80\.ft\.onnx has sha256/);
    });

    it('keeps a liveness worker from starting, before it opens any connection, when a vendored model is altered', async () => {
      tamper(dir, 'MiniFASNetV1SE_4.0_80x80.ft.onnx');
      // Nothing listens on these: a worker that got past the model check would fail on Redis instead.
      const config = parseConfig({ MODELS_DIR: dir, REDIS_URL: 'redis://127.0.0.1:1', MONGODB_URI: 'mongodb://127.0.0.1:1/x' });
      let err: unknown;
      await startLivenessWorker({ config, log: quietLog }).catch((e: unknown) => (err = e));
      expect(err).to.be.instanceOf(ModelIntegrityError);
      expect((err as Error).message).to.match(/MiniFASNetV1SE_4\.0_80x80\.ft\.onnx has sha256/);
    });

    it('refuses to load when a model file is missing', async () => {
      fs.rmSync(path.join(dir, 'fr_detect.onnx'));
      let err: unknown;
      await load({ modelsDir: dir }).catch((e: unknown) => (err = e));
      expect(err).to.be.instanceOf(ModelIntegrityError);
    });

    it('adds an operator spoof model from configuration, and refuses one whose hash differs', async () => {
      const extra = JSON.stringify([{ name: 'second-opinion', path: path.join(dir, 'fr_liveness.onnx'), inputSize: 128, scale: 4, weight: 1 }]);
      const withExtra = await load({ extraSpoofModels: extra });
      expect(withExtra.modelInfo.map((m) => m.name)).to.include('second-opinion');
      const { features } = await withExtra.analyzeDetailed(selfie, 'jpeg');
      expect(features.spoofLogits).to.have.all.keys('silent-face-v2', 'silent-face-v1se', 'second-opinion');
      // Not in the fitted fusion: the mean fitted weight times its own weight (1).
      const fitted = Object.values(engine.fusion.weights);
      expect(withExtra.fusion.weights['second-opinion']).to.be.closeTo(fitted.reduce((a, b) => a + b, 0) / fitted.length, 1e-12);
      const wrongHash = JSON.stringify([{ name: 'x', path: path.join(dir, 'fr_liveness.onnx'), sha256: '0'.repeat(64), inputSize: 128 }]);
      let err: unknown;
      await load({ extraSpoofModels: wrongHash }).catch((e: unknown) => (err = e));
      expect(err).to.be.instanceOf(ModelIntegrityError);
      await load({ extraSpoofModels: '{not json' }).then(
        () => expect.fail('invalid JSON accepted'),
        (e: Error) => expect(e.message).to.match(/EXTRA_SPOOF_MODELS/),
      );
    });
  });
});
