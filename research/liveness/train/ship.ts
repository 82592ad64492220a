// Ships a training run's final spoof models: copies <run>/final/<model>.onnx into models/vendor/ beside the
// upstream licence, and points the model manifest's entry at it (file, sha256, where it came from). The worker then
// verifies and loads it like any vendored model; nothing else changes (same graph, inputs and outputs).
//   npx tsx research/liveness/train/ship.ts <run dir> <model>[,<model>...]
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');
const MANIFEST = path.join(ROOT, 'models', 'manifest.json');
const MAX_BYTES = 2 * 1024 * 1024;

/** Where each fine-tuned model lives under models/ and the upstream it was fine-tuned from. */
const DESTINATIONS: Record<string, { vendored: string; upstream: string }> = {
  'silent-face-v2': {
    vendored: 'vendor/silent-face/MiniFASNetV2_2.7_80x80.ft.onnx',
    upstream:
      'github.com/minivision-ai/Silent-Face-Anti-Spoofing@b6d5f04ad78778917853b25c778acef6d5626d15 resources/anti_spoof_models/2.7_80x80_MiniFASNetV2.pth (vendor/silent-face/MiniFASNetV2_2.7_80x80.onnx), fine-tuned by research/liveness/train (see NOTICE)',
  },
  'silent-face-v1se': {
    vendored: 'vendor/silent-face/MiniFASNetV1SE_4.0_80x80.ft.onnx',
    upstream:
      'github.com/minivision-ai/Silent-Face-Anti-Spoofing@b6d5f04ad78778917853b25c778acef6d5626d15 resources/anti_spoof_models/4_0_0_80x80_MiniFASNetV1SE.pth (vendor/silent-face/MiniFASNetV1SE_4.0_80x80.onnx), fine-tuned by research/liveness/train (see NOTICE)',
  },
  'faceplugin-liveness': {
    vendored: 'vendor/faceplugin/fr_liveness.ft.onnx',
    upstream: 'npm faceplugin-face-recognition-js@0.0.1 model/fr_liveness.onnx, fine-tuned by research/liveness/train (see NOTICE)',
  },
};

function main(): void {
  const [run, list] = process.argv.slice(2);
  if (!run || !list) throw new Error('usage: ship.ts <run dir> <model>[,<model>...]');
  const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as { models: Array<Record<string, unknown> & { name: string }> };
  for (const name of list.split(',')) {
    const dest = DESTINATIONS[name];
    if (!dest) throw new Error(`no destination for ${name}`);
    const from = path.join(run, 'final', `${name}.onnx`);
    const bytes = fs.readFileSync(from);
    if (bytes.length > MAX_BYTES) throw new Error(`${from} is ${bytes.length} bytes, over 2 MiB`);
    const to = path.join(ROOT, 'models', dest.vendored);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.writeFileSync(to, bytes);
    const entry = manifest.models.find((m) => m.name === name);
    if (!entry) throw new Error(`manifest has no ${name}`);
    entry.file = path.basename(dest.vendored);
    entry.source = { vendored: dest.vendored, upstream: dest.upstream };
    entry.sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    console.log(`${name}: ${path.relative(ROOT, to)} (${bytes.length} bytes, sha256 ${String(entry.sha256)})`);
  }
  fs.writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
  execFileSync('npx', ['prettier', '--write', MANIFEST], { stdio: 'ignore' });
}

main();
