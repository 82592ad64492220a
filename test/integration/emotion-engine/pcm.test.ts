// The in-process PCM decoder (WAV, AIFF, AIFF-C sowt) against ffmpeg, which it replaces for those files:
// the same samples (bit-exact but for the last few), the same length to a sample, and features and scores
// that agree; and the analysis thread pool gives exactly what one thread gives.
import { expect } from 'chai';
import fs from 'node:fs';
import { FixtureDir } from '../../../dev/harness/emotion/audio';
import type { EmotionEngine } from '../../../workers/emotion/engine';
import { AnalysisBudget } from '../../../workers/emotion/engine/analysis-budget';
import { ANALYSIS_RATE, decode } from '../../../workers/emotion/engine/decode';
import { decodePcm, pcmDecodable, resample } from '../../../workers/emotion/engine/pcm';
import { sniff } from '../../../workers/emotion/engine/sniff';
import { loadEngine } from './engine';

describe('emotion engine: in-process PCM decoding and the analysis threads', () => {
  let engine: EmotionEngine;
  const fx = new FixtureDir();

  before(async () => {
    engine = await loadEngine();
    fx.speak('speech.wav'); // 22.05 kHz mono
    fx.sox(['speech.wav', 'speech.wav'], 'speech16k.wav', ['rate', '16000']);
    fx.sox(['speech.wav', 'speech.wav'], 'speech44s.wav', ['rate', '44100', 'channels', '2']);
    fx.sox(['speech.wav', 'speech.wav'], 'speech48.wav', ['rate', '48000']);
    fx.sox(['speech.wav', 'speech.wav'], 'speech11.wav', ['rate', '11025']);
    fx.ffmpeg('speech44s.wav', 'speech.aiff', []);
    fx.ffmpeg('speech16k.wav', 'sowt.aifc', ['-f', 'aiff', '-c:a', 'pcm_s16le']);
  });
  after(async () => {
    fx.remove();
    await engine.close();
  });

  const cases = [
    { file: 'speech16k.wav', demuxer: 'wav', rate: 16000, channels: 1 },
    { file: 'speech44s.wav', demuxer: 'wav', rate: 44100, channels: 2 },
    { file: 'speech48.wav', demuxer: 'wav', rate: 48000, channels: 1 },
    { file: 'speech11.wav', demuxer: 'wav', rate: 11025, channels: 1 },
    { file: 'speech.wav', demuxer: 'wav', rate: 22050, channels: 1 },
    { file: 'speech.aiff', demuxer: 'aiff', rate: 44100, channels: 2 },
    { file: 'sowt.aifc', demuxer: 'aiff', rate: 16000, channels: 1 },
  ];
  for (const c of cases) {
    it(`decodes ${c.file} (${c.rate} Hz, ${c.channels} ch) to ffmpeg's exact samples (but the last few)`, async () => {
      const bytes = fx.read(c.file);
      const s = sniff(bytes);
      expect(s.pcm).to.include({ sampleRate: c.rate, channels: c.channels });
      expect(pcmDecodable(s.pcm!, ANALYSIS_RATE)).to.equal(true);
      const ours = await decodePcm(bytes, s.pcm!, ANALYSIS_RATE);
      const ref = await decode({
        ffmpegPath: 'ffmpeg',
        file: fx.path(c.file),
        demuxer: c.demuxer,
        approxDuration: 0,
        segments: 1,
        deadline: new AnalysisBudget(),
      });
      expect(Math.abs(ours.length - ref.length), 'length').to.be.at.most(1);
      // The same filter in the same 16-bit arithmetic: equal away from the last few samples (each decoder pads
      // the end its own way, and ffmpeg's length wanders within a sample) but for an occasional 1-LSB tie that
      // the two round differently: sox's random dither makes new fixture samples each run, and about one run in
      // four of the 11025 Hz case meets such a tie. More than 1 LSB anywhere is a different filter.
      let worst = 0;
      let ties = 0;
      for (let i = 0; i < Math.min(ours.length, ref.length) - 8; i++) {
        const lsb = Math.round(Math.abs(ours[i]! - ref[i]!) * 32768);
        worst = Math.max(worst, lsb);
        if (lsb > 0) ties++;
      }
      expect(worst, 'max difference in LSB').to.be.at.most(1);
      expect(ties, 'samples off by one LSB').to.be.at.most(Math.ceil(ours.length / 10_000));
    });
  }

  it('gives the same features and scores as the ffmpeg path (the same audio as FLAC, which ffmpeg decodes)', async () => {
    for (const wav of ['speech44s.wav', 'speech16k.wav']) {
      const flac = fx.ffmpeg(wav, `${wav}.flac`, []);
      const a = await engine.inspect(fx.read(wav));
      const b = await engine.inspect(fs.readFileSync(flac));
      expect(a.windows.length).to.equal(b.windows.length);
      for (let i = 0; i < a.windows.length; i++) {
        for (const [k, v] of Object.entries(a.windows[i]!.features)) {
          const w = b.windows[i]!.features[k as keyof (typeof a.windows)[0]['features']];
          if (Number.isNaN(v)) expect(w, `${wav} ${k}`).to.be.NaN;
          else expect(Math.abs(v - w), `${wav} window ${i} ${k}: ${v} vs ${w}`).to.be.at.most(Math.max(0.02 * Math.abs(w), 0.05));
        }
      }
      const ra = await engine.analyze(fx.read(wav));
      const rb = await engine.analyze(fs.readFileSync(flac));
      ra.results.forEach((r, i) => {
        expect(Math.abs(r.rough - rb.results[i]!.rough), `${wav} rough ${i}`).to.be.at.most(0.01);
        expect(Math.abs(r.soft - rb.results[i]!.soft), `${wav} soft ${i}`).to.be.at.most(0.01);
      });
      // 16-bit PCM: the bit rate is rate × channels × 16, which FLAC's (content-dependent) figure is not.
      expect(ra.meta).to.deep.equal({ ...rb.meta, format_name: 'wav', bit_rate: rb.meta.sample_rate * rb.meta.channels * 16 });
    }
  });

  it('reports the meta ffprobe would for AIFF and AIFF-C sowt', async () => {
    const a = await engine.analyze(fx.read('speech.aiff'));
    expect(a.meta).to.deep.equal({ sample_rate: 44100, channels: 2, bit_rate: 1411200, format_name: 'aiff' });
    const b = await engine.analyze(fx.read('sowt.aifc'));
    expect(b.meta).to.deep.equal({ sample_rate: 16000, channels: 1, bit_rate: 256000, format_name: 'aiff' });
  });

  it('resamples in ranges (as the threads do) to exactly the whole-signal result', () => {
    const x = new Float32Array(44100);
    for (let i = 0; i < x.length; i++) x[i] = Math.round(8000 * Math.sin(i * 0.05) + 3000 * Math.sin(i * 0.9));
    const whole = resample(x, 44100, 8000);
    expect(whole.length).to.equal(8000);
    const parts = [resample(x, 44100, 8000, 0, 2999), resample(x, 44100, 8000, 2999, 8000)];
    expect(Array.from([...parts[0]!, ...parts[1]!])).to.deep.equal(Array.from(whole));
  });

  it('gives exactly the same results with the thread pool as in one thread', async () => {
    const single = await loadEngine({ analysisThreads: 1 });
    try {
      for (const f of ['speech44s.wav', 'speech16k.wav']) {
        const a = await engine.analyze(fx.read(f), { vad: 'energy' });
        const b = await single.analyze(fx.read(f), { vad: 'energy' });
        expect(a.results).to.deep.equal(b.results);
        expect(a.summary).to.deep.equal(b.summary);
      }
    } finally {
      await single.close();
    }
  });
});
