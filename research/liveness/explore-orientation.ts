// How the engine's orientation search does on the dev sets (issue 28 item 2), the figures behind UPRIGHT_SCORE:
// `npx tsx research/liveness/explore-orientation.ts <dir> [<dir>...]`.
// 1. Every full frame as stored (EXIF applied by the engine) and every third one turned 90/180/270 degrees without
//    EXIF, through the engine: whether the search ran and whether the turn it chose brings the face upright ("ok"),
//    another one ("WRONG"), or no turn showed a confident face ("none"). Upright frames that were searched are listed.
// 2. For every fourth frame, as stored and upside down: BlazeFace front's best face at each clockwise quarter turn
//    (score, eye-line roll in degrees), the view the search compares.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../../shared/config';
import { verifiedModelPath } from '../../models/manifest';
import { openSession } from '../../workers/runtime/onnx-session';
import { BlazeFace, largest } from '../../workers/liveness/engine/detect';
import { decodeImage } from '../../workers/liveness/engine/decode';
import { configuredEngineOptions, LivenessEngine } from '../../workers/liveness/engine/index';
import { eyeRoll } from '../../workers/liveness/engine/orientation';
import { readManifest } from './evaluation';

/** The frame as displayed (its EXIF orientation applied), turned `deg` clockwise, with no orientation tag. */
const turned = async (bytes: Buffer, deg: number) =>
  sharp(await sharp(bytes).rotate().toBuffer())
    .rotate(deg)
    .jpeg({ quality: 95 })
    .toBuffer();

async function main() {
  const cfg = loadConfig();
  const engine = await LivenessEngine.load(configuredEngineOptions(cfg));
  const front = new BlazeFace(await openSession(verifiedModelPath(cfg.MODELS_DIR, 'blazeface-front'), { intraOpThreads: 1 }), 128, 'blazeface-front');
  const stats: Record<string, number> = {};
  const inc = (k: string) => (stats[k] = (stats[k] ?? 0) + 1);
  const views: string[] = [];
  for (const dir of process.argv.slice(2)) {
    const rows = readManifest(dir).filter((r) => r.kind === 'full');
    for (const [i, r] of rows.entries()) {
      const bytes = fs.readFileSync(path.join(dir, r.file));
      for (const rot of [0, 90, 180, 270]) {
        if (rot !== 0 && i % 3 !== 0 && !(rot === 180 && i % 4 === 0)) continue;
        const b = rot ? await turned(bytes, rot) : bytes;
        const format = rot || !/\.png$/i.test(r.file) ? 'jpeg' : 'png';
        if (i % 3 === 0 || rot === 0) {
          try {
            const { features, result } = await engine.analyzeDetailed(b, format);
            const o = features.orientation;
            const expected = (4 - rot / 90) % 4;
            inc(`${rot}° ${o.searched ? 'searched' : 'direct'} ${o.upright ? (o.turns === expected ? 'ok' : 'WRONG') : 'none'}`);
            if (rot === 0 && o.searched) console.log(r.label, r.file, o, result.reasons);
          } catch {
            inc(`${rot}° refused`);
          }
        }
        if (i % 4 === 0 && (rot === 0 || rot === 180)) {
          const img = await decodeImage(b, format);
          const cells: string[] = [];
          for (const t of [0, 1, 2, 3] as const) {
            const f = largest((await front.detect(img, t)).filter((x) => x.score >= 0.75));
            cells.push(f ? `${f.score.toFixed(2)} r${eyeRoll(f)!.toFixed(0).padStart(4)}` : '    -     ');
          }
          views.push(`${r.label.padEnd(5)} ${String(rot).padStart(3)}° ${cells.join(' | ')} ${r.file}`);
        }
      }
    }
  }
  console.log(stats);
  console.log('\nBlazeFace front, best confident face at 0/1/2/3 clockwise quarter turns of the frame (score, roll):');
  for (const v of views) console.log(v);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
