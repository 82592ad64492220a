// The console's asset build (`npm run build:console`, also run by `npm run build` and `pretest`): type-checks the
// browser code in client/ under its own tsconfig (DOM lib, strict), bundles each page script with the modules it
// imports (validation.ts, the server's own form rules, among them) into one classic script, and writes every
// asset as <name>-<first 10 hex of its sha256>.<ext> into dist/console-assets/, with the manifest the server reads
// (assets.ts) beside the folder, as dist/console-assets.json. TypeScript's compiler API does the compiling; the
// bundling is a module table in one function.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { CONSOLE_ASSETS_DIR, CONSOLE_ASSETS_MANIFEST, type AssetName } from './assets';

const CLIENT_DIR = path.join(__dirname, 'client');
/** Page scripts: each becomes one self-contained file. */
const SCRIPTS: Partial<Record<AssetName, string>> = { 'app.js': 'app.ts', 'try-emotion.js': 'try-emotion.ts', 'try-liveness.js': 'try-liveness.ts' };
/** Files copied as they are. */
const STATIC: Partial<Record<AssetName, string>> = { 'app.css': 'styles.css', 'try-it.css': 'try-it.css', 'icon.svg': 'icon.svg' };

/** Type-checks client/ and returns every module it compiles, as CommonJS JavaScript by absolute source path. */
function compileClient(): Map<string, string> {
  const configFile = path.join(CLIENT_DIR, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(configFile, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) });
  if (!parsed) throw new Error(`cannot read ${configFile}`);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: false,
    module: ts.ModuleKind.CommonJS,
    sourceMap: false,
    declaration: false,
    outDir: '/virtual',
  };
  const program = ts.createProgram(parsed.fileNames, options);
  const out = new Map<string, string>();
  const emitted = program.emit(undefined, (fileName, text, _bom, _onError, sources) => {
    const source = sources?.[0];
    if (source && fileName.endsWith('.js')) out.set(path.resolve(source.fileName), text);
  });
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  if (diagnostics.length > 0) fail(diagnostics);
  return out;
}

function fail(diagnostics: readonly ts.Diagnostic[]): never {
  const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' };
  throw new Error(`the console's browser code does not compile:\n${ts.formatDiagnostics(diagnostics, host)}`);
}

/**
 * One script from an entry module and every relative module it reaches: each module's CommonJS body becomes a
 * function in a table keyed by its path, and a twelve-line loader runs the entry. No globals leak.
 */
function bundle(entry: string, modules: Map<string, string>): string {
  const ids = new Map<string, string>();
  const bodies: string[] = [];
  const visit = (file: string): string => {
    const known = ids.get(file);
    if (known) return known;
    const id = path.relative(path.dirname(CLIENT_DIR), file).replace(/\\/g, '/');
    ids.set(file, id);
    const js = modules.get(file);
    if (js === undefined) throw new Error(`${entry} imports ${file}, which the client tsconfig does not compile`);
    const body = js.replace(
      /require\("(\.{1,2}\/[^"]+)"\)/g,
      (_m, spec: string) => `require(${JSON.stringify(visit(path.resolve(path.dirname(file), `${spec}.ts`)))})`,
    );
    bodies.push(`${JSON.stringify(id)}: function (exports, require) {\n${body}\n}`);
    return id;
  };
  const entryId = visit(path.join(CLIENT_DIR, entry));
  return `(function () {
  var modules = {
${bodies.join(',\n')}
  };
  var cache = {};
  function require(id) {
    if (cache[id]) return cache[id];
    var exports = (cache[id] = {});
    modules[id](exports, require);
    return exports;
  }
  require(${JSON.stringify(entryId)});
})();
`;
}

/** `app.js` + body → `app-<hash>.js`: the one place a file name gets its content hash. */
function hashedName(name: string, body: string | Buffer): string {
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 10);
  const ext = path.extname(name);
  return `${path.basename(name, ext)}-${hash}${ext}`;
}

function buildConsoleAssets(): Record<string, string> {
  const outDir = CONSOLE_ASSETS_DIR;
  const modules = compileClient();
  const files = new Map<string, string | Buffer>();
  for (const [name, entry] of Object.entries(SCRIPTS)) files.set(name, bundle(entry, modules));
  for (const [name, source] of Object.entries(STATIC)) files.set(name, fs.readFileSync(path.join(CLIENT_DIR, source)));
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const manifest: Record<string, string> = {};
  for (const [name, body] of files) {
    manifest[name] = hashedName(name, body);
    fs.writeFileSync(path.join(outDir, manifest[name]), body);
  }
  fs.writeFileSync(CONSOLE_ASSETS_MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (require.main === module) {
  const manifest = buildConsoleAssets();
  console.log(`console assets → ${path.relative(process.cwd(), CONSOLE_ASSETS_DIR)}: ${Object.values(manifest).join(', ')}`);
}
