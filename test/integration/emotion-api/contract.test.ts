import { expect } from 'chai';
import { settledCount } from '../../support/billing';
import crypto from 'node:crypto';
import { jsonOf, speech, startEmotionStack, type EmotionStack } from '../../support/emotion-stack';

describe('POST /feelings/v3/analysis', () => {
  let stack: EmotionStack;
  let clip: Buffer;

  before(async () => {
    stack = await startEmotionStack('emotion-contract');
    clip = speech(12);
  });
  after(() => stack.stop());

  it('answers 200 JSON with meta and rough/soft for every 5 s of speech, with CORS', async () => {
    const res = await stack.analyze(clip);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    expect(Number(res.headers.get('content-length'))).to.be.greaterThan(0);
    const body = await jsonOf(res);
    expect(body.meta).to.include({ sample_rate: 16000, channels: 1, format_name: 'wav' });
    expect(body.meta.bit_rate).to.equal(256000);
    expect(body.results.map((r: { from: number; to: number }) => [r.from, r.to])).to.deep.equal([
      [0, 5],
      [5, 10],
      [10, 12],
    ]);
    for (const r of body.results) {
      expect(r.rough).to.be.within(0, 1);
      expect(r.soft).to.be.within(0, 1);
      expect(r.speech_ratio).to.be.within(0, 1);
    }
    expect(body.summary.duration).to.be.closeTo(12, 0.05);
    expect(body).to.not.have.property('stages');
  });

  it('records a usage event for the call (never the audio)', async () => {
    // Written through the usage outbox after the answer: wait for the first one.
    await settledCount(() => stack.models.UsageEvent.countDocuments({ service: 'emotion', tokenId: stack.tokenId }), 1);
    const events = await stack.models.UsageEvent.find({ service: 'emotion', tokenId: stack.tokenId }).lean();
    expect(events.length).to.be.at.least(1);
    expect(JSON.stringify(events)).to.not.include(stack.token);
  });

  it('answers 401 when the Authorization header is missing, 403 when the token is wrong', async () => {
    const missing = await stack.request('/feelings/v3/analysis', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: clip });
    expect(missing.status).to.equal(401);
    expect((await jsonOf(missing)).error).to.include({ code: 'missing_token' });
    const wrong = await stack.analyze(clip, { authorization: `Bearer ${crypto.randomBytes(32).toString('base64url')}` });
    expect(wrong.status).to.equal(403);
    expect((await jsonOf(wrong)).error.code).to.equal('invalid_token');
  });

  it('answers 400 when Content-Type is not audio/*', async () => {
    const res = await stack.analyze(clip, { 'content-type': 'application/json' });
    expect(res.status).to.equal(400);
    expect((await jsonOf(res)).error.code).to.equal('invalid_request');
  });

  it('answers 400 unsupported_format for bytes that are no audio, whatever the Content-Type says', async () => {
    const res = await stack.analyze(crypto.randomBytes(50_000), { 'content-type': 'audio/mpeg' });
    expect(res.status).to.equal(400);
    expect((await jsonOf(res)).error.code).to.equal('unsupported_format');
  });

  it('answers 413 for a body over 10 MB', async () => {
    const res = await stack.analyze(Buffer.alloc(10 * 1024 * 1024 + 1));
    expect(res.status).to.equal(413);
    expect((await jsonOf(res)).error.code).to.equal('payload_too_large');
  });

  it('answers 405 for other methods, 404 for other paths, and a CORS preflight with 204', async () => {
    const get = await stack.analyze('', {}, 'GET');
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST, OPTIONS');
    const typo = await stack.analyze(clip, {}, 'POST', '/feelings/v3/analysus');
    expect(typo.status).to.equal(404);
    expect((await jsonOf(typo)).error.code).to.equal('not_found');
    const pre = await stack.request('/feelings/v3/analysis', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(pre.status).to.equal(204);
    expect(pre.headers.get('access-control-allow-origin')).to.equal('*');
    expect(pre.headers.get('access-control-allow-methods')).to.include('POST');
    expect(pre.headers.get('access-control-allow-headers')!.toLowerCase()).to.include('authorization');
  });
});

describe('POST /feelings/v3/analysis under pressure', () => {
  it('answers 429 with a Retry-After of one to two minutes when a token sends too much', async () => {
    // A 2-second burst of audio (two calls' upfront second) and a slow refill, so the throttle and its Retry-After
    // floor are reached in a few calls.
    const stack = await startEmotionStack('emotion-throttle', {
      withWorker: false,
      env: { EMOTION_FAIR_USE_BURST_SECONDS: '2', EMOTION_FAIR_USE_SECONDS_PER_SEC: '0.01' }, // reach the throttle in a few calls (see above)
    });
    try {
      await stack.analyze('x', { 'content-type': 'text/plain' });
      await stack.analyze('x', { 'content-type': 'text/plain' });
      const res = await stack.analyze('x', { 'content-type': 'text/plain' });
      expect(res.status).to.equal(429);
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).to.be.within(60, 120);
    } finally {
      await stack.stop();
    }
  });
});
