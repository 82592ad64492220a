// Owns the project's on-disk locations, so code runs the same from source (tsx) and from dist/.
import fs from 'node:fs';
import path from 'node:path';

function findProjectRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'models'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`project root not found above ${start}`);
    dir = parent;
  }
}

export const projectRoot = findProjectRoot(__dirname);
export const varDir = path.join(projectRoot, 'var');
export const defaultModelsDir = path.join(projectRoot, 'models', 'dist');

/** Resolves a project script so a parent process can spawn it whether we run from .ts sources or compiled .js. */
export function entryPoint(relativeWithoutExt: string): string {
  const compiled = __filename.endsWith('.js');
  const base = compiled ? path.join(projectRoot, 'dist') : projectRoot;
  return path.join(base, `${relativeWithoutExt}${compiled ? '.js' : '.ts'}`);
}
