// Engine plumbing: the project-built mapping model, temporary files removed on success and on error, and
// the parallel segmented decode of long files giving the same timeline as one pass.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { openSession, ort } from '../../../workers/runtime/onnx-session';
import { emotionMappingBytes, onnxMetadata } from '../../../models/emotion/build-mapping';
import { FixtureDir, pseudoRandomBytes } from '../../../dev/harness/emotion/audio';
import { eventually } from '../../../dev/harness/harness';
import { decode, segmentStarts } from '../../../workers/emotion/engine/decode';
import { AnalysisBudget } from '../../../workers/emotion/engine/analysis-budget';
import { FEATURE_NAMES } from '../../../workers/emotion/engine/features';
import { assertFeatureNames } from '../../../workers/emotion/engine/mapping';
import { sniff } from '../../../workers/emotion/engine/sniff';
import { expectRejection, loadEngine } from './engine';

describe('emotion engine: mapping model and plumbing', () => {
  const fx = new FixtureDir();
  after(() => fx.remove());

  it('builds the same ONNX bytes every time, and modal speech (or nothing measured) maps to rough about 0.2, soft about 0.52', async () => {
    expect(emotionMappingBytes().equals(emotionMappingBytes())).to.equal(true);
    const session = await openSession(emotionMappingBytes());
    const F = FEATURE_NAMES.length;
    const missing = new Float32Array(F).fill(Number.NaN);
    const out = await session.run({ features: new ort.Tensor('float32', missing, [1, F]) });
    const [rough, soft] = out.scores!.data as Float32Array;
    expect(rough).to.be.closeTo(1 / (1 + Math.exp(1.4)), 1e-3);
    // v4: soft's reference sits mid-scale (bias +0.1); modal espeak-ng voices land at 0.35–0.65 around it.
    expect(soft).to.be.closeTo(1 / (1 + Math.exp(-0.1)), 1e-3);
    await session.release();
  });

  it('reports both models with their sha256', async () => {
    const engine = await loadEngine();
    expect(engine.modelInfo.map((m) => m.name)).to.deep.equal(['silero-vad', 'emotion-mapping']);
    for (const m of engine.modelInfo) expect(m.sha256).to.match(/^[0-9a-f]{64}$/);
    await engine.close();
  });

  it('leaves no temporary file behind, after a success or a rejection on the ffmpeg (temporary-file) path', async () => {
    const tmpDir = fs.mkdtempSync(path.join(fx.dir, 'tmp-'));
    const engine = await loadEngine({ tmpDir });
    // inotify sees the engine's per-call directory come and go even though it is gone when analyze returns (its
    // events may be read after that, so a name counts whether or not it still exists then).
    const made = new Set<string>();
    const watcher = fs.watch(tmpDir, (event, name) => {
      if (event === 'rename' && name?.startsWith('emotion-')) made.add(name);
    });
    try {
      fx.speak('ok.wav');
      // mp3 and FLAC go through ffprobe/ffmpeg on a temporary file (PCM WAV is read in process, without one).
      const mp3 = fx.ffmpeg('ok.wav', 'ok.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']);
      const res = await engine.analyze(fs.readFileSync(mp3));
      expect(res.meta.format_name).to.equal('mp3');
      await expectRejection(engine.analyze(Buffer.concat([Buffer.from('fLaC', 'latin1'), pseudoRandomBytes(3000)])), 'corrupt_audio');
      fx.sox(['ok.wav'], 'r96.wav', ['rate', '96000']);
      const flac96 = fx.ffmpeg('r96.wav', 'r96.flac', []);
      await expectRejection(engine.analyze(fs.readFileSync(flac96)), 'sample_rate_out_of_range');
      await eventually(async () => made.size >= 3, 10_000, 10).catch(() => undefined);
      expect(made.size, 'temporary directories made').to.be.at.least(3);
      expect(fs.readdirSync(tmpDir)).to.deep.equal([]);
    } finally {
      watcher.close();
      await engine.close();
    }
  });

  it('refuses a mapping model whose stored feature names differ from what the engine computes', () => {
    const names = [...FEATURE_NAMES];
    [names[0], names[1]] = [names[1]!, names[0]!];
    const swapped = Buffer.from(emotionMappingBytes().toString('latin1').replace(FEATURE_NAMES.join(','), names.join(',')), 'latin1');
    expect(onnxMetadata(swapped).features).to.equal(names.join(','));
    expect(() => assertFeatureNames('swapped.onnx', swapped)).to.throw(/was built for features \[f0_range_st,f0_mean_st/);
    expect(() => assertFeatureNames('shipped.onnx', emotionMappingBytes())).not.to.throw();
  });

  it('stops a running analysis with 503 processing_timeout when the deadline passes mid-way, killing ffmpeg', async () => {
    fx.speak('d.wav');
    fx.sox(Array<string>(10).fill('d.wav'), 'deadline.wav', ['rate', '44100']);
    const mp3 = fx.ffmpeg('deadline.wav', 'deadline.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']);
    const engine = await loadEngine();
    try {
      await expectRejection(engine.analyze(fs.readFileSync(mp3), { deadline: Date.now() + 60 }), 'processing_timeout', 503);
    } finally {
      await engine.close();
    }
  });

  it('decodes a long mp3 in parallel segments to the same samples as one pass', async () => {
    fx.speak('s.wav');
    const parts = Array<string>(12).fill('s.wav');
    fx.sox(parts, 'long.wav', ['rate', '44100']);
    const mp3 = fx.ffmpeg('long.wav', 'long.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']);
    const common = { ffmpegPath: 'ffmpeg', file: mp3, demuxer: 'mp3', deadline: new AnalysisBudget() };
    const one = await decode({ ...common, approxDuration: 0, segments: 1 });
    const approxDuration = one.length / 8000;
    expect(segmentStarts(approxDuration, 3)).to.have.length(3);
    const three = await decode({ ...common, approxDuration, segments: 3 });
    // Every seam, not only its timeline: the overlap warms the decoder and the resampler up on both sides.
    expect(three.length).to.equal(one.length);
    expect(Buffer.from(three.buffer, three.byteOffset, three.byteLength).equals(Buffer.from(one.buffer, one.byteOffset, one.byteLength))).to.equal(true);
  });

  it('decodes a long MP3 while ffprobe runs, on segments planned from its size and bit rate, with the timeline of one pass', async function () {
    // Two engines and three mp3s of about a minute and a half; a loaded machine takes a while.
    this.timeout(180_000);
    fx.speak('v.wav');
    fx.sox(Array<string>(16).fill('v.wav'), 'long16.wav', ['rate', '44100']);
    // CBR: the estimate is close to the real duration, so the early decode is kept.
    const cbr = fx.ffmpeg('long16.wav', 'cbr.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']);
    // VBR starting with 20 s of silence: its first frames are 32 kbps, so the estimate lies far past the end
    // and the early decode must be dropped and redone on ffprobe's duration.
    fx.sox(['long16.wav'], 'late.wav', ['pad', '20', '0']);
    const vbr = fx.ffmpeg('late.wav', 'vbr.mp3', ['-c:a', 'libmp3lame', '-q:a', '2']);
    const cbrSeconds =
      (await decode({ ffmpegPath: 'ffmpeg', file: cbr, demuxer: 'mp3', deadline: new AnalysisBudget(), approxDuration: 0, segments: 1 })).length / 8000;
    expect(sniff(fs.readFileSync(cbr)).approxSeconds).to.be.closeTo(cbrSeconds, 0.2);
    expect(sniff(fs.readFileSync(vbr)).approxSeconds, 'estimate of the VBR file').to.be.greaterThan(2 * (cbrSeconds + 20));
    // Shipped default: one segment per available core. Against it: one ffmpeg pass after ffprobe.
    const parallel = await loadEngine();
    const onePass = await loadEngine({ decodeParallelism: 1 }); // the reference: no segments at all
    try {
      for (const file of [cbr, vbr]) {
        const bytes = fs.readFileSync(file);
        const [a, b] = [await parallel.analyze(bytes), await onePass.analyze(bytes)];
        expect(a.summary.duration, path.basename(file)).to.equal(b.summary.duration);
        // Same samples, so the same answer, whichever of ffprobe and the early decode planned the seams.
        expect(a.results).to.deep.equal(b.results);
      }
    } finally {
      await Promise.all([parallel.close(), onePass.close()]);
    }
  });
});
