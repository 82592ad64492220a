// Keeps the shape of the prose (docs/STYLE.md, "Writing"): the README is a front door of at most 20 KB whose commands
// exist and whose figures link to the files holding their history; no session numbers in the README, docs/ or
// product code; research/README.md indexes every script. Pure: reads files, starts nothing.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../shared/paths';

const README_MAX_BYTES = 20_000;
const LINE_MAX_CHARS = 200;
const SESSION = /\bsessions? \d+/i;
const PRODUCT_DIRS = ['api', 'workers', 'shared', 'models', 'dev', 'deploy'];
const TEXT_FILE = /\.(ts|js|mjs|cjs|lua|sh|ya?ml|md|patch|praat|conf|sql)$|^Dockerfile/;

const read = (rel: string): string => fs.readFileSync(path.join(projectRoot, rel), 'utf8');
const readme = (): string => read('README.md');

function filesUnder(rel: string, keep: (name: string) => boolean): string[] {
  return fs.readdirSync(path.join(projectRoot, rel), { withFileTypes: true }).flatMap((e) => {
    const child = path.posix.join(rel, e.name);
    if (e.isDirectory()) return ['node_modules', 'dist'].includes(e.name) ? [] : filesUnder(child, keep);
    return keep(e.name) ? [child] : [];
  });
}

/** The lines of a Markdown text outside ``` fences, with their 1-based numbers. */
function proseLines(text: string): { n: number; line: string }[] {
  let fenced = false;
  return text.split('\n').flatMap((line, i) => {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      return [];
    }
    return fenced ? [] : [{ n: i + 1, line }];
  });
}

/** The text of a level-2 section, up to the next level-2 heading. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n## ${heading}`);
  expect(start, `README section "${heading}"`).to.be.greaterThan(-1);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

const relativeLinks = (text: string): string[] => [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((href) => !/^[a-z]+:|^#/.test(href));

describe('the prose keeps its shape', () => {
  describe('README.md, the front door', () => {
    it(`is at most ${README_MAX_BYTES.toLocaleString('en')} bytes`, () => {
      expect(Buffer.byteLength(readme())).to.be.at.most(README_MAX_BYTES);
    });

    it(`has no line over ${LINE_MAX_CHARS} characters outside code blocks`, () => {
      const long = proseLines(readme())
        .filter(({ line }) => line.length > LINE_MAX_CHARS)
        .map(({ n, line }) => `${n}: ${line.length} characters`);
      expect(long).to.deep.equal([]);
    });

    it('has the front door sections in order', () => {
      const headings = [...readme().matchAll(/^## (.+)$/gm)].map((m) => m[1] ?? '');
      const expected = ['Two commands', 'How it fits together', 'Configuration', 'Current figures', 'Where to read next', 'Tests'];
      expect(headings.filter((h) => expected.includes(h))).to.deep.equal(expected);
    });

    it('names only npm scripts that package.json has', () => {
      const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
      const named = [...readme().matchAll(/\bnpm run (?:-s )?([\w:.-]+)/g)].map((m) => m[1] ?? '');
      expect(named.filter((s) => !scripts.includes(s))).to.deep.equal([]);
      for (const builtin of ['start', 'test']) expect(scripts).to.include(builtin);
    });

    it('gives at most 12 current figures, each dated and linked to the file holding its history', () => {
      const rows = section(readme(), 'Current figures')
        .split('\n')
        .filter((l) => l.startsWith('|') && !/^\|[\s|:-]+\|$/.test(l))
        .slice(1);
      expect(rows.length).to.be.within(1, 12);
      for (const row of rows) {
        expect(row, row).to.match(/\b20\d\d-\d\d-\d\d\b/);
        const history = relativeLinks(row).filter((href) => /^(bench|research)\/.*results\/[\w.-]+\.md$/.test(href));
        expect(history, `${row}: a link to bench/results/ or research/<area>/results/`).to.have.length(1);
        const [file = ''] = history;
        expect(fs.existsSync(path.join(projectRoot, file)), file).to.equal(true);
      }
    });

    it('links only to files that exist', () => {
      const missing = relativeLinks(readme()).filter((href) => !fs.existsSync(path.join(projectRoot, href.split('#')[0] ?? '')));
      expect(missing).to.deep.equal([]);
    });
  });

  it('no session numbers in the README, docs/ or product code (they belong in notes and commit messages)', () => {
    const files = ['README.md', ...filesUnder('docs', (n) => n.endsWith('.md')), ...PRODUCT_DIRS.flatMap((d) => filesUnder(d, (n) => TEXT_FILE.test(n)))];
    const hits = files.flatMap((f) =>
      read(f)
        .split('\n')
        .flatMap((line, i) => (SESSION.test(line) ? [`${f}:${i + 1}: ${line.match(SESSION)?.[0]}`] : [])),
    );
    expect(hits).to.deep.equal([]);
  });

  it('research/README.md indexes every script under research/', () => {
    const index = read('research/README.md');
    const scripts = filesUnder('research', (n) => /\.(ts|py)$/.test(n)).map((f) => path.posix.relative('research', f));
    expect(scripts.filter((s) => !index.includes(`\`${s}\``))).to.deep.equal([]);
  });
});
