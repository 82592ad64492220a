// The console's asset build (`npm run build:console`, also run by `npm run build` and `pretest`): type-checks the
// browser code in client/ under its own tsconfig (DOM lib, strict), bundles each page script with the modules it
// imports (validation.ts, the server's own form rules, among them) into one classic script with esbuild, and writes
// every asset as <name>-<first 10 hex of its sha256>.<ext> into dist/console-assets/, with the manifest the server
// reads (serve.ts) beside the folder, as dist/console-assets.json.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import ts from 'typescript';
import { projectRoot } from '../../../shared/paths';
import { CONSOLE_ASSETS_DIR, CONSOLE_ASSETS_MANIFEST, type AssetName } from './serve';

const CLIENT_DIR = path.join(__dirname, '..', 'client');
const CLIENT_TSCONFIG = path.join(CLIENT_DIR, 'tsconfig.json');
/** Page scripts: each becomes one self-contained file. */
const SCRIPTS: Partial<Record<AssetName, string>> = { 'app.js': 'app.ts', 'try-emotion.js': 'try-emotion.ts', 'try-liveness.js': 'try-liveness.ts' };
/** Files copied as they are. */
const STATIC: Partial<Record<AssetName, string>> = { 'app.css': 'styles.css', 'try-it.css': 'try-it.css', 'icon.svg': 'icon.svg' };

/** Type-checks client/ (esbuild strips types without checking them); throws with the compiler's messages. */
function checkClient(): void {
  const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' };
  const fail = (diagnostics: readonly ts.Diagnostic[]): never => {
    throw new Error(`the console's browser code does not compile:\n${ts.formatDiagnostics(diagnostics, host)}`);
  };
  const parsed = ts.getParsedCommandLineOfConfigFile(CLIENT_TSCONFIG, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) });
  if (!parsed) throw new Error(`cannot read ${CLIENT_TSCONFIG}`);
  const diagnostics = ts.getPreEmitDiagnostics(ts.createProgram(parsed.fileNames, parsed.options));
  if (diagnostics.length > 0) fail(diagnostics);
}

/** One classic script (an IIFE, no globals leak) from an entry module and every module it imports. */
function bundle(entry: string): string {
  const result = buildSync({
    entryPoints: [path.join(CLIENT_DIR, entry)],
    // Paths in the output's comments are relative to it, so the bytes (and the hashed name) do not depend on the cwd.
    absWorkingDir: projectRoot,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    tsconfig: CLIENT_TSCONFIG,
    charset: 'utf8',
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/** `app.js` + body → `app-<hash>.js`: the one place a file name gets its content hash. */
function hashedName(name: string, body: string | Buffer): string {
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 10);
  const ext = path.extname(name);
  return `${path.basename(name, ext)}-${hash}${ext}`;
}

function buildConsoleAssets(): Record<string, string> {
  const outDir = CONSOLE_ASSETS_DIR;
  checkClient();
  const files = new Map<string, string | Buffer>();
  for (const [name, entry] of Object.entries(SCRIPTS)) files.set(name, bundle(entry));
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
