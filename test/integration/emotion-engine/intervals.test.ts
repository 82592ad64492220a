// The spec's time grid: consecutive 5 s intervals from 0.0, the last ending at the audio's duration; no tiny
// extra interval from AAC/MP3 decoder overshoot; silence scores 0/0 with speech_ratio 0.
import { expect } from 'chai';
import fs from 'node:fs';
import { FixtureDir } from '../../../dev/harness/emotion/audio';
import type { EmotionEngine } from '../../../workers/emotion/engine';
import { planIntervals } from '../../../workers/emotion/engine/intervals';
import { loadEngine } from './engine';

describe('emotion engine: intervals', () => {
  let engine: EmotionEngine;
  const fx = new FixtureDir();

  before(async () => {
    engine = await loadEngine();
    fx.speak('sentence.wav');
    // Three sentences back to back, cut to exactly 12.000 s at 16 kHz.
    fx.sox(['sentence.wav', 'sentence.wav', 'sentence.wav'], 'twelve.wav', ['rate', '16000', 'trim', '0', '12']);
    fx.sox(['sentence.wav', 'sentence.wav'], 'five.wav', ['rate', '44100', 'trim', '0', '5']);
  });
  after(async () => {
    fx.remove();
    await engine.close();
  });

  it('gives [0,5], [5,10], [10,12] for a 12 s file', async () => {
    const res = await engine.analyze(fx.read('twelve.wav'));
    expect(res.results.map((r) => [r.from, r.to])).to.deep.equal([
      [0, 5],
      [5, 10],
      [10, 12],
    ]);
    for (const r of res.results) expect(r.speech_ratio).to.be.greaterThan(0.5);
    expect(res.summary.duration).to.equal(12);
  });

  for (const [name, args] of [
    ['aac ADTS', ['-c:a', 'aac', '-b:a', '128k', '-f', 'adts']],
    ['mp3', ['-c:a', 'libmp3lame', '-b:a', '128k', '-f', 'mp3']],
    ['wma', ['-c:a', 'wmav2', '-b:a', '128k', '-f', 'asf']],
  ] as const) {
    it(`gives one interval for a 5.000 s ${name} file, whatever the decoder's overshoot (or WMA's undershoot)`, async () => {
      const file = fx.ffmpeg('five.wav', `five-${name.replace(/\W/g, '')}`, [...args]);
      const res = await engine.analyze(fs.readFileSync(file));
      expect(res.results).to.have.length(1);
      expect(res.results[0]!.from).to.equal(0);
      expect(res.results[0]!.to).to.be.within(4.95, 5.1);
      expect(res.results[0]!.to).to.equal(res.summary.duration);
    });
  }

  it('scores silence as rough 0, soft 0 and speech_ratio 0', async () => {
    const silence = fx.sox([], 'silence.wav', ['trim', '0', '7'], ['-n', '-r', '16000', '-c', '1', '-b', '16']);
    const res = await engine.analyze(fs.readFileSync(silence));
    expect(res.results).to.deep.equal([
      { from: 0, to: 5, rough: 0, soft: 0, speech_ratio: 0 },
      { from: 5, to: 7, rough: 0, soft: 0, speech_ratio: 0 },
    ]);
    expect(res.summary).to.include({ rough_mean: 0, rough_max: 0, soft_mean: 0, soft_max: 0, speech_ratio: 0 });
  });

  it('scores low background noise without speech as silence too', async () => {
    const noise = fx.sox([], 'noise.wav', ['synth', '6', 'pinknoise', 'vol', '0.01'], ['-n', '-r', '16000', '-c', '1', '-b', '16']);
    const res = await engine.analyze(fs.readFileSync(noise));
    for (const r of res.results) expect(r).to.include({ rough: 0, soft: 0 });
  });

  it('marks a silent interval between spoken ones with speech_ratio 0 rather than as calm speech', async () => {
    // sentence (~6 s), then 10 s of digital silence, then the sentence again.
    fx.sox(['sentence.wav'], 'then-silence.wav', ['pad', '0', '10']);
    fx.sox(['then-silence.wav', 'sentence.wav'], 'spoken-gap-spoken.wav', ['rate', '16000']);
    const res = await engine.analyze(fx.read('spoken-gap-spoken.wav'));
    const ratios = res.results.map((r) => r.speech_ratio);
    expect(ratios[0]).to.be.greaterThan(0.5);
    expect(Math.min(...ratios)).to.equal(0);
    expect(res.results.find((r) => r.speech_ratio === 0)).to.include({ rough: 0, soft: 0 });
  });

  describe('planIntervals', () => {
    it('folds a final remainder under 0.1 s into the previous interval and keeps longer ones', () => {
      const at = (seconds: number): number[][] => planIntervals(Math.round(seconds * 8000), 8000).map((p) => [p.from, p.to]);
      expect(at(5.046)).to.deep.equal([[0, 5.046]]);
      expect(at(10.099)).to.deep.equal([
        [0, 5],
        [5, 10.099],
      ]);
      expect(at(10.1)).to.deep.equal([
        [0, 5],
        [5, 10],
        [10, 10.1],
      ]);
      expect(at(0.04)).to.deep.equal([[0, 0.04]]);
    });
  });
});
