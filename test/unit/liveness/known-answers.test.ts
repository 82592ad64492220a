// Known answers: real live and spoof photos (permissively licensed, see test/fixtures/liveness/known-answers/SOURCES.md)
// must get the verdict they deserve from the fused engine, and every spoof model must land in its band, so a
// swapped live/fake output index, RGB fed where BGR is due, or a wrong normalisation fails here.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { LivenessEngine } from '../../../workers/liveness/engine';
import { modelsDir } from '../../fixtures/liveness/images';

const dir = path.join(__dirname, '..', '..', 'fixtures', 'liveness', 'known-answers');
// Each model's fake logit as measured when the fixtures were added, give or take this much: wide enough for
// another libjpeg or onnxruntime build, far narrower than the shift a preprocessing bug causes (several units).
const LOGIT_TOLERANCE = 1.5;
/** The documented default threshold (FAKE_THRESHOLD): spoofs must be flagged at it. */
const THRESHOLD = 0.15;

const fixtures: Array<{ file: string; label: 'live' | 'spoof'; logits: Record<string, number> }> = [
  { file: 'silentface-live-T1.jpg', label: 'live', logits: { 'faceplugin-liveness': -0.95, 'silent-face-v2': -9.7, 'silent-face-v1se': -12.73 } },
  { file: 'khanhn-live.jpg', label: 'live', logits: { 'faceplugin-liveness': -4.54, 'silent-face-v2': -4.73, 'silent-face-v1se': -4.78 } },
  { file: 'doubango-live-selfie.jpg', label: 'live', logits: { 'faceplugin-liveness': -8.4, 'silent-face-v2': -10.75, 'silent-face-v1se': -10.19 } },
  { file: 'silentface-print-F1.jpg', label: 'spoof', logits: { 'faceplugin-liveness': 9.95, 'silent-face-v2': 5.02, 'silent-face-v1se': 0.56 } },
  { file: 'silentface-screen-F2.jpg', label: 'spoof', logits: { 'faceplugin-liveness': 0.81, 'silent-face-v2': 5.03, 'silent-face-v1se': 4.44 } },
  { file: 'khanhn-screen.jpg', label: 'spoof', logits: { 'faceplugin-liveness': 0.14, 'silent-face-v2': 9.32, 'silent-face-v1se': 12.08 } },
];

describe('liveness engine: known answers on real photos', () => {
  let engine: LivenessEngine;
  before(async () => {
    engine = await LivenessEngine.load({ modelsDir, intraOpThreads: 1, fakeThreshold: THRESHOLD });
  });

  it('ships small fixtures with their licence and source recorded', () => {
    const sources = fs.readFileSync(path.join(dir, 'SOURCES.md'), 'utf8');
    for (const f of fixtures) {
      expect(fs.statSync(path.join(dir, f.file)).size).to.be.at.most(100 * 1024);
      expect(sources).to.contain(`\`${f.file}\``);
    }
  });

  for (const f of fixtures) {
    const verdict = f.label === 'live' ? 'live (likelihood < 0.05)' : `a spoof (likelihood > ${THRESHOLD})`;
    it(`calls ${f.file} ${verdict}, each spoof model within its band`, async () => {
      const { result, features } = await engine.analyzeDetailed(fs.readFileSync(path.join(dir, f.file)), 'jpeg');
      if (f.label === 'live') {
        expect(result.isFakeLikelihood).to.be.lessThan(0.05);
        expect(result.isFakeFace).to.equal(false);
      } else {
        expect(result.isFakeLikelihood).to.be.greaterThan(THRESHOLD);
        expect(result.isFakeFace).to.equal(true);
      }
      expect(Object.keys(features.spoofLogits)).to.have.members(Object.keys(f.logits));
      for (const [model, expected] of Object.entries(f.logits)) {
        expect(features.spoofLogits[model], model).to.be.closeTo(expected, LOGIT_TOLERANCE);
      }
    });
  }
});
