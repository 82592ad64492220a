// `npm run fit:emotion` end to end on a small synthetic corpus made here (three espeak-ng voices as three
// "speakers", each with neutral, happy, angry and sad renditions from the Praat stimulus recipes, labelled with
// CREMA-D's codes): it prints out-of-speaker AUCs with bootstrap intervals, writes a mapping the engine
// accepts and a record of where it came from; and the fit's own arithmetic matches the ONNX graph.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openSession, ort } from '../../../workers/runtime/onnx-session';
import { EMOTION_MAPPING_FILE, emotionMappingBytes, KNOWLEDGE_MAPPING, onnxMetadata } from '../../../models/emotion/build-mapping';
import { FEATURE_NAMES } from '../../../models/emotion/feature-names';
import { type Clip, clipScores, emotionClass, intensityWeight, speakerFolds } from '../../../research/emotion/fit';
import { readEmotionManifest } from '../../../research/emotion/fit-emotion';
import { EmotionMapping } from '../../../workers/emotion/engine/mapping';
import { FixtureDir } from '../../../dev/harness/emotion/audio';
import { emotionLike, type EmotionLike } from '../../../dev/harness/emotion/stimuli';

const ROOT = path.join(__dirname, '../../..');

describe('emotion mapping fit (npm run fit:emotion)', () => {
  const fx = new FixtureDir();
  after(() => fx.remove());

  it('computes the same scores as the ONNX graph (so CV figures describe the model it writes)', async () => {
    const session = await openSession(emotionMappingBytes());
    let seed = 7;
    const rnd = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let i = 0; i < 20; i++) {
      const w = Object.fromEntries(
        FEATURE_NAMES.map((f) => {
          const r = KNOWLEDGE_MAPPING.reference[f];
          return [f, i % 5 === 0 && f === 'f0_mean_st' ? Number.NaN : r.mean + (rnd() * 10 - 5) * r.sd];
        }),
      ) as Clip['windows'][number];
      const data = Float32Array.from(FEATURE_NAMES.map((f) => w[f]));
      const out = (await session.run({ features: new ort.Tensor('float32', data, [1, FEATURE_NAMES.length]) })).scores!.data as Float32Array;
      const ours = clipScores(KNOWLEDGE_MAPPING, { file: '', speaker: '', emotion: '', weight: 1, windows: [w] });
      expect(ours.rough).to.be.closeTo(out[0]!, 1e-4);
      expect(ours.soft).to.be.closeTo(out[1]!, 1e-4);
    }
    await session.release();
  });

  it('reads manifests with CREMA-D codes and intensities, and deals speakers into folds', () => {
    const rows = readEmotionManifest('file,speaker,emotion,intensity\na.wav,1001,ANG,HI\nb.wav,1002,neu,\n');
    expect(rows).to.deep.equal([
      { file: 'a.wav', speaker: '1001', emotion: 'ANG', intensity: 'HI' },
      { file: 'b.wav', speaker: '1002', emotion: 'neu', intensity: '' },
    ]);
    expect(['ANG', 'HAP', 'NEU', 'SAD', 'joy'].map(emotionClass)).to.deep.equal(['angry', 'happy', 'neutral', 'sad', 'happy']);
    expect([intensityWeight('HI'), intensityWeight('LO'), intensityWeight(undefined), intensityWeight('0.5')]).to.deep.equal([1, 0.6, 1, 0.5]);
    const clip = (speaker: string): Clip => ({ file: '', speaker, emotion: 'neutral', weight: 1, windows: [] });
    expect(speakerFolds(['c', 'a', 'b', 'a', 'd'].map(clip), 2)).to.deep.equal([
      ['a', 'c'],
      ['b', 'd'],
    ]);
    expect(() => readEmotionManifest('path,speaker\nx,y\n')).to.throw(/no "file" column/);
  });

  it('fits on a synthetic manifest, prints out-of-speaker AUCs and writes a mapping the engine loads', async function () {
    this.timeout(900_000); // 12 Praat resyntheses and a cross-validated fit on a shared 2-core machine
    const corpus = fx.path('corpus');
    fs.mkdirSync(corpus);
    const codes: Record<string, EmotionLike> = { NEU: 'neutral', HAP: 'joy', ANG: 'anger', SAD: 'sadness' };
    const lines = ['file,speaker,emotion,intensity'];
    for (const [speaker, voice] of [
      ['s1', 'en-us'],
      ['s2', 'en+f3'],
      ['s3', 'en+m3'],
    ] as const) {
      for (const [code, emotion] of Object.entries(codes)) {
        const name = emotionLike(fx, voice, emotion);
        fs.copyFileSync(fx.path(name), path.join(corpus, `${speaker}-${code}.wav`));
        lines.push(`${speaker}-${code}.wav,${speaker},${code},HI`);
      }
    }
    fs.writeFileSync(path.join(corpus, 'manifest.csv'), `${lines.join('\n')}\n`);
    const out = path.join(fx.dir, 'fitted', EMOTION_MAPPING_FILE);
    const stdout = execFileSync('npx', ['tsx', 'research/emotion/fit-emotion.ts', corpus, '--out', out, '--folds', '3', '--bootstrap', '50'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(stdout).to.match(/12 clips with speech from 3 speakers \(0 without speech/);
    for (const check of ['rough angry>neutral', 'rough happy>neutral', 'soft  happy>angry', 'soft  neutral>angry', 'soft  happy>sad']) {
      expect(stdout.split(check).length - 1, check).to.equal(2); // shipped and fitted tables
    }
    const record = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
    expect(record.speakers).to.deep.equal(['s1', 's2', 's3']);
    expect(record.classes).to.deep.equal({ angry: 3, happy: 3, neutral: 3, sad: 3 });
    expect(record.features).to.deep.equal([...FEATURE_NAMES]);
    const roughAngry = record.outOfSpeakerAuc.find((f: { output: string; positive: string }) => f.output === 'rough' && f.positive === 'angry');
    // The stimuli differ in exactly the cues the mapping reads, so even three speakers separate them.
    expect(roughAngry.auc).to.be.at.least(0.75);
    expect(roughAngry.low).to.be.at.most(roughAngry.auc);
    const meta = onnxMetadata(fs.readFileSync(out));
    expect(meta.source).to.match(/^fit:emotion on corpus\/manifest\.csv/);
    expect(meta.fit_manifest_sha256).to.equal(record.manifest.sha256);
    // The engine's loader checks the stored feature names and runs the model once.
    const mapping = await EmotionMapping.load(path.dirname(out), 1);
    const nothingMeasured = Object.fromEntries(FEATURE_NAMES.map((f) => [f, Number.NaN])) as Clip['windows'][number];
    const [scores] = await mapping.score([nothingMeasured]);
    // Nothing measured → every feature at the fitted reference → sigmoid(fitted bias).
    expect(scores!.rough).to.be.closeTo(1 / (1 + Math.exp(-record.mapping.bias.rough)), 1e-4);
    await mapping.release();
  });
});
