// What soft (gentle, friendly, never harsh) and rough (charged) do when one property of a voice changes, on
// Praat-manipulated stimuli of three espeak-ng voices (dev/harness/emotion/phonation.ts): breathy vs pressed
// phonation, lowered vs raised vocal effort, wide vs narrow F0 range, fast vs slow rate, flat vs steep spectral
// tilt; and the ordering of the emotion-like resyntheses (angry-like < neutral < joy-like). The directions and
// their sources are the table "soft in v4" of docs/emotion-engine.md; every assertion names a size, so a
// mapping that only drifts the right way by a hair fails. The v2 checks (scores.test.ts) are unchanged.
import { expect } from 'chai';
import { FixtureDir } from '../../../dev/harness/emotion/audio';
import { manipulated, type Manipulation } from '../../../dev/harness/emotion/phonation';
import { emotionLike, type EmotionLike } from '../../../dev/harness/emotion/stimuli';
import type { EmotionResult } from '../../../shared/queues/contracts';
import type { EmotionEngine } from '../../../workers/emotion/engine';
import { loadEngine } from './engine';

const VOICES = ['en-us', 'en+m3', 'en+f3'];
const EMOTION_NAMES: readonly string[] = ['neutral', 'joy', 'anger'];

describe('emotion engine: voice quality moves soft and rough', () => {
  let engine: EmotionEngine;
  const fx = new FixtureDir();
  const cache = new Map<string, EmotionResult['summary']>();

  /** Summary of one stimulus, made and analysed once per run. */
  async function score(voice: string, name: Manipulation | EmotionLike): Promise<{ rough: number; soft: number }> {
    const key = `${voice}/${name}`;
    if (!cache.has(key)) {
      const file = EMOTION_NAMES.includes(name) ? emotionLike(fx, voice, name as EmotionLike) : manipulated(fx, voice, name as Manipulation);
      cache.set(key, (await engine.analyze(fx.read(file))).summary);
    }
    const s = cache.get(key)!;
    return { rough: s.rough_mean, soft: s.soft_mean };
  }

  before(async function () {
    // Praat resyntheses of three voices; minutes on a loaded 2-core machine (no result depends on time).
    this.timeout(900_000);
    engine = await loadEngine();
    for (const voice of VOICES) {
      for (const name of [
        'neutral',
        'joy',
        'anger',
        'breathy',
        'pressed',
        'raised',
        'lowered',
        'wideF0',
        'narrowF0',
        'fast',
        'slow',
        'flatTilt',
        'steepTilt',
      ] as const) {
        await score(voice, name);
      }
    }
  });
  after(async () => {
    fx.remove();
    await engine?.close();
  });

  for (const voice of VOICES) {
    describe(voice, () => {
      it('a breathy, soft-spoken rendering is softer than the modal voice and not rougher', async () => {
        const [modal, breathy] = [await score(voice, 'neutral'), await score(voice, 'breathy')];
        expect(breathy.soft, 'soft').to.be.greaterThan(modal.soft + 0.05);
        expect(breathy.rough, 'rough').to.be.lessThan(modal.rough);
      });

      it('a pressed rendering loses soft and gains rough', async () => {
        const [modal, pressed] = [await score(voice, 'neutral'), await score(voice, 'pressed')];
        expect(pressed.soft, 'soft').to.be.lessThan(modal.soft - 0.2);
        expect(pressed.soft, 'soft in the angry band').to.be.below(0.2);
        expect(pressed.rough, 'rough').to.be.greaterThan(modal.rough + 0.2);
      });

      it('raised vocal effort is rougher and less soft than lowered effort', async () => {
        const [raised, lowered] = [await score(voice, 'raised'), await score(voice, 'lowered')];
        expect(lowered.soft - raised.soft, 'soft').to.be.greaterThan(0.25);
        expect(raised.rough - lowered.rough, 'rough').to.be.greaterThan(0.2);
      });

      it('a wide F0 range is rougher and softer (livelier) than a narrow one', async () => {
        const [wide, narrow] = [await score(voice, 'wideF0'), await score(voice, 'narrowF0')];
        expect(wide.rough - narrow.rough, 'rough').to.be.greaterThan(0.04);
        expect(wide.soft - narrow.soft, 'soft').to.be.greaterThan(0.15);
      });

      it('fast speech is rougher than slow speech, and not less soft', async () => {
        const [fast, slow] = [await score(voice, 'fast'), await score(voice, 'slow')];
        expect(fast.rough - slow.rough, 'rough').to.be.greaterThan(0.12);
        expect(fast.soft, 'soft').to.be.at.least(slow.soft - 0.07);
      });

      it('a flat spectral tilt is rougher and far less soft than a steep one', async () => {
        const [flat, steep] = [await score(voice, 'flatTilt'), await score(voice, 'steepTilt')];
        expect(flat.rough - steep.rough, 'rough').to.be.greaterThan(0.3);
        expect(steep.soft - flat.soft, 'soft').to.be.greaterThan(0.3);
      });

      it('orders soft angry-like < neutral < joy-like, angry-like below 0.3', async () => {
        const [anger, neutral, joy] = [await score(voice, 'anger'), await score(voice, 'neutral'), await score(voice, 'joy')];
        expect(neutral.soft - anger.soft, 'neutral > anger').to.be.greaterThan(0.15);
        expect(joy.soft - neutral.soft, 'joy > neutral').to.be.greaterThan(0.05);
        expect(anger.soft, 'anger').to.be.below(0.3);
      });
    });
  }

  it('uses the scale: soft-spoken and joy-like renderings reach 0.4–0.85, pressed ones stay below 0.1', async () => {
    for (const voice of VOICES) {
      for (const name of ['breathy', 'lowered', 'joy'] as const) expect((await score(voice, name)).soft, `${voice} ${name}`).to.be.within(0.4, 0.85);
      expect((await score(voice, 'pressed')).soft, `${voice} pressed`).to.be.below(0.1);
    }
  });
});
