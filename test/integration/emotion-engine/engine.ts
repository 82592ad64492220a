// Owns the emotion tests' shared engine: one real EmotionEngine (real ffmpeg, Silero and the built mapping
// model) per test file, and a helper that asserts the precise error an input is rejected with.
import { expect } from 'chai';
import { buildEmotionMapping } from '../../../models/emotion/build-mapping';
import { AppError } from '../../../shared/errors';
import { defaultModelsDir } from '../../../shared/paths';
import { EmotionEngine, type EmotionEngineOptions } from '../../../workers/emotion/engine';

export async function loadEngine(extra: Partial<EmotionEngineOptions> = {}): Promise<EmotionEngine> {
  // The mapping model is built by `npm run models`; building here keeps `npx mocha test/integration/emotion-engine` standalone.
  buildEmotionMapping(defaultModelsDir);
  return EmotionEngine.load({ modelsDir: defaultModelsDir, ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', intraOpThreads: 1, ...extra });
}

export async function expectRejection(p: Promise<unknown>, code: string, status = 400): Promise<AppError> {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected ${code}`).to.be.instanceOf(AppError);
  const e = caught as AppError;
  expect({ code: e.code, status: e.httpStatus }, e.message).to.deep.equal({ code, status });
  return e;
}
