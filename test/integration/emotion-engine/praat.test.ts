// Cross-check of the engine's voice measures against Praat, the reference implementation, on the same
// 8 kHz files: F0, F0 range, jitter and shimmer (local) must agree closely; HNR and CPPS are defined a little
// differently (window, smoothing), so they must only fall in the same range and order.
import { expect } from 'chai';
import { FixtureDir } from '../../../dev/harness/emotion/audio';
import { praatMeasures } from '../../../dev/harness/praat';
import type { EmotionEngine } from '../../../workers/emotion/engine';
import { loadEngine } from './engine';

describe('emotion engine: voice measures agree with Praat', () => {
  let engine: EmotionEngine;
  const fx = new FixtureDir();
  const voices = ['en-us', 'en+m3', 'en+f3', 'en+croak'];
  const rows: Array<{ voice: string; ours: Record<string, number>; praat: ReturnType<typeof praatMeasures> }> = [];

  before(async function () {
    this.timeout(120_000);
    engine = await loadEngine();
    for (const voice of voices) {
      fx.speak(`${voice}.wav`, { voice, text: 'The quick brown fox jumps over the lazy dog. She sells sea shells.' });
      // One analysis window at the engine's own rate, so both tools see identical samples.
      const file = fx.sox([`${voice}.wav`], `${voice}-8k.wav`, ['rate', '8000', 'trim', '0', '4.9']);
      const ins = await engine.inspect(fx.read(`${voice}-8k.wav`));
      const f = ins.windows[0]!.features;
      rows.push({
        voice,
        ours: {
          f0Hz: 27.5 * 2 ** (f.f0_mean_st / 12),
          f0RangeSt: f.f0_range_st,
          jitter: f.jitter_local,
          shimmer: f.shimmer_local,
          hnr: f.hnr_db,
          cpps: f.cpps_db,
        },
        praat: praatMeasures(file),
      });
    }
  });
  after(async () => {
    fx.remove();
    await engine.close();
  });

  it('finds the same mean F0 (within 3 %) and F0 range (within 0.6 st)', () => {
    for (const r of rows) {
      expect(r.ours.f0Hz, r.voice).to.be.closeTo(r.praat.f0Hz, 0.03 * r.praat.f0Hz);
      expect(r.ours.f0RangeSt, r.voice).to.be.closeTo(r.praat.f0RangeSt, 0.6);
    }
  });

  it('finds the same local jitter (within 0.3 points or 20 %) and shimmer (within 2.5 points)', () => {
    for (const r of rows) {
      expect(r.ours.jitter!, r.voice).to.be.closeTo(r.praat.jitter, Math.max(0.003, 0.2 * r.praat.jitter));
      expect(r.ours.shimmer!, r.voice).to.be.closeTo(r.praat.shimmer, 0.025);
    }
  });

  it("puts HNR between Praat's (ac) and (cc) variants, ±2 dB, and ranks the croaky voice lowest like Praat", () => {
    for (const r of rows) {
      const lo = Math.min(r.praat.hnrAc, r.praat.hnrCc) - 2;
      const hi = Math.max(r.praat.hnrAc, r.praat.hnrCc) + 2;
      expect(r.ours.hnr!, r.voice).to.be.within(lo, hi);
    }
    const lowest = (key: (x: (typeof rows)[number]) => number): string => rows.reduce((a, b) => (key(a) <= key(b) ? a : b)).voice;
    expect(lowest((x) => x.ours.hnr!)).to.equal(lowest((x) => x.praat.hnrAc));
  });

  it("finds CPPS within 3 dB of Praat's", () => {
    for (const r of rows) expect(r.ours.cpps!, r.voice).to.be.closeTo(r.praat.cpps, 3);
  });
});
