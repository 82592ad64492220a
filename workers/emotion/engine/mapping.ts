// Owns the rough/soft mapping at run time: loads the project-built ONNX model (reference normalisation and
// logistic weights live in the model, not here) and scores a batch of window feature vectors in one call.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { openSession, ort } from '../../runtime/onnx-session';
import { EMOTION_MAPPING_FILE, onnxMetadata } from '../../../models/emotion/build-mapping';
import { FEATURES_METADATA_KEY } from '../../../models/emotion/feature-names';
import { FEATURE_NAMES, type FeatureVector } from './features';

export interface Scores {
  rough: number;
  soft: number;
}

export class EmotionMapping {
  private constructor(
    private readonly session: ort.InferenceSession,
    readonly file: string,
    readonly sha256: string,
  ) {}

  static async load(modelsDir: string, intraOpThreads: number): Promise<EmotionMapping> {
    const file = path.join(modelsDir, EMOTION_MAPPING_FILE);
    if (!fs.existsSync(file)) throw new Error(`model file ${file} is missing: run "npm run models"`);
    const bytes = fs.readFileSync(file);
    assertFeatureNames(file, bytes);
    const session = await openSession(bytes, { intraOpThreads });
    const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    const mapping = new EmotionMapping(session, file, sha256);
    // Also run it once: a model that lists the right names but has the wrong shapes must not load either.
    const probe = await mapping.score([Object.fromEntries(FEATURE_NAMES.map((n) => [n, 0])) as FeatureVector]).catch((e: Error) => {
      throw new Error(`${file} does not accept ${FEATURE_NAMES.length} features: ${e.message}`);
    });
    if (probe.length !== 1) throw new Error(`${file} returned ${probe.length} rows for 1 input`);
    return mapping;
  }

  async score(rows: FeatureVector[]): Promise<Scores[]> {
    if (rows.length === 0) return [];
    const F = FEATURE_NAMES.length;
    const data = new Float32Array(rows.length * F);
    rows.forEach((r, i) => FEATURE_NAMES.forEach((name, j) => (data[i * F + j] = r[name])));
    const out = await this.session.run({ features: new ort.Tensor('float32', data, [rows.length, F]) });
    const scores = out.scores!.data as Float32Array;
    return rows.map((_, i) => ({ rough: scores[i * 2]!, soft: scores[i * 2 + 1]! }));
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}

/** Refuses a model whose metadata does not list exactly FEATURE_NAMES, in order: a model built for another
 *  feature list (or with columns swapped) would score garbage without any error. */
export function assertFeatureNames(file: string, bytes: Buffer): void {
  const stored = onnxMetadata(bytes)[FEATURES_METADATA_KEY];
  const expected = FEATURE_NAMES.join(',');
  if (stored !== expected) {
    throw new Error(`${file} was built for features [${stored ?? 'none recorded'}]; this engine computes [${expected}]: rebuild or refit it`);
  }
}
