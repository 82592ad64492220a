// Speech detection that never drops speech and never invents it: the same recording scaled from −40 dB to
// +12 dB (the loud end hard-clipped), a heavily clipped shout, raised vocal effort and a whisper must come
// back with (nearly) the same speech as the clean recording at 0 dB; silence, white and pink noise, a tone and
// music-like synthetic mixtures must come back without speech.
import { expect } from 'chai';
import { FixtureDir } from '../../../dev/harness/emotion/audio';
import { EMOTIONS, emotionLike } from '../../../dev/harness/emotion/stimuli';
import { requirePrograms } from '../../../dev/harness/programs';
import type { EmotionEngine } from '../../../workers/emotion/engine';
import { loadEngine } from './engine';

const share = (flags: Uint8Array[]): number => {
  let on = 0;
  let all = 0;
  for (const f of flags) for (const v of f) (all++, (on += v));
  return all > 0 ? on / all : 0;
};

describe('emotion engine: speech detection at any level, and not on noise or music', () => {
  let engine: EmotionEngine;
  const fx = new FixtureDir();
  let reference = 0;

  before(async function () {
    this.timeout(120_000); // espeak-ng, sox and one analysis on a shared machine
    requirePrograms('espeak-ng', 'sox', 'praat');
    engine = await loadEngine();
    // Two sentences with a 1.5 s pause: the reference speech share is well below 1.
    fx.speak('a.wav', { voice: 'en-us' });
    fx.speak('b.wav', { voice: 'en+f3', text: 'Please call me back when you get this message, it is rather urgent.' });
    fx.sox(['a.wav'], 'a-pause.wav', ['pad', '0.5', '1.5']);
    fx.sox(['a-pause.wav', 'b.wav'], 'talk.wav', ['rate', '16000', 'pad', '0', '0.5']);
    reference = share((await engine.inspect(fx.read('talk.wav'))).speech.both);
  });
  after(async () => {
    fx.remove();
    await engine?.close();
  });

  it('finds speech and pauses in the reference (both detectors contribute)', () => {
    expect(reference).to.be.within(0.55, 0.9);
  });

  for (const gainDb of [-40, -30, -20, -10, 6, 12]) {
    it(`finds the same speech with the recording at ${gainDb > 0 ? '+' : ''}${gainDb} dB${gainDb > 0 ? ' (clipped)' : ''}`, async () => {
      const file = fx.sox(['talk.wav'], `talk${gainDb}.wav`, ['gain', String(gainDb)]);
      const ins = await engine.inspect(fx.read(`talk${gainDb}.wav`));
      expect(share(ins.speech.both), file).to.be.closeTo(reference, 0.05);
      const res = await engine.analyze(fx.read(`talk${gainDb}.wav`));
      expect(res.results.every((r) => r.speech_ratio > 0.2 && r.rough > 0 && r.soft > 0)).to.equal(true);
    });
  }

  it('finds the speech of a shout hard-clipped by 20 dB (raised effort, flattened tilt, anger-like delivery)', async () => {
    const angry = emotionLike(fx, 'en-us', 'anger');
    fx.sox([angry], 'shout.wav', ['gain', '20', 'pad', '0.5', '0.5']);
    fx.sox([angry], 'shout-ref.wav', ['pad', '0.5', '0.5']);
    const ref = share((await engine.inspect(fx.read('shout-ref.wav'))).speech.both);
    const clipped = share((await engine.inspect(fx.read('shout.wav'))).speech.both);
    expect(clipped).to.be.closeTo(ref, 0.05);
    const res = await engine.analyze(fx.read('shout.wav'));
    expect(res.summary.speech_ratio).to.be.above(0.5);
    expect(res.summary.rough_mean).to.be.above(0);
  });

  it('finds raised vocal effort (louder espeak, +10 dB above 1 kHz) and a whisper', async () => {
    fx.speak('effort-raw.wav', { voice: 'en-us', amplitude: 200, pitch: 70 });
    fx.sox(['effort-raw.wav'], 'effort.wav', ['treble', '+10', '1000', 'gain', '6']);
    fx.speak('whisper.wav', { voice: 'en+whisper' });
    for (const f of ['effort.wav', 'whisper.wav']) {
      const res = await engine.analyze(fx.read(f));
      expect(res.summary.speech_ratio, f).to.be.above(0.6);
      expect(
        res.results.every((r) => r.speech_ratio > 0.3),
        f,
      ).to.equal(true);
    }
  });

  it('finds the speech of every emotion-like stimulus, from flat and slow to fast and irregular', async function () {
    this.timeout(300_000); // five Praat resyntheses
    for (const emotion of EMOTIONS) {
      const res = await engine.analyze(fx.read(emotionLike(fx, 'en-us', emotion)));
      expect(res.summary.speech_ratio, emotion).to.be.above(0.8);
    }
  });

  const negatives: Array<[string, (name: string) => string]> = [
    ['digital silence', (n) => fx.sox([], n, ['synth', '6', 'sine', '440', 'vol', '0'], ['-n', '-r', '16000', '-c', '1', '-b', '16'])],
    ['white noise at −20 dBFS', (n) => fx.sox([], n, ['synth', '6', 'whitenoise', 'vol', '0.1'], ['-n', '-r', '16000', '-c', '1', '-b', '16'])],
    ['white noise at −60 dBFS', (n) => fx.sox([], n, ['synth', '6', 'whitenoise', 'vol', '0.001'], ['-n', '-r', '16000', '-c', '1', '-b', '16'])],
    ['pink noise', (n) => fx.sox([], n, ['synth', '6', 'pinknoise', 'vol', '0.3'], ['-n', '-r', '16000', '-c', '1', '-b', '16'])],
    ['a 220 Hz tone', (n) => fx.sox([], n, ['synth', '6', 'sine', '220', 'vol', '0.5'], ['-n', '-r', '16000', '-c', '1', '-b', '16'])],
    [
      'a chord of square waves with tremolo',
      (n) =>
        fx.sox(
          [],
          n,
          ['synth', '6', 'square', '220', 'square', '277', 'square', '330', 'tremolo', '5', '40', 'vol', '0.3'],
          ['-n', '-r', '16000', '-c', '1', '-b', '16'],
        ),
    ],
    [
      'a plucked-string melody',
      (n) => {
        const notes = ['C3', 'E3', 'G3', 'C4', 'A3', 'F3', 'D3', 'G3', 'E3', 'C3', 'G3', 'C4'];
        const parts = notes.map((note, i) =>
          fx.sox([], `${n}-${i}.wav`, ['synth', '0.5', 'pluck', note, 'pluck', `%${i % 3}`], ['-n', '-r', '16000', '-c', '1', '-b', '16']),
        );
        return fx.sox(parts, n, ['vol', '0.7']);
      },
    ],
  ];
  for (const [label, make] of negatives) {
    it(`finds no speech in ${label}`, async () => {
      const name = `${label.replace(/[^\w]+/g, '-')}.wav`;
      make(name);
      const res = await engine.analyze(fx.read(name));
      expect(res.summary.speech_ratio, label).to.be.at.most(0.03);
      expect(
        res.results.every((r) => r.rough === 0 && r.soft === 0),
        label,
      ).to.equal(true);
    });
  }
});
