// The typed client (clients/typescript) against the running services: every operation of both OpenAPI documents
// is called through it, each answer checked against its document (the stacks' contractFetch); errors come back as
// ApiErrors with the documented codes, and a 429's Retry-After is waited out before the one retry it takes.
import { expect } from 'chai';
import { emotionOpenApi } from '../../../api/openapi/emotion-document';
import { livenessOpenApi } from '../../../api/openapi/liveness-document';
import { ApiError } from '../../../clients/typescript/src';
import { portrait } from '../../../dev/harness/sample-images';
import { speech, startEmotionStack, type EmotionStack } from '../../support/emotion-stack';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import type { OpenAPIObject } from 'openapi3-ts/oas31';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Every operationId of a document. */
function operationIds(doc: OpenAPIObject): string[] {
  return Object.values(doc.paths ?? {})
    .flatMap((item) => Object.values(item as Record<string, { operationId?: string }>))
    .map((op) => op.operationId!)
    .sort();
}

/** A sleep that only records what it was asked to wait, and runs `then` (moving a clock, say). */
function recordingSleep(then: () => void = () => {}) {
  const waits: number[] = [];
  return {
    waits,
    sleep: async (ms: number) => {
      waits.push(ms);
      then();
    },
  };
}

describe('The typed client (clients/typescript) against the liveness API', () => {
  // A movable clock: the month boundary a quota's Retry-After counts to is crossed by moving it, not by waiting.
  let now = new Date('2026-01-15T12:00:00.000Z');
  let stack: LivenessStack;
  let key: string;
  let face: Buffer;

  before(async () => {
    stack = await startLivenessStack('ts-client-liveness', { clock: () => now });
    key = (await stack.createAccount('starter')).primaryKey;
    face = await portrait();
  });
  after(() => stack?.stop());

  it('has one method for every operation of the document (and one more for raw image bytes)', () => {
    const methods = Object.keys(stack.client(key)).filter((m) => m !== 'checkLivenessImage');
    expect(methods.sort()).to.deep.equal(operationIds(livenessOpenApi()));
  });

  it('checkLiveness: a JSON body with the Base64 image answers the verdict, with our request id', async () => {
    const r = await stack.client(key).checkLiveness({ image: face.toString('base64'), image_format: 'jpeg' });
    expect(r.error, r.error?.message).to.equal(undefined);
    expect(r.data!.data).to.include({ isValidFace: true });
    expect(r.data!.data.isFakeLikelihood).to.be.within(0, 1);
    expect(r.data!.metadata.status).to.equal('success');
    expect(r.requestId).to.match(UUID);
    expect(r.attempts).to.equal(1);
  });

  it('checkLivenessImage: the raw PNG bytes, and an Idempotency-Key replays the stored answer', async () => {
    const client = stack.client(key);
    const png = await portrait('png');
    const first = await client.checkLivenessImage(png, 'png', { idempotencyKey: 'client-test-1' });
    expect(first.error, first.error?.message).to.equal(undefined);
    const again = await client.checkLivenessImage(png, 'png', { idempotencyKey: 'client-test-1' });
    expect(again.data).to.deep.equal(first.data);
    expect(again.response!.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('getUsage: counts the calls made through the client', async () => {
    const r = await stack.client(key).getUsage();
    expect(r.data?.data).to.include({ total_calls: 2, plan: 'starter' });
  });

  it('getHealth and getOpenApi: no key needed; the served document is the one the client was generated from', async () => {
    const client = stack.client('lc_not-a-key');
    expect((await client.getHealth()).data).to.deep.equal({ status: 'ok' });
    expect((await client.getOpenApi()).data).to.deep.equal(JSON.parse(JSON.stringify(livenessOpenApi())));
  });

  it('gives a refusal as an ApiError with the documented code, status and request id, and does not retry it', async () => {
    const r = await stack.client('lc_not-a-key').getUsage();
    expect(r.error).to.be.instanceOf(ApiError);
    expect(r.error).to.include({ code: 'invalid_api_key', status: 401, attempts: 1, retryAfterSeconds: null });
    expect(r.error!.requestId).to.match(UUID).and.equal(r.requestId);
    const bad = await stack.client(key).checkLivenessImage(Buffer.from('not an image'), 'jpeg');
    expect(bad.error).to.include({ code: 'invalid_image', status: 400, attempts: 1 });
  });

  it('waits out the Retry-After of a 429 quota_exceeded and retries once the month has turned', async () => {
    now = new Date('2026-01-31T23:59:59.000Z');
    const acc = await stack.createAccount('enterprise', { monthlyLimit: 1, hardCap: true });
    const { waits, sleep } = recordingSleep(() => (now = new Date('2026-02-01T00:00:00.000Z')));
    const client = stack.client(acc.primaryKey, { sleep });
    expect((await client.checkLivenessImage(face, 'jpeg')).error).to.equal(undefined);
    const r = await client.checkLivenessImage(face, 'jpeg');
    expect(r.error, r.error?.message).to.equal(undefined);
    expect(r.attempts).to.equal(2);
    // Retry-After: 1 (one second to the 1st), never retried sooner.
    expect(waits).to.have.length(1);
    expect(waits[0]).to.be.at.least(1000);
  });

  it('hands back a 429 quota_exceeded at once when its Retry-After is longer than the policy waits', async () => {
    now = new Date('2026-03-10T12:00:00.000Z');
    const acc = await stack.createAccount('enterprise', { monthlyLimit: 1, hardCap: true });
    const { waits, sleep } = recordingSleep();
    const client = stack.client(acc.primaryKey, { sleep, maxWaitSeconds: 60 });
    expect((await client.checkLivenessImage(face, 'jpeg')).error).to.equal(undefined);
    const r = await client.checkLivenessImage(face, 'jpeg');
    expect(r.error).to.include({ code: 'quota_exceeded', status: 429, attempts: 1 });
    // To 1 April 00:00 UTC: 21.5 days.
    expect(r.error!.retryAfterSeconds).to.equal(21.5 * 86_400);
    expect(waits).to.deep.equal([]);
  });
});

describe('The typed client (clients/typescript) against a liveness API with no worker running', () => {
  let stack: LivenessStack;
  before(async () => {
    stack = await startLivenessStack('ts-client-noworker', { withWorker: false });
  });
  after(() => stack?.stop());

  it('sends a 503 again after its Retry-After, up to maxAttempts, then gives the typed service_unavailable', async () => {
    const { waits, sleep } = recordingSleep();
    const client = stack.client((await stack.createAccount('free')).primaryKey, { sleep, maxAttempts: 3 });
    const r = await client.checkLivenessImage(await portrait(), 'jpeg');
    expect(r.error).to.include({ code: 'service_unavailable', status: 503, attempts: 3, retryAfterSeconds: 5 });
    expect(waits).to.have.length(2);
    for (const ms of waits) expect(ms).to.be.at.least(5000);
  });

  it('holds the next request of the same client until the Retry-After it was given has passed', async () => {
    const { waits, sleep } = recordingSleep();
    const client = stack.client((await stack.createAccount('free')).primaryKey, { sleep, maxAttempts: 2 });
    expect((await client.checkLivenessImage(await portrait(), 'jpeg')).error).to.include({ code: 'service_unavailable', attempts: 2 });
    expect(waits).to.have.length(1);
    // Usage is free and never refused for want of a worker, but it leaves only once the 503's Retry-After is over.
    expect((await client.getUsage()).error).to.equal(undefined);
    expect(waits).to.have.length(2);
    expect(waits[1]).to.be.above(0).and.at.most(waits[0]!);
  });
});

describe('The typed client (clients/typescript) against the voice emotion API', () => {
  let stack: EmotionStack;

  before(async () => {
    stack = await startEmotionStack('ts-client-emotion');
  });
  after(() => stack?.stop());

  it('has one method for every operation of the document', () => {
    expect(Object.keys(stack.client()).sort()).to.deep.equal(operationIds(emotionOpenApi()));
  });

  it('analyzeEmotion: the audio bytes with their Content-Type answer rough and soft for every 5 s', async () => {
    const r = await stack.client().analyzeEmotion(speech(7), 'audio/wav');
    expect(r.error, r.error?.message).to.equal(undefined);
    expect(r.data!.meta).to.include({ format_name: 'wav', channels: 1 });
    expect(r.data!.results.map((i) => [i.from, i.to])).to.deep.equal([
      [0, 5],
      [5, 7],
    ]);
    expect(r.requestId).to.match(UUID);
    expect(r.response!.headers.get('server-timing')).to.match(/worker;dur=/);
  });

  it('analyzeEmotionPreflight: what a browser is told before it calls from another origin', async () => {
    const r = await stack.client().analyzeEmotionPreflight();
    expect(r.data).to.include({ allowOrigin: '*' });
    expect(r.data!.allowMethods).to.include('POST');
    expect(r.data!.allowHeaders!.toLowerCase()).to.include('authorization');
    expect(r.data!.maxAgeSeconds).to.be.a('number');
  });

  it('getOpenApi: the served document is the one the client was generated from', async () => {
    expect((await stack.client().getOpenApi()).data).to.deep.equal(JSON.parse(JSON.stringify(emotionOpenApi())));
  });

  it('gives refusals as ApiErrors with the documented codes: a wrong token, and bytes that are not audio', async () => {
    const wrong = await stack.client({ token: 'not-a-token' }).analyzeEmotion(speech(1), 'audio/wav');
    expect(wrong.error).to.be.instanceOf(ApiError);
    expect(wrong.error).to.include({ code: 'invalid_token', status: 403, attempts: 1 });
    expect(wrong.error!.requestId).to.match(UUID);
    const junk = await stack.client().analyzeEmotion(Buffer.alloc(4000, 0x41), 'audio/wav');
    expect(junk.error).to.include({ code: 'unsupported_format', status: 400 });
  });
});
