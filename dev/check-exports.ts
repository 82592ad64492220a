// Owns the dead-export check run by `npm test` before mocha: every value export (function, class, const,
// enum) of the server, worker, shared, model, dev, CLI and client code must be imported by another file of the
// repository (tests, benchmarks and research count), and an exported type must at least be used in its own
// file. Syntax only (one parse per file, no type check), so it takes about a second.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');
const CHECKED = ['api/', 'workers/', 'shared/', 'models/', 'dev/', 'cli/', 'clients/'];
/** Exports reached by a file path or a name rather than an import: `file` or `file#name`. */
const ALLOWED: ReadonlySet<string> = new Set<string>([
  // The client package's entry and its generated types: what the package's users import.
  'clients/typescript/src/index.ts',
  'clients/typescript/src/generated/liveness.ts',
  'clients/typescript/src/generated/emotion.ts',
]);

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.endsWith('.d.ts') && fs.existsSync(path.join(ROOT, f)));
const known = new Set(files);

function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  return [`${base}.ts`, `${base}/index.ts`, base].find((f) => known.has(f));
}

interface Export {
  name: string;
  isType: boolean;
  line: number;
}
const exportsOf = new Map<string, Export[]>();
/** file → names imported from it by other files ('*' = all of them). */
const imported = new Map<string, Set<string>>();
const use = (file: string | undefined, name: string) => {
  if (!file) return;
  if (!imported.has(file)) imported.set(file, new Set());
  imported.get(file)!.add(name);
};
const exported = (node: ts.Node) => ts.canHaveModifiers(node) && !!ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

for (const file of files) {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const own: Export[] = [];
  const add = (name: string, node: ts.Node, isType: boolean) => own.push({ name, isType, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const target = resolve(file, node.moduleSpecifier.text);
      const clause = node.importClause;
      if (!clause) use(target, '*');
      else {
        if (clause.name) use(target, 'default');
        const b = clause.namedBindings;
        if (b && ts.isNamespaceImport(b)) use(target, '*');
        if (b && ts.isNamedImports(b)) for (const el of b.elements) use(target, (el.propertyName ?? el.name).text);
      }
    } else if (ts.isExportDeclaration(node)) {
      const target = node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) ? resolve(file, node.moduleSpecifier.text) : undefined;
      const clause = node.exportClause;
      if (!clause || ts.isNamespaceExport(clause)) use(target, '*');
      else
        for (const el of clause.elements) {
          if (target) use(target, (el.propertyName ?? el.name).text);
          add(el.name.text, el, node.isTypeOnly || el.isTypeOnly);
        }
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0]!)) {
      // import('./x') and require('./x') take the whole module.
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require')) {
        use(resolve(file, node.arguments[0].text), '*');
      }
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      use(resolve(file, node.argument.literal.text), node.qualifier && ts.isIdentifier(node.qualifier) ? node.qualifier.text : '*');
    } else if (ts.isModuleDeclaration(node) && !ts.isIdentifier(node.name)) {
      return; // `declare module 'x'` augments another module
    } else if (node.parent === sf && exported(node)) {
      const isDefault = ts.getModifiers(node as ts.HasModifiers)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
      if (ts.isVariableStatement(node)) {
        for (const d of node.declarationList.declarations) if (ts.isIdentifier(d.name)) add(d.name.text, d, false);
      } else if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) add(node.name.text, node, true);
      else if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isEnumDeclaration(node)) && (node.name || isDefault)) {
        add(isDefault ? 'default' : node.name!.text, node, false);
      }
    } else if (ts.isExportAssignment(node)) add('default', node, false);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  if (CHECKED.some((dir) => file.startsWith(dir))) exportsOf.set(file, own);
}

/** Occurrences of a name as a whole word in a file (the declaration is one). */
const uses = (file: string, name: string) => (fs.readFileSync(path.join(ROOT, file), 'utf8').match(new RegExp(`\\b${name}\\b`, 'g')) ?? []).length;

const dead: string[] = [];
for (const [file, list] of exportsOf) {
  if (ALLOWED.has(file)) continue;
  const taken = imported.get(file) ?? new Set<string>();
  if (taken.has('*')) continue;
  for (const e of list) {
    if (taken.has(e.name) || ALLOWED.has(`${file}#${e.name}`)) continue;
    // A type nobody imports is still fine when its own file uses it (in a signature, say).
    if (e.isType && uses(file, e.name) > 1) continue;
    dead.push(`${file}:${e.line} ${e.name}`);
  }
}
if (dead.length > 0) {
  console.error(`Exports no other file imports (remove them, drop the export, or allow-list them in dev/check-exports.ts):\n  ${dead.join('\n  ')}`);
  process.exit(1);
}
