// Nothing imports from research/ but the tests of research code (docs/STYLE.md): a test of product code that
// leans on an evaluation or fitting module breaks when the research moves on. Pure: reads files.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../shared/paths';

/** The tests whose subject is research code. */
const TESTS_OF_RESEARCH = ['test/integration/emotion-engine/fit.test.ts', 'test/unit/liveness/fusion.test.ts'];

function tsFilesUnder(rel: string): string[] {
  return fs.readdirSync(path.join(projectRoot, rel), { withFileTypes: true }).flatMap((e) => {
    const child = path.posix.join(rel, e.name);
    if (e.isDirectory()) return tsFilesUnder(child);
    return e.name.endsWith('.ts') ? [child] : [];
  });
}

/** What `file` imports by a relative path (static and dynamic imports), as paths from the repository root. */
function relativeImports(file: string): string[] {
  const text = fs.readFileSync(path.join(projectRoot, file), 'utf8');
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)));
}

describe('tests and research', () => {
  it('only the tests of research code import from research/', () => {
    const leaning = tsFilesUnder('test')
      .filter((f) => !TESTS_OF_RESEARCH.includes(f))
      .filter((f) => relativeImports(f).some((target) => target.startsWith('research/')));
    expect(leaning).to.deep.equal([]);
  });
});
