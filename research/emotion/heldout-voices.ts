// Owns `npm run research:emotion:heldout`: the out-of-group check of the v3 soft calibration. The mapping's
// soft weights were set while looking at stimuli of three espeak-ng voices (en-us, en+m3, en+f3:
// voice-quality.test.ts); this scores the same stimulus recipes on voices that were never looked at and
// prints, over voices as the grouping unit, the AUCs the issue grades (soft neutral>angry, happy>angry,
// happy>sad; rough angry>neutral) plus soft breathy>modal and calm>sad, each with a 95 % voice-bootstrap
// interval (voices drawn with replacement, 2000 draws), and how often each within-voice ordering holds.
// Synthetic voices: this says whether the calibration generalises across voices, not across real speakers.
//   npm run research:emotion:heldout [-- --voices en+f5,en+m1,...]
import { buildEmotionMapping } from '../../models/emotion/build-mapping';
import { auc, seededRandom } from '../stats';
import { defaultModelsDir } from '../../shared/paths';
import { FixtureDir } from '../../dev/harness/emotion/audio';
import { manipulated } from '../../dev/harness/emotion/phonation';
import { emotionLike } from '../../dev/harness/emotion/stimuli';
import { EmotionEngine } from '../../workers/emotion/engine';

const HELD_OUT = ['en+f5', 'en+m1', 'en+m7', 'en+f2', 'en+f4', 'en-gb-scotland', 'en-029', 'en-gb-x-rp+f3'];
const CLASSES = ['neutral', 'joy', 'anger', 'sadness', 'calm', 'breathy'] as const;
type Cls = (typeof CLASSES)[number];
type Row = Record<Cls, { rough: number; soft: number }>;

const CHECKS: Array<['rough' | 'soft', Cls, Cls]> = [
  ['soft', 'neutral', 'anger'],
  ['soft', 'joy', 'anger'],
  ['soft', 'joy', 'sadness'],
  ['soft', 'breathy', 'neutral'],
  ['soft', 'calm', 'sadness'],
  ['rough', 'anger', 'neutral'],
];

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function pairAuc(rows: Row[], out: 'rough' | 'soft', pos: Cls, neg: Cls): number {
  return auc(
    rows.map((r) => r[pos][out]),
    rows.map((r) => r[neg][out]),
  );
}

async function main(): Promise<void> {
  const voices = arg('--voices')?.split(',') ?? HELD_OUT;
  buildEmotionMapping(defaultModelsDir);
  const engine = await EmotionEngine.load({ modelsDir: defaultModelsDir, ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', intraOpThreads: 1 });
  const fx = new FixtureDir();
  const rows: Row[] = [];
  try {
    for (const voice of voices) {
      const row = {} as Row;
      for (const c of CLASSES) {
        const file = c === 'breathy' ? manipulated(fx, voice, 'breathy') : emotionLike(fx, voice, c);
        const s = (await engine.analyze(fx.read(file))).summary;
        row[c] = { rough: s.rough_mean, soft: s.soft_mean };
      }
      rows.push(row);
      console.log(`${voice}: ${CLASSES.map((c) => `${c} ${row[c].rough.toFixed(2)}/${row[c].soft.toFixed(2)}`).join(', ')} (rough/soft)`);
    }
  } finally {
    fx.remove();
    await engine.close();
  }
  const rnd = seededRandom(31);
  console.log(`\n${rows.length} held-out voices; AUC over voices [95 % voice-bootstrap interval]; within-voice ordering holds`);
  for (const [out, pos, neg] of CHECKS) {
    const boot: number[] = [];
    for (let b = 0; b < 2000; b++) {
      const draw = rows.map(() => rows[Math.floor(rnd() * rows.length)]!);
      boot.push(pairAuc(draw, out, pos, neg));
    }
    boot.sort((a, c) => a - c);
    const within = rows.filter((r) => r[pos][out] > r[neg][out]).length;
    console.log(
      `${out} ${pos} > ${neg}: AUC ${pairAuc(rows, out, pos, neg).toFixed(2)} [${boot[49]!.toFixed(2)}, ${boot[1949]!.toFixed(2)}]; ${within}/${rows.length} voices`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
