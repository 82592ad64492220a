import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../../shared/paths';

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('configuration has one home', () => {
  it('no module of api/, workers/ or shared/ reads process.env except shared/config.ts', () => {
    const offenders = ['api', 'workers', 'shared']
      .flatMap((d) => tsFiles(path.join(projectRoot, d)))
      .filter((f) => !f.endsWith(path.join('shared', 'config.ts')))
      .filter((f) => /process\.env\b/.test(fs.readFileSync(f, 'utf8')))
      .map((f) => path.relative(projectRoot, f));
    expect(offenders).to.deep.equal([]);
  });
});
