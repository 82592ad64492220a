// Speed benchmark of the liveness engine: `npm run bench:liveness [-- --runs 50]`.
// Per-stage medians in-process for a 640x480 selfie, bench:field's 1600x1200 phone photo and a 4032x3024 12 MP JPEG (both synthesized from the
// models step's sample photo), each also turned 90 degrees without EXIF (the orientation search's cost), the
// cost of each spoof model's pass (crop + inference) so relative costs can be judged on a busy machine, then the same ONNX models under onnxruntime-web's wasm backend, the way
// faceplugin's browser SDK runs them, as a ratio measured in the same run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { loadConfig } from '../shared/config';
import { verifiedModelPath } from '../models/manifest';
import { CUE_PATCH, faceCues } from '../workers/liveness/engine/cues';
import { decodeImage } from '../workers/liveness/engine/decode';
import { LivenessEngine } from '../workers/liveness/engine/index';
import { openSession, ort } from '../workers/runtime/onnx-session';
import { BUILTIN_SPOOF_SPECS, openSpoofSession, SpoofModel } from '../workers/liveness/engine/spoof';
import { median, timeMedian } from './timing';
import { loadAvg, runMain } from './support/main';
import { phonePhoto } from '../dev/harness/sample-images';

const ms = (v: number) => v.toFixed(1).padStart(7);
/** Milliseconds of CPU (user + system, all threads) since `from`. */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};

async function images(modelsDir: string): Promise<Array<{ name: string; bytes: Buffer }>> {
  const photo = fs.readFileSync(path.join(modelsDir, 'fixtures', 'human-samples.jpg'));
  // The man in the third thumbnail of the samples strip, upscaled: one face, as in a selfie.
  const face = sharp(photo).extract({ left: 325, top: 0, width: 213, height: 160 });
  const selfie = await face.clone().resize(640, 480, { fit: 'cover' }).jpeg({ quality: 90 }).toBuffer();
  // Phone cameras write 3-5 MB at this size; an upscaled thumbnail is too smooth and would decode faster
  // than a real photo, so sensor-like noise is blended in to give the JPEG a realistic entropy.
  const twelve = await big(face);
  const phone = await phonePhoto();
  // Turned a quarter without an EXIF tag (an upload path that strips it): the engine searches the orientation.
  const turned = (bytes: Buffer, q: number) => sharp(bytes).rotate(90).jpeg({ quality: q }).toBuffer();
  return [
    { name: '640x480 selfie JPEG', bytes: selfie },
    { name: '1600x1200 phone JPEG', bytes: phone },
    { name: '4032x3024 12 MP JPEG', bytes: twelve },
    { name: 'selfie turned 90°', bytes: await turned(selfie, 90) },
    { name: '12 MP turned 90°', bytes: await turned(twelve, 92) },
  ];
}

async function big(face: Sharp): Promise<Buffer> {
  const noise = await sharp({ create: { width: 4032, height: 3024, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 24 } } })
    .png({ compressionLevel: 0 })
    .toBuffer();
  const base = await face.clone().resize(4032, 3024, { fit: 'cover' }).png({ compressionLevel: 0 }).toBuffer();
  return sharp(base)
    .composite([{ input: noise, blend: 'soft-light' }])
    .jpeg({ quality: 92 })
    .toBuffer();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 50;
  const cfg = loadConfig();
  const threads = cfg.ORT_INTRA_OP_THREADS;
  console.log(`load average: ${loadAvg()} (figures on a loaded machine are upper bounds)`);
  console.log(
    `liveness bench: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), onnxruntime intra-op threads ${threads}, sharp concurrency ${sharp.concurrency()}, ${runs} runs after 5 warm-ups`,
  );
  const engine = await LivenessEngine.load({ modelsDir: cfg.MODELS_DIR, intraOpThreads: threads, fakeThreshold: cfg.FAKE_THRESHOLD });

  console.log(`\nin-process engine, per-stage medians (ms); spoof = ${engine.spoofSpecs.map((s) => s.name).join(' + ')} on one decoded image`);
  // CPU time (all threads of this process) per call is what a quiet machine's wall time would be with one
  // intra-op thread; on a loaded machine wall time also counts waiting for a core.
  console.log(`${'image'.padEnd(24)}  bytes     decode  orient  detect   spoof   total  total CPU  decode CPU`);
  const inputs = await images(cfg.MODELS_DIR);
  for (const img of inputs) {
    const stages: Record<string, number[]> = { decode: [], orient: [], detect: [], spoof: [], total: [] };
    const cpu: number[] = [];
    for (let i = 0; i < 5; i++) await engine.analyze(img.bytes, 'jpeg');
    for (let i = 0; i < runs; i++) {
      const c0 = process.cpuUsage();
      const r = await engine.analyze(img.bytes, 'jpeg');
      cpu.push(cpuMs(c0));
      // No orient stage: the frame was upright and no search ran (it costs nothing beyond detect's probe).
      for (const k of Object.keys(stages)) stages[k]!.push(r.stages?.[k] ?? (k === 'orient' ? 0 : NaN));
    }
    // The decode alone (libvips works on a pool thread; process CPU time counts it): the stage no model sees.
    const decodeCpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      const c0 = process.cpuUsage();
      await decodeImage(img.bytes, 'jpeg');
      decodeCpu.push(cpuMs(c0));
    }
    const m = (k: string) => ms(median(stages[k]!));
    console.log(
      `${img.name.padEnd(24)} ${String(img.bytes.length).padStart(8)} ${m('decode')} ${m('orient')} ${m('detect')} ${m('spoof')} ${m('total')} ${ms(median(cpu))}    ${ms(median(decodeCpu))}`,
    );
  }

  // Each spoof pass alone (window, resample into the tensor, session.run), on the selfie's decoded image.
  const selfie = inputs[0]!.bytes;
  const decoded = await decodeImage(selfie, 'jpeg');
  const r = await engine.analyze(selfie, 'jpeg');
  const face = { x: r.faceRectArea.x, y: r.faceRectArea.y, w: r.faceRectArea.width, h: r.faceRectArea.height };
  console.log('\none spoof pass (crop + resample + session.run), medians (ms), 640x480 selfie:   wall    CPU');
  for (const spec of BUILTIN_SPOOF_SPECS) {
    const model = new SpoofModel(await openSpoofSession(verifiedModelPath(cfg.MODELS_DIR, spec.name), threads), spec);
    const t = await timeMedian(runs, () => model.fakeLogit(decoded, face));
    const cpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      const c0 = process.cpuUsage();
      await model.fakeLogit(decoded, face);
      cpu.push(cpuMs(c0));
    }
    console.log(`  ${spec.name.padEnd(22)} ${`${spec.inputSize}x${spec.inputSize}`.padEnd(8)} ${' '.repeat(30)}${ms(t)} ${ms(median(cpu))}`);
  }
  // The hand-crafted face cues the fusion also weighs (part of the engine's total, after the spoof stage).
  const cueCpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    faceCues(decoded, face);
    cueCpu.push(cpuMs(c0));
  }
  console.log(`  ${'face cues'.padEnd(22)} ${`${CUE_PATCH}x${CUE_PATCH}`.padEnd(8)} ${' '.repeat(30)}${' '.repeat(7)} ${ms(median(cueCpu))}`);

  // Same model files, same inputs, session.run only: onnxruntime-node (ours) vs onnxruntime-web wasm.
  // The wasm backend gets one thread too, so the ratio compares runtimes, not thread counts.
  let web: typeof import('onnxruntime-web') | undefined;
  try {
    web = await import('onnxruntime-web');
  } catch {
    console.log('\nonnxruntime-web is not installed (devDependency): skipping the wasm comparison');
  }
  if (web) {
    web.env.wasm.numThreads = 1;
    web.env.logLevel = 'error';
    console.log("\nsame models, session.run medians (ms): onnxruntime-node cpu vs onnxruntime-web wasm (faceplugin's runtime)");
    const specs = [
      { name: 'faceplugin-liveness', input: 'input', shape: [1, 3, 128, 128] },
      { name: 'faceplugin-detect', input: 'input', shape: [1, 3, 240, 320] },
      { name: 'blazeface-front', input: 'input:0', shape: [1, 128, 128, 3] },
    ];
    for (const s of specs) {
      const file = verifiedModelPath(cfg.MODELS_DIR, s.name);
      const data = Float32Array.from({ length: s.shape.reduce((a, b) => a * b, 1) }, (_, i) => (i * 37) % 255);
      const node = await openSession(file, { intraOpThreads: threads });
      const tNode = await timeMedian(runs, () => node.run({ [s.input]: new ort.Tensor('float32', data, s.shape) }));
      const wasm = await web.InferenceSession.create(new Uint8Array(fs.readFileSync(file)), { executionProviders: ['wasm'] });
      const tWasm = await timeMedian(runs, () => wasm.run({ [s.input]: new web.Tensor('float32', data, s.shape) }));
      console.log(`  ${s.name.padEnd(22)} node ${ms(tNode)}   wasm ${ms(tWasm)}   wasm/node ${(tWasm / tNode).toFixed(2)}x`);
    }
  }
  console.log(
    "\nnot measured: Human's @tensorflow/tfjs pipeline (tfjs is not installed here; the dev-set README measured Human liveness at 53 ms on its pure-JS CPU backend)",
  );
}

runMain(main);
