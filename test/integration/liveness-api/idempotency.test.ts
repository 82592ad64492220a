import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { blank, portrait } from '../../../dev/harness/sample-images';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { http } from '../../support/http';
import { outboxDrained, settleReserved } from '../../support/billing';
import { DONE_TTL_MS, IdempotencyStore } from '../../../api/liveness/idempotency';
import { keysUnder } from '../../support/engines';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('Liveness API v1: request ids are ours, Idempotency-Key edges', () => {
  let stack: LivenessStack;
  let face: Buffer;
  let shiftedFace: Buffer;

  before(async () => {
    stack = await startLivenessStack('idempotency');
    face = await portrait();
    // The same person 160 px further right: another answer (face rectangle) for the same engine.
    shiftedFace = await sharp(face)
      .extend({ left: 160, background: { r: 0, g: 0, b: 0 } })
      .jpeg({ quality: 90 })
      .toBuffer();
  });
  after(() => stack.stop());

  const events = async (customerId: string) => {
    await outboxDrained(stack.api.deps.redis, stack.prefix);
    return stack.api.deps.models.UsageEvent.countDocuments({ customerId });
  };

  it('finding 1: two customers sending the same X-Request-Id at once both get their own correct answer and are both billed once', async () => {
    const a = await stack.createAccount('starter');
    const b = await stack.createAccount('starter');
    const [refA, refB] = [await stack.check(a.primaryKey, face), await stack.check(b.primaryKey, shiftedFace)];
    expect(refA.body.data.faceRectArea.x).to.not.equal(refB.body.data.faceRectArea.x);
    const shared = { 'x-request-id': 'order-2026-0001' };
    const [resA, resB] = await Promise.all([stack.check(a.primaryKey, face, 'jpeg', shared), stack.check(b.primaryKey, shiftedFace, 'jpeg', shared)]);
    expect([resA.status, resB.status]).to.deep.equal([200, 200]);
    expect(resA.body.data.faceRectArea).to.deep.equal(refA.body.data.faceRectArea);
    expect(resB.body.data.faceRectArea).to.deep.equal(refB.body.data.faceRectArea);
    expect(resA.body.metadata.customer_id).to.equal(a.customerId);
    expect(resB.body.metadata.customer_id).to.equal(b.customerId);
    // Our own ids name the two calls; the caller's id is echoed apart and never used as a key.
    for (const res of [resA, resB]) {
      expect(res.headers.get('x-request-id')).to.match(UUID);
      expect(res.headers.get('x-client-request-id')).to.equal('order-2026-0001');
    }
    expect(resA.headers.get('x-request-id')).to.not.equal(resB.headers.get('x-request-id'));
    for (const acc of [a, b]) {
      expect((await stack.usage(acc.primaryKey)).body.data.total_calls).to.equal(2);
      expect(await events(acc.customerId)).to.equal(2);
    }
  });

  it('does not echo an X-Request-Id that is not a safe token', async () => {
    const acc = await stack.createAccount('starter');
    const res = await stack
      .usage(acc.primaryKey)
      .then(() => fetch(`http://127.0.0.1:${stack.api.port}/v1/usage`, { headers: { 'x-api-key': acc.primaryKey, 'x-request-id': 'a b<script>' } }));
    expect(res.headers.get('x-request-id')).to.match(UUID);
    expect(res.headers.get('x-client-request-id')).to.equal(null);
  });

  // Was "replays a 4xx answer": issue 27 keeps entries only for replayable (billed) answers, so an unbilled 4xx
  // leaves nothing behind and the same key runs the call again (still uncharged).
  it('keeps no entry for unbilled 4xx answers: the same key and body runs again, uncharged, and Redis holds nothing for it', async () => {
    const acc = await stack.createAccount('starter');
    const entries = () => keysUnder(stack.api.deps.redis, stack.prefix, `idem:${acc.customerId}:*`);
    const noFace = await blank();
    const first = await stack.check(acc.primaryKey, noFace, 'jpeg', { 'idempotency-key': 'no-face-1' });
    const again = await stack.check(acc.primaryKey, noFace, 'jpeg', { 'idempotency-key': 'no-face-1' });
    const badFormat = await stack.check(acc.primaryKey, noFace, 'png', { 'idempotency-key': 'wrong-format-1' });
    const notBase64 = await http(stack.api.port, '/v1/check/liveness', {
      method: 'POST',
      headers: { 'x-api-key': acc.primaryKey, 'content-type': 'application/json', 'idempotency-key': 'not-base64-1' },
      body: JSON.stringify({ image: '***', image_format: 'jpeg' }),
    });
    expect([first.status, again.status, badFormat.status, notBase64.status]).to.deep.equal([400, 400, 400, 400]);
    expect(again.headers.get('idempotent-replayed')).to.equal(null);
    expect(again.body.error).to.deep.equal(first.body.error);
    expect(first.body.metadata).to.include({ remaining_calls: 1000, over_limit_calls: 0 });
    expect(await entries(), 'no idempotency entry is left for an unbilled answer').to.deep.equal([]);
    expect((await stack.usage(acc.primaryKey)).body.data.total_calls).to.equal(0);
    const billed = await stack.check(acc.primaryKey, face, 'jpeg', { 'idempotency-key': 'billed-1' });
    expect(billed.status).to.equal(200);
    expect(await entries(), 'a billed answer keeps its entry').to.have.length(1);
  });

  it('does not store a 429: once credits are available the same key runs (and bills) the call', async () => {
    const acc = await stack.createAccount('enterprise', { monthlyLimit: 1, hardCap: true });
    expect((await stack.check(acc.primaryKey, face)).status).to.equal(200);
    const headers = { 'idempotency-key': 'after-cap-1' };
    const capped = await stack.check(acc.primaryKey, face, 'jpeg', headers);
    expect(capped.status).to.equal(429);
    await stack.api.deps.accounts.setHardCap(acc.customerId, false);
    const retried = await stack.check(acc.primaryKey, face, 'jpeg', headers);
    expect(retried.status).to.equal(200);
    expect(retried.headers.get('idempotent-replayed')).to.equal(null);
    expect((await stack.usage(acc.primaryKey)).body.data).to.include({ total_calls: 2, over_limit_calls: 1 });
  });

  it('scopes a key to its customer: the same key from two customers runs two calls', async () => {
    const a = await stack.createAccount('starter');
    const b = await stack.createAccount('starter');
    const headers = { 'idempotency-key': 'shared-key' };
    const resA = await stack.check(a.primaryKey, face, 'jpeg', headers);
    const resB = await stack.check(b.primaryKey, face, 'jpeg', headers);
    expect([resA.status, resB.status]).to.deep.equal([200, 200]);
    expect(resB.headers.get('idempotent-replayed')).to.equal(null);
    expect(resB.body.metadata.customer_id).to.equal(b.customerId);
    for (const acc of [a, b]) expect((await stack.usage(acc.primaryKey)).body.data.total_calls).to.equal(1);
  });

  it('finding 7: replays the committed answer of a call billed by the worker but answered 503, charging once', async () => {
    const acc = await stack.createAccount('starter');
    const b64 = face.toString('base64');
    const { accounts, ledger, redis } = stack.api.deps;
    const plan = accounts.planView((await accounts.get(acc.customerId))!);
    // What the API and the worker did for the first attempt: claim, reserve, settle (commit), then a 503.
    const store = new IdempotencyStore(redis, stack.prefix, 10_000);
    const requestId = randomUUID();
    const claim = await store.claim(acc.customerId, 'pay-7', `jpeg:${b64}`, requestId);
    if (claim.kind !== 'new') throw new Error('expected a new claim');
    const r = await ledger.reserve(acc.customerId, plan, requestId);
    const settled = await settleReserved(ledger, stack.prefix, {
      customerId: acc.customerId,
      month: r.month,
      at: r.at,
      requestId,
      plan,
      idempotency: { key: claim.entryKey, ttlMs: DONE_TTL_MS },
    });
    await claim.finish(null);
    const retry = await stack.check(acc.primaryKey, face, 'jpeg', { 'idempotency-key': 'pay-7' });
    expect(retry.status).to.equal(200);
    expect(retry.headers.get('idempotent-replayed')).to.equal('true');
    expect(retry.body.data).to.deep.equal(JSON.parse(settled.stored).value.result);
    expect(retry.body.metadata).to.include({ customer_id: acc.customerId, remaining_calls: 999, over_limit_calls: 0 });
    expect((await stack.usage(acc.primaryKey)).body.data.total_calls).to.equal(1);
  });
});
