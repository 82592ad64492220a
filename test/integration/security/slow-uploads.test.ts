// A body that does not arrive is cut (issue 41): on both APIs an upload that declares megabytes and then trickles is
// answered 400 invalid_request in the API's documented error shape once it falls below the floor rate after its
// grace, and its room is given back, instead of holding the room until the server's 60 s request timeout.
import { expect } from 'chai';
import { startEmotionApi, type RunningEmotionApi } from '../../../api/emotion/server';
import { EmotionTokenService } from '../../../shared/accounts/emotion-tokens';
import { connectMongo } from '../../../shared/db/mongo';
import { createModels } from '../../../shared/db/models';
import { anyErrorEnvelopeSchema } from '../../../shared/contracts/http/liveness';
import type { Connection } from 'mongoose';
import { isolation } from '../../support/engines';
import { quietLog, testConfig } from '../../support/config';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { partialUpload } from '../../support/partial-upload';

/** A grace of 300 ms instead of the shipped 2 s, so the cut comes within a second (the rule itself: upload-gate.test.ts). */
const ENV = { UPLOAD_GRACE_MS: '300' };
const DECLARED = 2 * 1024 * 1024;
const SENT = 16 * 1024;

describe('Uploads slower than the floor rate are cut (issue 41)', function () {
  this.timeout(120_000);
  let liveness: LivenessStack;
  let emotion: RunningEmotionApi;
  let mongo: Connection;
  let token: string;

  before(async () => {
    // With a worker: a call is admitted (and its body read) only when a worker can take it.
    liveness = await startLivenessStack('slow-uploads', { env: ENV });
    const iso = isolation('slow-uploads-emotion');
    const config = testConfig(iso.prefix, ENV);
    emotion = await startEmotionApi({ config, log: quietLog, dbName: iso.dbName });
    mongo = await connectMongo(config.MONGODB_URI!, iso.dbName);
    token = (await new EmotionTokenService(createModels(mongo)).create('slow-uploads')).token;
  });
  after(async () => {
    await liveness?.stop();
    await emotion?.stop();
    await mongo?.close();
  });

  it('POST /v1/check/liveness: a 2 MB body that sent 16 KB is answered 400 invalid_request and its room given back', async () => {
    const acc = await liveness.createAccount('starter');
    const answer = await partialUpload(
      liveness.api.port,
      '/v1/check/liveness',
      { 'X-API-Key': acc.primaryKey, 'Content-Type': 'application/json' },
      Buffer.from('{"image_format":"jpeg","image":"'),
      { declaredBytes: DECLARED, sentBytes: SENT },
    ).answered;
    expect(answer.status).to.equal(400);
    expect(answer.connectionClose).to.equal(true);
    const body = anyErrorEnvelopeSchema.parse(JSON.parse(answer.body));
    expect(body.error.code).to.equal('invalid_request');
    expect(body.error.message).to.match(/slower than 64 KiB\/s/);
    expect(liveness.api.deps.uploads.inFlight()).to.equal(0);
  });

  it('POST /feelings/v3/analysis: the same, in the emotion API’s error shape', async () => {
    const answer = await partialUpload(
      emotion.port,
      '/feelings/v3/analysis',
      { Authorization: `Bearer ${token}`, 'Content-Type': 'audio/wav' },
      Buffer.from('RIFF'),
      { declaredBytes: DECLARED, sentBytes: SENT },
    ).answered;
    expect(answer.status).to.equal(400);
    expect(answer.connectionClose).to.equal(true);
    const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
    expect(Object.keys(body)).to.deep.equal(['error']);
    expect(body.error.code).to.equal('invalid_request');
    expect(body.error.message).to.match(/slower than 64 KiB\/s/);
  });
});
