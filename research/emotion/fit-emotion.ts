// Fits the emotion mapping on a licensed, labelled speech corpus: `npm run fit:emotion -- DIR [--out FILE]
// [--folds 5] [--bootstrap 1000] [--l2 0.05]`. Reads DIR/manifest.csv (`file,speaker,emotion[,intensity]`,
// paths relative to DIR), runs the engine's own analysis on every clip, reports out-of-speaker AUCs (speaker-
// grouped cross-validation, 95 % speaker-bootstrap interval) next to the shipped knowledge-based mapping's, then
// fits on all clips and writes the mapping (default DIR/emotion-mapping.v3.onnx, the engine's file name) with
// a record of its sources (in the model's metadata and in FILE.json). The shipped default is not touched.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { EMOTION_MAPPING_FILE, KNOWLEDGE_MAPPING, mappingBytes } from '../../models/emotion/build-mapping';
import { FEATURE_NAMES } from '../../models/emotion/feature-names';
import { aucFigures, type AucFigure, type Clip, clipScores, crossValidatedScores, DEFAULT_FIT, emotionClass, fitMapping, intensityWeight } from './fit';
import { loadConfig } from '../../shared/config';
import { EmotionEngine, MIN_SPEECH_SECONDS } from '../../workers/emotion/engine';
import { assertFeatureNames } from '../../workers/emotion/engine/mapping';

function arg(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

interface Row {
  file: string;
  speaker: string;
  emotion: string;
  intensity?: string;
}

/** manifest.csv with a header naming at least file, speaker, emotion (intensity optional); no quoted commas. */
export function readEmotionManifest(text: string): Row[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.startsWith('#'));
  const header =
    lines
      .shift()
      ?.split(',')
      .map((h) => h.trim().toLowerCase()) ?? [];
  const col = (name: string): number => header.indexOf(name);
  for (const need of ['file', 'speaker', 'emotion']) if (col(need) < 0) throw new Error(`manifest.csv: no "${need}" column (header: ${header.join(',')})`);
  return lines.map((l) => {
    const v = l.split(',').map((x) => x.trim());
    return {
      file: v[col('file')]!,
      speaker: v[col('speaker')]!,
      emotion: v[col('emotion')]!,
      intensity: col('intensity') >= 0 ? v[col('intensity')] : undefined,
    };
  });
}

function table(title: string, figures: AucFigure[]): void {
  console.log(title);
  for (const f of figures) {
    const ci = Number.isFinite(f.low) ? `[${f.low.toFixed(3)}, ${f.high.toFixed(3)}]` : '[–]';
    console.log(
      `  ${f.output.padEnd(5)} ${`${f.positive}>${f.negative}`.padEnd(16)} AUC ${Number.isFinite(f.auc) ? f.auc.toFixed(3) : '–'} ${ci}  (${f.n[0]} vs ${f.n[1]} clips)`,
    );
  }
}

async function main(): Promise<void> {
  const dir = process.argv.slice(2).find((a, i, all) => !a.startsWith('--') && !(all[i - 1] ?? '').startsWith('--'));
  if (!dir) {
    process.stderr.write('usage: npm run fit:emotion -- DIR [--out FILE] [--folds 5] [--bootstrap 1000] [--l2 0.05]\n');
    process.exit(2);
  }
  const manifestFile = path.join(dir, 'manifest.csv');
  const manifestText = fs.readFileSync(manifestFile, 'utf8');
  const rows = readEmotionManifest(manifestText);
  const out = path.resolve(arg('--out', path.join(dir, EMOTION_MAPPING_FILE))!);
  const folds = Number(arg('--folds', '5'));
  const bootstrap = Number(arg('--bootstrap', '1000'));
  const fitOptions = { ...DEFAULT_FIT, l2: Number(arg('--l2', String(DEFAULT_FIT.l2))) };

  const cfg = loadConfig();
  // One thread: the fit runs next to a live service on shared machines; the corpus is read once.
  const engine = await EmotionEngine.load({
    modelsDir: cfg.MODELS_DIR,
    ffmpegPath: cfg.FFMPEG_PATH,
    ffprobePath: cfg.FFPROBE_PATH,
    intraOpThreads: 1,
    analysisThreads: 1,
  });
  const clips: Clip[] = [];
  let withoutSpeech = 0;
  try {
    for (const [i, row] of rows.entries()) {
      try {
        const ins = await engine.inspect(fs.readFileSync(path.join(dir, row.file)));
        const windows = ins.windows.filter((w) => w.speechSeconds >= MIN_SPEECH_SECONDS).map((w) => w.features);
        if (windows.length === 0) withoutSpeech++;
        else clips.push({ file: row.file, speaker: row.speaker, emotion: emotionClass(row.emotion), weight: intensityWeight(row.intensity), windows });
      } catch (err) {
        console.warn(`skipped ${row.file}: ${err instanceof Error ? err.message : String(err)}`);
      }
      if ((i + 1) % 100 === 0) console.log(`analysed ${i + 1}/${rows.length}`);
    }
  } finally {
    await engine.close();
  }
  const speakers = [...new Set(clips.map((c) => c.speaker))];
  const classes = Object.fromEntries([...new Set(clips.map((c) => c.emotion))].sort().map((e) => [e, clips.filter((c) => c.emotion === e).length]));
  console.log(
    `${clips.length} clips with speech from ${speakers.length} speakers (${withoutSpeech} without speech, ${rows.length - clips.length - withoutSpeech} unreadable); classes ${JSON.stringify(classes)}`,
  );
  if (speakers.length < 2) throw new Error('speaker-grouped cross-validation needs at least two speakers');

  const shipped = new Map(clips.map((c) => [c, clipScores(KNOWLEDGE_MAPPING, c)]));
  const shippedFigures = aucFigures(clips, shipped, bootstrap);
  table('shipped knowledge-based mapping (no fitting, so every speaker is unseen):', shippedFigures);
  const cvFigures = aucFigures(clips, crossValidatedScores(clips, folds, fitOptions), bootstrap);
  table(`fitted, out-of-speaker (${Math.min(folds, speakers.length)}-fold speaker-grouped CV, ${bootstrap} speaker-bootstrap draws):`, cvFigures);

  const manifestSha = crypto.createHash('sha256').update(manifestText).digest('hex');
  const source = `fit:emotion on ${path.basename(path.resolve(dir))}/manifest.csv (sha256 ${manifestSha.slice(0, 16)}…), ${clips.length} clips, ${speakers.length} speakers, prior: knowledge-based`;
  const mapping = fitMapping(clips, source, fitOptions);
  const round = (figs: AucFigure[]): unknown => figs.map((f) => ({ ...f, auc: +f.auc.toFixed(4), low: +f.low.toFixed(4), high: +f.high.toFixed(4) }));
  const record = {
    $comment: 'Written by `npm run fit:emotion`: the data and figures behind the mapping next to it.',
    source,
    fittedAt: new Date().toISOString(),
    manifest: { file: path.resolve(manifestFile), sha256: manifestSha, rows: rows.length },
    clips: clips.length,
    clipsWithoutSpeech: withoutSpeech,
    speakers: speakers.sort(),
    classes,
    options: { folds, bootstrap, ...fitOptions },
    features: FEATURE_NAMES,
    outOfSpeakerAuc: round(cvFigures),
    shippedMappingAuc: round(shippedFigures),
    mapping,
  };
  const bytes = mappingBytes(mapping, {
    fit_manifest_sha256: manifestSha,
    fit_clips: String(clips.length),
    fit_speakers: String(speakers.length),
    fit_out_of_speaker_auc: JSON.stringify(round(cvFigures)),
  });
  assertFeatureNames(out, bytes);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, bytes);
  fs.writeFileSync(`${out}.json`, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`wrote ${out} and ${out}.json`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
