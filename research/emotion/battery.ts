// Owns the emotion research's stimulus battery: the real-speech profiles (dev/harness/emotion/speech-profiles.ts),
// a recording that goes rough → soft → modal, and the older emotion-like resyntheses, for any espeak-ng voices;
// each file's window features measured once by the engine and cached in var/emotion-battery/<key>/ (the key is
// a hash of the stimulus recipes and the feature code, so a change to either measures again). Also the table
// that checks, before any fitting, that every cue moves the way the literature reports for real speech.
//   npx tsx research/emotion/battery.ts [--voices en-us,en+f3]   prints the cue table and the scores
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FixtureDir } from '../../dev/harness/emotion/audio';
import { manipulated } from '../../dev/harness/emotion/phonation';
import { PROFILE_NAMES, profiled, sequence, type SpeechProfile } from '../../dev/harness/emotion/speech-profiles';
import { emotionLike } from '../../dev/harness/emotion/stimuli';
import { FEATURE_NAMES } from '../../models/emotion/feature-names';
import { buildEmotionMapping, KNOWLEDGE_MAPPING } from '../../models/emotion/build-mapping';
import { defaultModelsDir, projectRoot, varDir } from '../../shared/paths';
import { EmotionEngine, MIN_SPEECH_SECONDS } from '../../workers/emotion/engine';
import { clipScores, type Features } from './fit';

/** The voices the soft weights were set on; every other voice is out of group. */
export const TUNING_VOICES = ['en-us', 'en+m3', 'en+f3'];
export const HELD_OUT_VOICES = ['en+f5', 'en+m1', 'en+m7', 'en+f2', 'en+f4', 'en-gb-scotland', 'en-029', 'en-gb-x-rp+f3'];

/** The rough → soft → modal recording: 10 s of each (two 5 s intervals), one file. */
export const SEQUENCE: SpeechProfile[] = ['angry', 'softSpoken', 'modal'];
export const STIMULI = [
  ...PROFILE_NAMES,
  'sequence',
  'likeNeutral',
  'likeJoy',
  'likeAnger',
  'likeSadness',
  'likeCalm',
  'breathy',
  'pressed',
  'raised',
  'lowered',
  'flatTilt',
  'steepTilt',
] as const;
export type Stimulus = (typeof STIMULI)[number];

export interface Measured {
  voice: string;
  stimulus: Stimulus;
  /** Windows with speech (the ones the API scores), in order. */
  windows: Features[];
  /** Their median speech level, dB re full scale (the recording's level: a cue only within one file). */
  levels: number[];
}

const SOURCES = [
  'dev/harness/emotion/speech-profiles.ts',
  'dev/harness/emotion/phonation.ts',
  'dev/harness/emotion/stimuli.ts',
  'dev/harness/emotion/emotion-like.praat',
  'dev/harness/emotion/phonation.praat',
  'dev/harness/emotion/audio.ts',
  'workers/emotion/engine/features.ts',
  'workers/emotion/engine/frames.ts',
  'workers/emotion/engine/pulses.ts',
  'workers/emotion/engine/vad.ts',
  'workers/emotion/engine/relative.ts',
];

function cacheDir(): string {
  const h = crypto.createHash('sha256');
  for (const f of SOURCES) h.update(fs.readFileSync(path.join(projectRoot, f)));
  h.update(FEATURE_NAMES.join(','));
  return path.join(varDir, 'emotion-battery', h.digest('hex').slice(0, 16));
}

function make(fx: FixtureDir, voice: string, s: Stimulus): string {
  if (s === 'sequence') return sequence(fx, voice, SEQUENCE);
  if (s === 'breathy' || s === 'pressed' || s === 'raised' || s === 'lowered' || s === 'flatTilt' || s === 'steepTilt') return manipulated(fx, voice, s);
  if (s.startsWith('like')) return emotionLike(fx, voice, s.slice(4).toLowerCase() as 'neutral');
  return profiled(fx, voice, s as SpeechProfile);
}

/** Every stimulus of every voice, measured by the engine (one thread) or read from the cache. */
export async function measureBattery(voices: string[], stimuli: readonly Stimulus[] = STIMULI): Promise<Measured[]> {
  const dir = cacheDir();
  fs.mkdirSync(dir, { recursive: true });
  const file = (v: string, s: string): string => path.join(dir, `${v.replace(/[^\w]+/g, '_')}-${s}.json`);
  const out: Measured[] = [];
  const todo: Array<[string, Stimulus]> = [];
  for (const v of voices) for (const s of stimuli) if (!fs.existsSync(file(v, s))) todo.push([v, s]);
  if (todo.length > 0) {
    buildEmotionMapping(defaultModelsDir);
    const lean = { modelsDir: defaultModelsDir, ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', intraOpThreads: 1, analysisThreads: 1 };
    const engine = await EmotionEngine.load(lean);
    const fx = new FixtureDir();
    try {
      for (const [v, s] of todo) {
        const ins = await engine.inspect(fx.read(make(fx, v, s)));
        const spoken = ins.windows.filter((w) => w.speechSeconds >= MIN_SPEECH_SECONDS);
        const m: Measured = { voice: v, stimulus: s, windows: spoken.map((w) => w.features), levels: spoken.map((w) => w.levelDb) };
        fs.writeFileSync(file(v, s), JSON.stringify(m));
        process.stderr.write(`measured ${v} ${s}\n`);
      }
    } finally {
      fx.remove();
      await engine.close();
    }
  }
  for (const v of voices) for (const s of stimuli) out.push(JSON.parse(fs.readFileSync(file(v, s), 'utf8')) as Measured);
  return out;
}

type Cue = keyof Features | 'level_db';
/** Happy against sad in prosody: higher, wider, rising F0, faster, louder. */
const PROSODY: Array<[Cue, 1 | -1]> = [
  ['f0_mean_st', 1],
  ['f0_range_st', 1],
  ['f0_slope_st_s', 1],
  ['syllable_rate', 1],
  ['level_db', 1],
];

/** The contrasts the literature reports for real speech, cue by cue: +1 higher in the first, −1 lower. */
export const CONTRASTS: Array<{ name: string; a: Stimulus; b: Stimulus; cues: Array<[Cue, 1 | -1]> }> = [
  {
    name: 'happy vs sad',
    a: 'happy',
    b: 'sad',
    cues: [...PROSODY, ['alpha_ratio_db', 1], ['hammarberg_db', -1], ['spectral_slope_db_khz', 1], ['h1_h2_db', -1]],
  },
  {
    name: 'happy vs sad, prosody only',
    a: 'happyProsody',
    b: 'sadProsody',
    cues: PROSODY,
  },
  {
    name: 'angry vs modal',
    a: 'angry',
    b: 'modal',
    cues: [
      ['f0_mean_st', 1],
      ['level_db', 1],
      ['alpha_ratio_db', 1],
      ['hammarberg_db', -1],
      ['spectral_slope_db_khz', 1],
      ['h1_h2_db', -1],
      ['jitter_local', 1],
      ['hnr_db', -1],
    ],
  },
  {
    name: 'soft-spoken vs modal',
    a: 'softSpoken',
    b: 'modal',
    cues: [
      ['level_db', -1],
      ['h1_h2_db', 1],
      ['alpha_ratio_db', -1],
      ['hnr_db', -1],
    ],
  },
];

function mean(xs: number[]): number {
  const f = xs.filter(Number.isFinite);
  return f.length ? f.reduce((a, b) => a + b, 0) / f.length : Number.NaN;
}

function cueValue(m: Measured, cue: Cue): number {
  return cue === 'level_db' ? mean(m.levels) : mean(m.windows.map((w) => w[cue]));
}

/** The cue table: for each contrast and cue, the mean difference over voices and in how many voices it goes
 *  the reported way. Returns the rows that do not (an empty list: the battery reproduces every contrast). */
export function cueTable(rows: Measured[], print: (line: string) => void): string[] {
  const voices = [...new Set(rows.map((r) => r.voice))];
  const get = (v: string, s: Stimulus): Measured => rows.find((r) => r.voice === v && r.stimulus === s)!;
  const wrong: string[] = [];
  print('| contrast | cue | reported | mean difference | voices the reported way |');
  print('|---|---|---|---|---|');
  for (const c of CONTRASTS) {
    for (const [cue, sign] of c.cues) {
      const d = voices.map((v) => cueValue(get(v, c.a), cue) - cueValue(get(v, c.b), cue));
      const agree = d.filter((x) => Math.sign(x) === sign).length;
      if (agree < voices.length) wrong.push(`${c.name} ${cue}`);
      print(
        `| ${c.name} | ${cue} | ${sign > 0 ? 'higher' : 'lower'} | ${mean(d).toFixed(3)} | ${agree}/${voices.length}${agree < voices.length ? ' ✗' : ''} |`,
      );
    }
  }
  return wrong;
}

/** Rough and soft of one measured file as the API's summary means them, under the shipped mapping. */
export function summaryScores(m: Measured): { rough: number; soft: number } {
  return clipScores(KNOWLEDGE_MAPPING, { file: '', speaker: m.voice, emotion: m.stimulus, weight: 1, windows: m.windows });
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--voices');
  const voices = i >= 0 ? process.argv[i + 1]!.split(',') : [...TUNING_VOICES, ...HELD_OUT_VOICES];
  const rows = await measureBattery(voices);
  console.log(`cue directions on ${voices.length} voices (${voices.join(', ')}):\n`);
  const wrong = cueTable(rows, (l) => console.log(l));
  console.log(wrong.length ? `\n${wrong.length} cue(s) not reproduced: ${wrong.join('; ')}` : '\nevery reported contrast reproduced in every voice');
  console.log(`\nrough / soft (summary means, shipped mapping):\n| voice | ${STIMULI.join(' | ')} |`);
  for (const v of voices) {
    const cells = STIMULI.map((s) => {
      const sc = summaryScores(rows.find((r) => r.voice === v && r.stimulus === s)!);
      return `${sc.rough.toFixed(2)} / ${sc.soft.toFixed(2)}`;
    });
    console.log(`| ${v} | ${cells.join(' | ')} |`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
