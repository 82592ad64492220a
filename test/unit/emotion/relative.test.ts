// The features measured against the recording itself (workers/emotion/engine/relative.ts): a recording with at
// least three windows of 1.5 s of speech gets each window's F0 and level relative to its median window; a
// shorter one keeps them missing, so the mapping reads them as the reference (no effect).
import { expect } from 'chai';
import { FEATURE_NAMES, type WindowAnalysis } from '../../../workers/emotion/engine/features';
import { applyRecordingBaseline, BASELINE_MIN_SPEECH_SECONDS, BASELINE_MIN_WINDOWS } from '../../../workers/emotion/engine/relative';

function window(f0: number, levelDb: number, speechSeconds = 4): WindowAnalysis {
  const features = Object.fromEntries(FEATURE_NAMES.map((n) => [n, Number.NaN])) as WindowAnalysis['features'];
  features.f0_mean_st = f0;
  return { speechRatio: speechSeconds / 5, speechSeconds, levelDb, features };
}

describe('emotion engine: features against the recording’s own baseline', () => {
  it('gives each window of a recording with three or more spoken windows its F0 and level against the median window', () => {
    const w = [window(30, -20), window(33, -14), window(29, -35), window(30, -21)];
    expect(BASELINE_MIN_WINDOWS).to.equal(3);
    applyRecordingBaseline(w);
    // Medians of 30, 33, 29, 30 and of −20, −14, −35, −21.
    expect(w.map((x) => x.features.f0_rel_st)).to.deep.equal([0, 3, -1, 0]);
    expect(w.map((x) => x.features.level_rel_db)).to.deep.equal([0.5, 6.5, -14.5, -0.5]);
  });

  it('leaves them missing in a short recording (fewer than three windows with 1.5 s of speech)', () => {
    const w = [window(30, -20), window(33, -14), window(29, -35, BASELINE_MIN_SPEECH_SECONDS - 0.1)];
    applyRecordingBaseline(w);
    for (const x of w) {
      expect(x.features.f0_rel_st).to.be.NaN;
      expect(x.features.level_rel_db).to.be.NaN;
    }
  });

  it('gives a short window inside a long recording its values too, and a silent one none', () => {
    const w = [window(30, -20), window(31, -20), window(32, -20), window(36, -40, 0.5), window(Number.NaN, Number.NaN, 0)];
    applyRecordingBaseline(w);
    expect(w[3]!.features.f0_rel_st).to.equal(5);
    expect(w[3]!.features.level_rel_db).to.equal(-20);
    expect(w[4]!.features.f0_rel_st).to.be.NaN;
  });
});
