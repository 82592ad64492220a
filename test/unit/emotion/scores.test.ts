// What rough and soft mean, checked on speech we make: the same sentence in a modal voice, a croaky and a
// tense voice (rough must rise), a whispered and a breathy voice (soft must rise); and re-encoding must move
// the values only a little. Tolerances are what this extractor honestly achieves (docs/emotion-engine.md).
import { expect } from 'chai';
import fs from 'node:fs';
import { FixtureDir } from '../../fixtures/emotion/audio';
import type { EmotionResult } from '../../../shared/queues/contracts';
import type { EmotionEngine } from '../../../workers/emotion/engine';
import { loadEngine } from './engine';

describe('emotion engine: rough and soft', () => {
  let engine: EmotionEngine;
  const fx = new FixtureDir();
  const results = new Map<string, EmotionResult>();
  const analyse = async (name: string): Promise<EmotionResult> => {
    const res = await engine.analyze(fs.readFileSync(fx.path(name)));
    results.set(name, res);
    return res;
  };

  before(async () => {
    engine = await loadEngine();
    fx.speak('modal.wav', { voice: 'en-us' });
    // espeak-ng's "croak" variant: F0 flutter, i.e. cycle-to-cycle perturbation.
    fx.speak('croak.wav', { voice: 'en+croak' });
    // Tense, pressed delivery: higher pitch, louder, faster, and a flatter spectral tilt (+10 dB above 1 kHz).
    fx.speak('tense-raw.wav', { voice: 'en-us', pitch: 70, amplitude: 200, speed: 190 });
    fx.sox(['tense-raw.wav'], 'tense.wav', ['treble', '+10', '1000', 'gain', '-n', '-3']);
    fx.speak('whisper.wav', { voice: 'en+whisper' });
    // Breathy: the modal voice with a steep tilt (low-passed) mixed with the whispered (aspiration) version.
    fx.sox(['modal.wav'], 'modal-lp.wav', ['lowpass', '1000']);
    fx.sox(['-m', '-v', '0.6', 'modal-lp.wav', '-v', '0.5', 'whisper.wav'], 'breathy.wav');
  });
  after(async () => {
    fx.remove();
    await engine.close();
  });

  it('scores a croaky voice rougher than the modal voice on the same text', async () => {
    const modal = await analyse('modal.wav');
    const croak = await analyse('croak.wav');
    expect(croak.summary.rough_mean).to.be.greaterThan(modal.summary.rough_mean + 0.3);
    expect(croak.summary.rough_mean).to.be.greaterThan(0.5);
  });

  it('scores a tense, pressed voice rougher than the modal voice', async () => {
    const modal = await analyse('modal.wav');
    const tense = await analyse('tense.wav');
    expect(tense.summary.rough_mean).to.be.greaterThan(modal.summary.rough_mean + 0.05);
  });

  it('scores a whispered voice softer than the modal voice, and not rougher', async () => {
    const modal = await analyse('modal.wav');
    const whisper = await analyse('whisper.wav');
    expect(whisper.summary.soft_mean).to.be.greaterThan(modal.summary.soft_mean + 0.4);
    expect(whisper.summary.rough_mean).to.be.below(0.3);
  });

  it('scores a breathy voice softer than the modal voice', async () => {
    const modal = await analyse('modal.wav');
    const breathy = await analyse('breathy.wav');
    expect(breathy.summary.soft_mean).to.be.greaterThan(modal.summary.soft_mean + 0.08);
  });

  it('keeps the modal voice low on both scales (room above for emotion)', async () => {
    const modal = await analyse('modal.wav');
    expect(modal.summary.rough_mean).to.be.within(0.02, 0.35);
    expect(modal.summary.soft_mean).to.be.within(0.02, 0.35);
  });

  describe('re-encoding moves values only a little', () => {
    // mp3 at 128 kbps barely touches the voice: within 0.05. GSM 6.10 (13 kbps, 8 kHz, a vocoder that
    // re-synthesises the excitation) shifts perturbation and noise measures more: within 0.1, and the
    // order between voices is kept.
    for (const voice of ['modal', 'croak', 'tense']) {
      it(`${voice}: mp3 128 kbps within 0.05, GSM within 0.1`, async () => {
        const wav = await analyse(`${voice}.wav`);
        const mp3 = await engine.analyze(fs.readFileSync(fx.ffmpeg(`${voice}.wav`, `${voice}.mp3`, ['-ar', '44100', '-c:a', 'libmp3lame', '-b:a', '128k'])));
        const gsm = await engine.analyze(fs.readFileSync(fx.ffmpeg(`${voice}.wav`, `${voice}-gsm.wav`, ['-ar', '8000', '-c:a', 'libgsm_ms'])));
        for (const [other, tol] of [
          [mp3, 0.05],
          [gsm, 0.1],
        ] as const) {
          expect(other.results.length).to.equal(wav.results.length);
          other.results.forEach((r, i) => {
            const w = wav.results[i]!;
            if (w.rough === 0 || r.rough === 0) return; // a sub-0.3 s tail may fall either side of the speech floor
            expect(Math.abs(r.rough - w.rough), `rough ${w.rough} → ${r.rough}`).to.be.at.most(tol);
            expect(Math.abs(r.soft - w.soft), `soft ${w.soft} → ${r.soft}`).to.be.at.most(tol);
          });
        }
      });
    }

    it('keeps croak rougher than modal after GSM', async () => {
      const modal = await engine.analyze(fs.readFileSync(fx.ffmpeg('modal.wav', 'm.gsm.wav', ['-ar', '8000', '-c:a', 'libgsm_ms'])));
      const croak = await engine.analyze(fs.readFileSync(fx.ffmpeg('croak.wav', 'c.gsm.wav', ['-ar', '8000', '-c:a', 'libgsm_ms'])));
      expect(croak.summary.rough_mean).to.be.greaterThan(modal.summary.rough_mean + 0.3);
    });
  });
});
