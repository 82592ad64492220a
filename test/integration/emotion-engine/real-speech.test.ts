// Soft and rough on the real-speech battery (dev/harness/emotion/speech-profiles.ts): the contrasts studies of
// real acted and natural speech report, at their reported sizes, on three espeak-ng voices. Soft is friendly
// and gentle: a soft-spoken rendering is softer than the modal voice, happy softer than sad (also when only
// the prosody of the two differs), angry far less soft than modal; and within one recording that goes rough →
// soft-spoken → modal, the soft-spoken part is the softest (the recording's own baseline: relative.ts).
import { expect } from 'chai';
import { FixtureDir } from '../../../dev/harness/emotion/audio';
import { profiled, sequence, type SpeechProfile } from '../../../dev/harness/emotion/speech-profiles';
import type { EmotionResult } from '../../../shared/queues/contracts';
import type { EmotionEngine } from '../../../workers/emotion/engine';
import { loadEngine } from './engine';

const VOICES = ['en-us', 'en+m3', 'en+f3'];
const PROFILES: SpeechProfile[] = ['modal', 'happy', 'sad', 'angry', 'softSpoken', 'happyProsody', 'sadProsody'];

describe('emotion engine: soft on the real-speech battery', () => {
  let engine: EmotionEngine;
  const fx = new FixtureDir();
  const summaries = new Map<string, EmotionResult['summary']>();
  const sequences = new Map<string, EmotionResult>();
  const soft = (voice: string, p: SpeechProfile): number => summaries.get(`${voice}/${p}`)!.soft_mean;
  const rough = (voice: string, p: SpeechProfile): number => summaries.get(`${voice}/${p}`)!.rough_mean;

  before(async function () {
    // Praat resyntheses of three voices; minutes on a loaded 2-core machine (no result depends on time).
    this.timeout(900_000);
    engine = await loadEngine();
    for (const voice of VOICES) {
      for (const p of PROFILES) summaries.set(`${voice}/${p}`, (await engine.analyze(fx.read(profiled(fx, voice, p)))).summary);
      sequences.set(voice, await engine.analyze(fx.read(sequence(fx, voice, ['angry', 'softSpoken', 'modal']))));
    }
  });
  after(async () => {
    fx.remove();
    await engine?.close();
  });

  for (const voice of VOICES) {
    describe(voice, () => {
      it('a soft-spoken (breathy, quiet) rendering is softer than the modal voice, and not rougher', () => {
        expect(soft(voice, 'softSpoken'), 'soft').to.be.greaterThan(soft(voice, 'modal') + 0.05);
        expect(rough(voice, 'softSpoken'), 'rough').to.be.at.most(rough(voice, 'modal'));
      });

      it('happy is softer than sad, with the full profiles and with the prosody alone', () => {
        expect(soft(voice, 'happy'), 'profiles').to.be.greaterThan(soft(voice, 'sad') + 0.1);
        expect(soft(voice, 'happyProsody'), 'prosody only').to.be.greaterThan(soft(voice, 'sadProsody') + 0.1);
      });

      it('angry is far less soft than modal and than happy, and rougher than modal', () => {
        expect(soft(voice, 'modal') - soft(voice, 'angry'), 'modal > angry').to.be.greaterThan(0.2);
        expect(soft(voice, 'happy') - soft(voice, 'angry'), 'happy > angry').to.be.greaterThan(0.2);
        expect(rough(voice, 'angry') - rough(voice, 'modal'), 'rough').to.be.greaterThan(0.2);
      });

      it('in one recording going rough → soft-spoken → modal (10 s each), the middle third is the softest', () => {
        const r = sequences.get(voice)!.results;
        expect(r.length, 'six 5 s intervals').to.equal(6);
        const third = (k: number): number => (r[2 * k]!.soft + r[2 * k + 1]!.soft) / 2;
        expect(third(1), 'soft-spoken > rough').to.be.greaterThan(third(0) + 0.1);
        expect(third(1), 'soft-spoken > modal').to.be.greaterThan(third(2) + 0.05);
      });
    });
  }

  it('uses the scale: happy and soft-spoken at 0.4 or above, angry below 0.15', () => {
    for (const voice of VOICES) {
      expect(soft(voice, 'happy'), `${voice} happy`).to.be.at.least(0.4);
      expect(soft(voice, 'softSpoken'), `${voice} soft-spoken`).to.be.at.least(0.4);
      expect(soft(voice, 'angry'), `${voice} angry`).to.be.below(0.15);
    }
  });
});
