// Owns one thread of the analysis pool (pool.ts): resampling ranges of PCM, frame analysis of windows and
// per-window features, each on samples the engine shares with every thread (SharedArrayBuffer, no copy).
// Results are the same as in the main thread: the same functions run on the same samples.
import { parentPort } from 'node:worker_threads';
import { windowFeatures, type WindowAnalysis } from './features';
import { FrameAnalyser, type FrameTrack } from './frames';
import { resampleChannels } from './pcm';

export type PoolTask =
  | { kind: 'resample'; channels: Int16Array[]; inRate: number; outRate: number; from: number; to: number }
  | { kind: 'frames'; samples: Float32Array; rate: number; ranges: Array<[number, number]>; hop: number }
  | { kind: 'windows'; samples: Float32Array; tracks: FrameTrack[]; speech: Uint8Array[] };

export type PoolResult = Float32Array | FrameTrack[] | WindowAnalysis[];

const analysers = new Map<number, FrameAnalyser>();

export function runTask(task: PoolTask): { result: PoolResult; transfer: ArrayBuffer[] } {
  switch (task.kind) {
    case 'resample': {
      const out = resampleChannels(task.channels, task.inRate, task.outRate, task.from, task.to);
      return { result: out, transfer: [out.buffer as ArrayBuffer] };
    }
    case 'frames': {
      let fa = analysers.get(task.rate);
      if (!fa) analysers.set(task.rate, (fa = new FrameAnalyser(task.rate)));
      const tracks = task.ranges.map(([s, e]) => fa.analyse(task.samples, s, e, task.hop));
      return { result: tracks, transfer: tracks.flatMap(trackBuffers) };
    }
    case 'windows': {
      const windows = task.tracks.map((t, i) => windowFeatures(task.samples, t, task.speech[i]!));
      return { result: windows, transfer: [] };
    }
  }
}

function trackBuffers(t: FrameTrack): ArrayBuffer[] {
  return [t.starts, t.levelDb, t.periodicity, t.f0, t.cpp, t.alphaRatio, t.hammarberg, t.bands, t.f1Centroid, t.f2Centroid, t.analysed].map(
    (a) => a.buffer as ArrayBuffer,
  );
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (msg: { id: number; task: PoolTask }) => {
    try {
      const { result, transfer } = runTask(msg.task);
      port.postMessage({ id: msg.id, result }, transfer);
    } catch (err) {
      port.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
}
