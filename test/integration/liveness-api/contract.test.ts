import { expect } from 'chai';
import { outboxDrained } from '../../support/billing';
import { portrait, blank } from '../../../dev/harness/sample-images';
import { http } from '../../support/http';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SEMVER = /^\d+\.\d+\.\d+$/;

describe('Liveness API v1 contract', () => {
  let stack: LivenessStack;
  let face: Buffer;
  let account: Awaited<ReturnType<LivenessStack['createAccount']>>;

  before(async () => {
    stack = await startLivenessStack('contract');
    face = await portrait();
    account = await stack.createAccount('starter');
  });
  after(() => stack.stop());

  function expectErrorEnvelope(res: { status: number; body: any; headers: Headers }, status: number, code: string, customerId: string | null) {
    expect(res.status, `${code}: HTTP status`).to.equal(status);
    expect(res.body.error.code).to.equal(code);
    expect(res.body.error.message).to.be.a('string').and.not.empty;
    expect(res.body.metadata.status).to.equal('error');
    expect(res.body.metadata.customer_id).to.equal(customerId);
    expect(res.body.metadata.date).to.match(ISO_MS);
    expect(res.body.metadata.ver).to.match(SEMVER);
    expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).to.be.a('string');
  }

  describe('POST /v1/check/liveness', () => {
    it('answers 200 with metadata and the full liveness result for a live face photo, and consumes one call', async () => {
      const res = await stack.check(account.primaryKey, face);
      expect(res.status).to.equal(200);
      const { metadata, data } = res.body;
      expect(metadata).to.include({ status: 'success', customer_id: account.customerId, remaining_calls: 999, over_limit_calls: 0 });
      expect(metadata.date).to.match(ISO_MS);
      expect(metadata.ver).to.match(SEMVER);
      expect(data.isFakeFace).to.be.a('boolean');
      expect(data.isFakeLikelihood).to.be.within(0, 1);
      expect(data.isFakeFace).to.equal(data.isFakeLikelihood > 0.15);
      expect(data.isValidFace).to.be.a('boolean');
      expect(data.faceBrightness).to.be.within(0, 255);
      for (const k of ['x', 'y', 'width', 'height']) expect(Number.isInteger(data.faceRectArea[k])).to.equal(true);
      expect(data.vFaceRect).to.be.an('array').with.length.greaterThan(0);
      expect(data.msg).to.be.a('string');
      expect(Number.isInteger(data.latency_ms)).to.equal(true);
      expect(data).to.not.have.property('stages');
      expect(res.headers.get('x-quota-limit')).to.equal('1000');
      expect(res.headers.get('x-quota-remaining')).to.equal('999');
      expect(res.headers.get('x-quota-reset')).to.match(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    });

    it('accepts PNG when image_format is png', async () => {
      const res = await stack.check(account.primaryKey, await portrait('png'), 'png');
      expect(res.status).to.equal(200);
    });

    const invalidRequests: Array<[string, unknown, string?]> = [
      ['image is missing', { image_format: 'jpeg' }],
      ['image_format is missing', { image: 'aGVsbG8=' }],
      ['image_format is gif', { image: 'aGVsbG8=', image_format: 'gif' }],
      ['image is not a string', { image: 12345, image_format: 'jpeg' }],
      ['image is empty', { image: '', image_format: 'jpeg' }],
      ['image is not Base64', { image: 'not base64 at all!', image_format: 'jpeg' }],
      ['the body is an array', [{ image: 'aGVsbG8=', image_format: 'jpeg' }]],
      ['the body is a JSON string', 'hello'],
    ];
    for (const [what, body] of invalidRequests) {
      it(`answers 400 invalid_request when ${what}`, async () => {
        const res = await http(stack.api.port, '/v1/check/liveness', { method: 'POST', headers: { 'x-api-key': account.primaryKey }, json: body });
        expect(res.status).to.equal(400);
        expectErrorEnvelope(res, 400, 'invalid_request', account.customerId);
      });
    }

    it('answers 400 invalid_request for malformed JSON and for a non-JSON content type', async () => {
      const bad = await http(stack.api.port, '/v1/check/liveness', {
        method: 'POST',
        headers: { 'x-api-key': account.primaryKey, 'content-type': 'application/json' },
        body: '{"image": "abc",',
      });
      expect(bad.status).to.equal(400);
      expectErrorEnvelope(bad, 400, 'invalid_request', account.customerId);
      const form = await http(stack.api.port, '/v1/check/liveness', {
        method: 'POST',
        headers: { 'x-api-key': account.primaryKey, 'content-type': 'text/plain' },
        body: 'image=abc',
      });
      expect(form.status).to.equal(400);
      expect(form.body.error.code).to.equal('invalid_request');
    });

    it('reads the JSON form in UTF-8 with or without a charset, and in another Unicode charset the JSON parser knows', async () => {
      const body = JSON.stringify({ image: (await portrait()).toString('base64'), image_format: 'jpeg' });
      for (const [type, bytes] of [
        ['application/json; charset=UTF-8', Buffer.from(body, 'utf8')],
        ['application/json; charset=utf-16le', Buffer.from(`\uFEFF${body}`, 'utf16le')],
      ] as const) {
        const res = await http(stack.api.port, '/v1/check/liveness', {
          method: 'POST',
          headers: { 'x-api-key': account.primaryKey, 'content-type': type },
          body: bytes,
        });
        expect(res.status, type).to.equal(200);
      }
    });

    it('answers 400 invalid_image when no face is in the picture', async () => {
      const res = await stack.check(account.primaryKey, await blank());
      expectErrorEnvelope(res, 400, 'invalid_image', account.customerId);
      expect(res.status).to.equal(400);
    });

    it('answers 400 invalid_image when image_format does not match the real format', async () => {
      const res = await stack.check(account.primaryKey, await portrait('png'), 'jpeg');
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_image');
    });

    it('answers 400 invalid_image for bytes that are no image, and for a truncated JPEG', async () => {
      const junk = await stack.check(account.primaryKey, Buffer.from('this is not an image at all'));
      expect(junk.body.error.code).to.equal('invalid_image');
      const truncated = await stack.check(account.primaryKey, face.subarray(0, Math.floor(face.length / 3)));
      expect(truncated.status).to.equal(400);
      expect(truncated.body.error.code).to.equal('invalid_image');
    });

    it('answers 413 payload_too_large for an image over 10 MB, before reading it all', async () => {
      const huge = 'A'.repeat(10 * 1024 * 1024 + 8);
      const res = await stack.check(account.primaryKey, huge);
      expect(res.status).to.equal(413);
      expectErrorEnvelope(res, 413, 'payload_too_large', account.customerId);
    });

    it('charged only the successful calls above', async () => {
      const res = await stack.usage(account.primaryKey);
      expect(res.body.data.total_calls).to.equal(4);
      await outboxDrained(stack.api.deps.redis, stack.prefix);
      const events = await stack.api.deps.models.UsageEvent.find({ customerId: account.customerId }).lean();
      expect(events).to.have.length(4);
      for (const e of events) {
        expect(e.keyId).to.be.a('string');
        expect(JSON.stringify(e)).to.not.include(account.primaryKey);
      }
    });
  });

  describe('authentication', () => {
    it('answers 401 invalid_api_key with customer_id null when X-API-Key is missing', async () => {
      const res = await http(stack.api.port, '/v1/usage');
      expect(res.status).to.equal(401);
      expectErrorEnvelope(res, 401, 'invalid_api_key', null);
      expect(res.body.metadata.remaining_calls).to.equal(null);
    });

    it('answers 401 invalid_api_key for an unknown or malformed key', async () => {
      for (const key of ['lc_' + 'x'.repeat(43), 'not-a-key', 'lc_short']) {
        const res = await stack.usage(key);
        expect(res.status).to.equal(401);
        expect(res.body.error.code).to.equal('invalid_api_key');
      }
    });

    it('answers 403 forbidden when the key is valid but the account is suspended', async () => {
      const other = await stack.createAccount('starter');
      await stack.api.deps.accounts.setStatus(other.customerId, 'suspended');
      const res = await stack.usage(other.primaryKey);
      expect(res.status).to.equal(403);
      expectErrorEnvelope(res, 403, 'forbidden', null);
    });

    it('stops the old key at once when a key is regenerated; the other key keeps working', async () => {
      const acc = await stack.createAccount('standard');
      expect((await stack.usage(acc.primaryKey)).status).to.equal(200);
      const fresh = await stack.api.deps.apiKeys.regenerate(acc.customerId, 'primary');
      expect((await stack.usage(acc.primaryKey)).status).to.equal(401);
      expect((await stack.usage(fresh)).status).to.equal(200);
      expect((await stack.usage(acc.secondaryKey)).status).to.equal(200);
    });
  });

  describe('GET /v1/usage', () => {
    it('answers the month, calls, limit, remaining, overage, plan and hard cap', async () => {
      const acc = await stack.createAccount('professional');
      const res = await stack.usage(acc.secondaryKey);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({
        year_month: new Date().toISOString().slice(0, 7),
        total_calls: 0,
        monthly_limit: 10000,
        remaining_calls: 10000,
        over_limit_calls: 0,
        plan: 'professional',
        hard_cap_enabled: false,
      });
      expect(res.body.metadata).to.include({ status: 'success', customer_id: acc.customerId, remaining_calls: 10000, over_limit_calls: 0 });
    });
  });

  describe('unknown paths and methods', () => {
    it('answers 404 not_found in the envelope for an unknown path', async () => {
      const res = await http(stack.api.port, '/v1/nothing-here');
      expect(res.status).to.equal(404);
      expectErrorEnvelope(res, 404, 'not_found', null);
    });

    it('answers 405 with Allow for a wrong method', async () => {
      const res = await http(stack.api.port, '/v1/check/liveness', { method: 'GET', headers: { 'x-api-key': account.primaryKey } });
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.equal('POST');
      expect(res.body.error.code).to.equal('method_not_allowed');
    });
  });
});
