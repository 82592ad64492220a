// Owns the real-speech stimulus battery: one neutral resynthesis of a voice (stimuli.ts) given the acoustic
// contrasts that studies of real acted and natural speech report, at their reported sizes rather than the
// exaggerated ones of the emotion-like recipes — F0 level, range and contour, rate, intensity, spectral tilt,
// breathiness and irregularity together (docs/emotion-engine.md, "the real-speech battery") — and files
// that change from one rendering to another within one recording. Made once per FixtureDir.
import type { FixtureDir } from './audio';
import { rendered, type Rendering } from './phonation';

/**
 * Sizes (each the order reported for acted and natural speech; Banse & Scherer 1996; Juslin & Laukka 2003;
 * Hammerschmidt & Jürgens 2007; Scherer 2003; Sluijter & van Heuven 1996 for the tilt that follows effort):
 * happy: F0 +3 st, range ×1.4, rising, 8 % faster, +4 dB, a little flatter above 1 kHz, raised formants;
 * sad: F0 −1.5 st, range ×0.65, falling, 15 % slower, −6 dB, steeper, breathy, a little jitter;
 * angry: F0 +4 st, range ×1.3, 8 % faster, +8 dB, much flatter, pressed (weak H1), irregular (jitter);
 * soft-spoken: −15 dB, breathy (strong H1, aspiration), steeper, F0 −0.5 st, otherwise modal prosody.
 * The `*Prosody` pair keeps the modal voice and differs only in the prosody of happiness and sadness (F0
 * level, range, contour, rate, intensity): no cue of phonation or spectral balance separates them.
 */
const SPEECH_PROFILES = {
  modal: { gainDb: 0 },
  happy: {
    recipe: { formantShift: 1.04, pitch: 1.19, range: 1.4, duration: 0.92, slope: 2 },
    phonation: { h1Db: 0, tiltDb: 2, aspiration: 0 },
    gainDb: 4,
  },
  sad: {
    recipe: { formantShift: 0.99, pitch: 0.917, range: 0.65, duration: 1.15, slope: -2, jitter: 0.01 },
    phonation: { h1Db: 3, tiltDb: -3, aspiration: 0.15 },
    gainDb: -6,
  },
  angry: {
    recipe: { pitch: 1.26, range: 1.3, duration: 0.92, jitter: 0.025 },
    phonation: { h1Db: -6, tiltDb: 5, aspiration: 0 },
    gainDb: 8,
  },
  softSpoken: {
    recipe: { pitch: 0.97 },
    phonation: { h1Db: 6, tiltDb: -4, aspiration: 0.3 },
    gainDb: -15,
  },
  happyProsody: { recipe: { pitch: 1.19, range: 1.4, duration: 0.92, slope: 2 }, gainDb: 4 },
  sadProsody: { recipe: { pitch: 0.917, range: 0.65, duration: 1.15, slope: -2 }, gainDb: -6 },
} satisfies Record<string, Rendering>;
export type SpeechProfile = keyof typeof SPEECH_PROFILES;
export const PROFILE_NAMES = Object.keys(SPEECH_PROFILES) as SpeechProfile[];

/** Makes `<voice>-speech-<profile>.wav` in fx (once) and returns its name. */
export function profiled(fx: FixtureDir, voice: string, profile: SpeechProfile): string {
  return rendered(fx, voice, `speech-${profile}`, SPEECH_PROFILES[profile]);
}

/**
 * One recording that goes from one rendering to the next: each part is its rendering repeated and cut to
 * exactly `partSeconds` (a whole number of 5 s intervals, so no interval straddles two parts), the parts
 * joined in order at their own levels. Returns the file name.
 */
export function sequence(fx: FixtureDir, voice: string, parts: SpeechProfile[], partSeconds = 10): string {
  const tag = voice.replace(/[^\w]+/g, '_');
  const out = `${tag}-sequence-${parts.join('-')}.wav`;
  const cut = parts.map((p) => {
    const one = profiled(fx, voice, p);
    const name = `${tag}-part-${p}-${partSeconds}.wav`;
    fx.sox([one, one, one, one], name, ['trim', '0', String(partSeconds)]);
    return name;
  });
  fx.sox(cut, out);
  return out;
}
