// Owns `npm run research:emotion:stimuli`: the rough and soft scores (summary means) of every controlled
// stimulus — the emotion-like resyntheses (dev/harness/emotion/stimuli.ts) and the one-factor voice-quality
// manipulations (dev/harness/emotion/phonation.ts) — for several espeak-ng voices, as the tables in
// docs/emotion-engine.md print them. Synthetic speech only: it shows the mapping moves in the documented
// directions, not how it does on real recordings. `--voices en-us,en+f3` picks voices; `--features` adds the
// window features of each stimulus.
import { buildEmotionMapping } from '../../models/emotion/build-mapping';
import { defaultModelsDir } from '../../shared/paths';
import { FixtureDir } from '../../dev/harness/emotion/audio';
import { MANIPULATIONS, manipulated, type Manipulation } from '../../dev/harness/emotion/phonation';
import { EMOTIONS, emotionLike } from '../../dev/harness/emotion/stimuli';
import { EmotionEngine } from '../../workers/emotion/engine';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const voices = (arg('--voices') ?? 'en-us,en+f3,en+m3').split(',');
  buildEmotionMapping(defaultModelsDir);
  const engine = await EmotionEngine.load({ modelsDir: defaultModelsDir, ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', intraOpThreads: 1 });
  const fx = new FixtureDir();
  try {
    const names = [...EMOTIONS, ...(Object.keys(MANIPULATIONS) as Manipulation[])];
    console.log(['voice', ...names].join(' | '));
    for (const voice of voices) {
      const cells: string[] = [];
      for (const name of names) {
        const file = (EMOTIONS as readonly string[]).includes(name)
          ? emotionLike(fx, voice, name as (typeof EMOTIONS)[number])
          : manipulated(fx, voice, name as Manipulation);
        const bytes = fx.read(file);
        const r = await engine.analyze(bytes);
        cells.push(`${r.summary.rough_mean.toFixed(2)} / ${r.summary.soft_mean.toFixed(2)}`);
        if (process.argv.includes('--features')) {
          const ins = await engine.inspect(bytes);
          const f = ins.windows[0]!.features;
          console.log(voice, name, JSON.stringify(Object.fromEntries(Object.entries(f).map(([k, v]) => [k, Math.round(v * 100) / 100]))));
        }
      }
      console.log([`${voice} (rough / soft)`, ...cells].join(' | '));
    }
  } finally {
    fx.remove();
    await engine.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
