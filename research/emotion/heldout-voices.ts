// Owns `npm run research:emotion:heldout`: the out-of-group check of the soft calibration. The mapping's soft
// weights were set looking at three espeak-ng voices (battery.ts TUNING_VOICES); this scores the stimulus
// battery — the real-speech profiles, the rough → soft → modal recording and the older emotion-like recipes —
// on voices that were never looked at, with the shipped ONNX model, and prints per check the AUC over voices
// (voices are the grouping unit) with a 95 % voice-bootstrap interval (2000 draws) and how often the
// within-voice ordering holds. It first prints the cue table (battery.ts) for these voices. Exits 1 unless every
// check meets the rule fixed before the run: AUC ≥ 0.75 and the ordering in all but at most one voice.
// Synthetic voices: this says whether the calibration carries across voices, not across real speakers.
//   npm run research:emotion:heldout [-- --voices en+f5,en+m1,...]
import { buildEmotionMapping } from '../../models/emotion/build-mapping';
import { defaultModelsDir } from '../../shared/paths';
import { EmotionMapping } from '../../workers/emotion/engine/mapping';
import { auc, seededRandom } from '../stats';
import { cueTable, HELD_OUT_VOICES, measureBattery, type Measured, type Stimulus } from './battery';

type Scores = { rough: number; soft: number };
type Row = Record<Stimulus, Scores> & { middle: number; outer: number };

/** [output, higher, lower]: `middle`/`outer` are the rough → soft → modal recording's soft-spoken third and
 *  the softer of its other two thirds. */
const CHECKS: Array<['rough' | 'soft', Stimulus | 'middle', Stimulus | 'outer']> = [
  ['soft', 'softSpoken', 'modal'],
  ['soft', 'happy', 'sad'],
  ['soft', 'happyProsody', 'sadProsody'],
  ['soft', 'modal', 'angry'],
  ['soft', 'happy', 'angry'],
  ['soft', 'middle', 'outer'],
  ['soft', 'likeNeutral', 'likeAnger'],
  ['soft', 'likeJoy', 'likeSadness'],
  ['soft', 'breathy', 'likeNeutral'],
  ['rough', 'angry', 'modal'],
  ['rough', 'likeAnger', 'likeNeutral'],
];
const MIN_AUC = 0.75;
const MAX_VOICES_AGAINST = 1;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function value(r: Row, out: 'rough' | 'soft', k: Stimulus | 'middle' | 'outer'): number {
  return k === 'middle' || k === 'outer' ? r[k] : r[k][out];
}

async function main(): Promise<void> {
  const voices = arg('--voices')?.split(',') ?? HELD_OUT_VOICES;
  const measured = await measureBattery(voices);
  console.log(`cue directions on ${voices.length} held-out voices:\n`);
  const wrong = cueTable(measured, (l) => console.log(l));
  console.log(wrong.length ? `\nnot reproduced: ${wrong.join('; ')}\n` : '\nevery reported contrast reproduced in every voice\n');

  buildEmotionMapping(defaultModelsDir);
  const mapping = await EmotionMapping.load(defaultModelsDir, 1);
  const rows: Row[] = [];
  try {
    const score = async (m: Measured): Promise<Scores[]> => mapping.score(m.windows);
    for (const voice of voices) {
      const row = {} as Row;
      for (const m of measured.filter((x) => x.voice === voice)) {
        const s = await score(m);
        row[m.stimulus] = { rough: mean(s.map((x) => x.rough)), soft: mean(s.map((x) => x.soft)) };
        if (m.stimulus === 'sequence') {
          // Six 5 s windows: two per part (angry, soft-spoken, modal).
          const third = (k: number): number => mean(s.slice(2 * k, 2 * k + 2).map((x) => x.soft));
          row.middle = third(1);
          row.outer = Math.max(third(0), third(2));
        }
      }
      rows.push(row);
      console.log(
        `${voice}: ${Object.keys(row)
          .filter((k) => k !== 'middle' && k !== 'outer' && k !== 'sequence')
          .map((k) => `${k} ${row[k as Stimulus].rough.toFixed(2)}/${row[k as Stimulus].soft.toFixed(2)}`)
          .join(', ')}; sequence soft thirds: middle ${row.middle.toFixed(2)}, softer outer ${row.outer.toFixed(2)} (rough/soft)`,
      );
    }
  } finally {
    await mapping.release();
  }

  const rnd = seededRandom(31);
  let failed = 0;
  console.log(`\n${rows.length} held-out voices; AUC over voices [95 % voice-bootstrap interval]; within-voice ordering holds; mean difference`);
  for (const [out, pos, neg] of CHECKS) {
    const figure = (set: Row[]): number =>
      auc(
        set.map((r) => value(r, out, pos)),
        set.map((r) => value(r, out, neg)),
      );
    const boot: number[] = [];
    for (let b = 0; b < 2000; b++) boot.push(figure(rows.map(() => rows[Math.floor(rnd() * rows.length)]!)));
    boot.sort((a, c) => a - c);
    const within = rows.filter((r) => value(r, out, pos) > value(r, out, neg)).length;
    const gap = mean(rows.map((r) => value(r, out, pos) - value(r, out, neg)));
    const ok = figure(rows) >= MIN_AUC && rows.length - within <= MAX_VOICES_AGAINST;
    if (!ok) failed++;
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${out} ${pos} > ${neg}: AUC ${figure(rows).toFixed(2)} [${boot[49]!.toFixed(2)}, ${boot[1949]!.toFixed(2)}]; ${within}/${rows.length} voices; mean within-voice difference ${gap.toFixed(2)}`,
    );
  }
  console.log(
    failed ? `\n${failed} check(s) below the rule (AUC ≥ ${MIN_AUC}, ordering in all but ${MAX_VOICES_AGAINST} voice)` : '\nevery check meets the rule',
  );
  process.exitCode = failed ? 1 : 0;
}

function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
