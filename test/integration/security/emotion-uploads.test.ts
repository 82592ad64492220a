// Refuse before reading on the emotion API (issue 27): a throttled token's upload is answered 429 at once and its
// connection closed, so the audio is never read (authentication, the throttle and the content type come first).
import { expect } from 'chai';
import { startEmotionApi, type RunningEmotionApi } from '../../../api/emotion/server';
import { EmotionTokenService } from '../../../shared/accounts/emotion-tokens';
import { connectMongo } from '../../../shared/db/mongo';
import { createModels } from '../../../shared/db/models';
import type { Connection } from 'mongoose';
import { isolation } from '../../support/engines';
import { quietLog, testConfig } from '../../support/config';
import { DECLARED_BYTES, partialUpload } from '../../support/partial-upload';

describe('POST /feelings/v3/analysis: refused before reading the body', function () {
  this.timeout(120_000);
  let emotion: RunningEmotionApi;
  let mongo: Connection;
  let token: string;

  before(async () => {
    const iso = isolation('emotion-uploads');
    const config = testConfig(iso.prefix, {
      // A throttled token must stay throttled for the whole test: the shipped refill (10 s of audio a second) would let a call through.
      EMOTION_FAIR_USE_SECONDS_PER_SEC: '0.001',
      // Five seconds of allowance instead of the shipped 36,000, so five cheap calls use it up (fair use itself: emotion-fair-use.test.ts).
      EMOTION_FAIR_USE_BURST_SECONDS: '5',
    });
    emotion = await startEmotionApi({ config, log: quietLog, dbName: iso.dbName });
    mongo = await connectMongo(config.MONGODB_URI!, iso.dbName);
    token = (await new EmotionTokenService(createModels(mongo)).create('uploads')).token;
    // The allowance spent on cheap calls (400: not audio; each takes its upfront second): the token is now throttled.
    for (let i = 0; i < config.EMOTION_FAIR_USE_BURST_SECONDS / config.EMOTION_FAIR_USE_UPFRONT_SECONDS; i++) {
      const r = await fetch(`http://127.0.0.1:${emotion.port}/feelings/v3/analysis`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
        body: 'not audio',
      });
      await r.arrayBuffer();
      expect(r.status).to.equal(400);
    }
  });
  after(async () => {
    await emotion?.stop();
    await mongo?.close();
  });

  it('answers 10 concurrent 10 MB uploads from a throttled token with 429 at once and closes each connection unread', async () => {
    const uploads = Array.from({ length: 10 }, () =>
      partialUpload(emotion.port, '/feelings/v3/analysis', { Authorization: `Bearer ${token}`, 'Content-Type': 'audio/wav' }, Buffer.from('RIFF')),
    );
    for (const a of await Promise.all(uploads.map((u) => u.answered))) {
      expect(a.status).to.equal(429);
      expect(a.connectionClose).to.equal(true);
      expect(a.sentBytes).to.be.below(DECLARED_BYTES / 10);
    }
  });
});
