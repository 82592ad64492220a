// Known answers: real live and spoof photos (permissively licensed, see test/fixtures/liveness/known-answers/SOURCES.md)
// must get the verdict they deserve from the fused engine, and every spoof model and face cue must land in its
// band, so a swapped live/fake output index, RGB fed where BGR is due, a wrong normalisation or a broken cue fails here.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { LivenessEngine } from '../../../workers/liveness/engine';
import type { CueName, Cues } from '../../../workers/liveness/engine/cues';
import { modelsDir } from '../../fixtures/liveness/images';

const dir = path.join(__dirname, '..', '..', 'fixtures', 'liveness', 'known-answers');
// Each model the engine runs (fr_liveness is off by default, see spoof.ts): its fake logit as measured with the
// shipped weights (the fine-tuned MiniFASNets, 2026-12-06), give or take this much: wide enough for
// another libjpeg or onnxruntime build, far narrower than the shift a preprocessing bug causes (several units).
const LOGIT_TOLERANCE = 1.5;
/** The documented default threshold (FAKE_THRESHOLD): spoofs must be flagged at it. */
const THRESHOLD = 0.15;

/**
 * Each face cue as measured when the cues were added, give or take 0.3 of its standard deviation over the
 * fitting frames (fusion.json): a decoder difference moves a cue far less, a formula or channel bug far more.
 */
const CUE_TOLERANCE: Record<CueName, number> = { satStd: 0.016, chromaStd: 1.4, hfRatio: 0.22, highlightShare: 0.022, dynRange: 0.05, lbpEntropy: 0.055 };

const fixtures: Array<{ file: string; label: 'live' | 'spoof'; logits: Record<string, number>; cues: Cues }> = [
  {
    file: 'silentface-live-T1.jpg',
    label: 'live',
    logits: { 'silent-face-v2': -6.46, 'silent-face-v1se': -8.93 },
    cues: { satStd: 0.182, chromaStd: 10.058, hfRatio: -0.681, highlightShare: 0, dynRange: 0.763, lbpEntropy: 2.792 },
  },
  {
    file: 'khanhn-live.jpg',
    label: 'live',
    logits: { 'silent-face-v2': -4.67, 'silent-face-v1se': -3.85 },
    cues: { satStd: 0.086, chromaStd: 9.557, hfRatio: -0.829, highlightShare: 0, dynRange: 0.63, lbpEntropy: 3.009 },
  },
  {
    file: 'doubango-live-selfie.jpg',
    label: 'live',
    logits: { 'silent-face-v2': -8.97, 'silent-face-v1se': -6.83 },
    cues: { satStd: 0.097, chromaStd: 8.953, hfRatio: -0.106, highlightShare: 0, dynRange: 0.527, lbpEntropy: 3.04 },
  },
  {
    file: 'silentface-print-F1.jpg',
    label: 'spoof',
    logits: { 'silent-face-v2': 4.21, 'silent-face-v1se': 1.68 },
    cues: { satStd: 0.088, chromaStd: 7.351, hfRatio: -0.99, highlightShare: 0, dynRange: 0.567, lbpEntropy: 2.627 },
  },
  {
    file: 'silentface-screen-F2.jpg',
    label: 'spoof',
    logits: { 'silent-face-v2': 7.46, 'silent-face-v1se': 4.91 },
    cues: { satStd: 0.209, chromaStd: 12.453, hfRatio: -1.805, highlightShare: 0.211, dynRange: 0.969, lbpEntropy: 2.495 },
  },
  {
    file: 'khanhn-screen.jpg',
    label: 'spoof',
    logits: { 'silent-face-v2': 5.49, 'silent-face-v1se': 6.69 },
    cues: { satStd: 0.151, chromaStd: 18.723, hfRatio: -1.333, highlightShare: 0.005, dynRange: 0.754, lbpEntropy: 2.67 },
  },
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
    it(`calls ${f.file} ${verdict}, each spoof model and face cue within its band`, async () => {
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
      for (const [cue, expected] of Object.entries(f.cues) as Array<[CueName, number]>) {
        expect(features.cues[cue], cue).to.be.closeTo(expected, CUE_TOLERANCE[cue]);
      }
    });
  }
});
