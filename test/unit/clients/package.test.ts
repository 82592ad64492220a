// The typed client package (clients/typescript): its generated half follows the OpenAPI documents (regenerated here
// in memory, each committed file must be exactly what the build writes, so a changed document without
// `npm run build:client` fails), and it depends on nothing of ours but the public HTTP contracts.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { generatedClientTypes } from '../../../dev/client-types';
import { projectRoot } from '../../../shared/paths';

const SRC = path.join(projectRoot, 'clients', 'typescript', 'src');

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('clients/typescript (the typed client package)', function () {
  // openapi-typescript and Prettier over both documents: a few seconds on a busy machine.
  this.timeout(120_000);

  it('holds in src/generated/ exactly the types openapi-typescript makes of both OpenAPI documents as they are now', async () => {
    const files = await generatedClientTypes();
    expect([...files.keys()].map((f) => path.basename(f)).sort()).to.deep.equal(['emotion.ts', 'liveness.ts']);
    for (const [file, text] of files) {
      const committed = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
      const lines = committed.split('\n');
      const at = text.split('\n').findIndex((line, i) => line !== lines[i]);
      expect(committed === text, `${path.relative(projectRoot, file)} differs from its document from line ${at + 1}: run npm run build:client`).to.equal(true);
    }
  });

  it('imports only its own files and openapi-fetch: nothing from api/, workers/ or shared/', () => {
    const outside: string[] = [];
    for (const file of tsFiles(SRC)) {
      const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
      for (const st of sf.statements) {
        if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) || !st.moduleSpecifier || !ts.isStringLiteral(st.moduleSpecifier)) continue;
        const spec = st.moduleSpecifier.text;
        const inside = spec.startsWith('.') && path.resolve(path.dirname(file), spec).startsWith(SRC);
        if (!inside && spec !== 'openapi-fetch') outside.push(`${path.relative(projectRoot, file)}: ${spec}`);
      }
    }
    expect(outside).to.deep.equal([]);
  });
});
