// POST /feelings/v3/analysis with the Opus and Vorbis files browsers and messaging apps produce (accepted beyond
// the spec): 200 with the same interval rules as the spec's formats, and the documented 400s for broken files.
import { expect } from 'chai';
import { FixtureDir } from '../../../dev/harness/emotion/audio';
import { makeBrokenOpusVorbis, makeOpusVorbis, type OpusVorbisCase } from '../../fixtures/emotion/opus-vorbis';
import { jsonOf, speech, startEmotionStack, type EmotionStack } from '../../support/emotion-stack';

describe('POST /feelings/v3/analysis with Opus and Vorbis (beyond the spec)', () => {
  let stack: EmotionStack;
  const fx = new FixtureDir();
  let cases: OpusVorbisCase[];
  let broken: ReturnType<typeof makeBrokenOpusVorbis>;

  before(async () => {
    // 20 s instead of the shipped 5 s budget: this file tests formats, not speed, and shares two cores with
    // other suites (a load-induced 503 processing_timeout would say nothing about Opus).
    stack = await startEmotionStack('emotion-opus', { env: { EMOTION_BUDGET_MS: '20000' } });
    fx.write('speech12.wav', speech(12));
    cases = makeOpusVorbis(fx, fx.path('speech12.wav'));
    broken = makeBrokenOpusVorbis(fx, fx.path('speech12.wav'));
  });
  after(async () => {
    fx.remove();
    await stack.stop();
  });

  const contentTypes: Record<string, string> = {
    'WebM/Opus (seekable, with a duration)': 'video/webm',
    'WebM/Opus as MediaRecorder writes it (no duration)': 'audio/webm;codecs=opus',
    'Matroska (.mka) Opus': 'audio/x-matroska',
    'Ogg/Opus voice note at 24 kbps': 'audio/ogg; codecs=opus',
    'Ogg/Vorbis': 'application/ogg',
  };

  it('answers 200 for WebM/Opus, Matroska/Opus, Ogg/Opus and Ogg/Vorbis with 5 s intervals ending at the duration', async () => {
    for (const c of cases) {
      const res = await stack.analyze(fx.read(c.file.split('/').pop()!), { 'content-type': contentTypes[c.name]! });
      const body = await jsonOf(res);
      expect(res.status, `${c.name}: ${JSON.stringify(body)}`).to.equal(200);
      expect(body.meta, c.name).to.include({ format_name: c.format_name, sample_rate: c.sample_rate, channels: 1 });
      expect(body.meta.bit_rate, c.name).to.be.greaterThan(0);
      const spans = body.results.map((r: { from: number; to: number }) => [r.from, r.to]);
      // Opus pre-skip and Vorbis block edges move the decoded end by a few ms around 12 s; the grid is 5 s.
      expect(spans.slice(0, 2), c.name).to.deep.equal([
        [0, 5],
        [5, 10],
      ]);
      expect(spans, c.name).to.have.length(3);
      expect(spans[2][0]).to.equal(10);
      expect(spans[2][1], c.name).to.equal(body.summary.duration).and.to.be.closeTo(12, 0.1);
      for (const r of body.results) {
        expect(r.rough).to.be.within(0, 1);
        expect(r.soft).to.be.within(0, 1);
        expect(r.speech_ratio).to.be.within(0, 1);
      }
      expect(body.results[0].speech_ratio, c.name).to.be.greaterThan(0.5);
    }
  });

  it('answers the documented 400s for a truncated Ogg, a WebM without audio, video files and other codecs', async () => {
    for (const b of broken) {
      const res = await stack.analyze(b.bytes, { 'content-type': 'audio/ogg' });
      const body = await jsonOf(res);
      expect(res.status, b.name).to.equal(400);
      expect(Object.keys(body)).to.deep.equal(['error']);
      expect(body.error.code, b.name).to.equal(b.code);
      expect(body.error.message, b.name).to.match(b.message);
    }
  });

  it('still answers 400 invalid_request for a Content-Type that is neither audio/* nor a WebM/Ogg container', async () => {
    const res = await stack.analyze(fx.read('live.webm'), { 'content-type': 'video/mp4' });
    expect(res.status).to.equal(400);
    expect((await jsonOf(res)).error.code).to.equal('invalid_request');
  });
});
