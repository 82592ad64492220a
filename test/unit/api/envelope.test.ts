import { expect } from 'chai';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { metadata, renderError, sendSuccess, type QuotaView } from '../../../api/liveness/envelope';
import { QuotaExceededError } from '../../../api/liveness/step';
import { errorHandler } from '../../../api/http/error-handler';
import { anyErrorEnvelopeSchema, errorMetadataSchema, successMetadataSchema } from '../../../shared/contracts/http/liveness';
import { LIVENESS_API_VERSION } from '../../../shared/version';

const clock = () => new Date('2026-02-28T23:59:59.999Z');
const customer = '0b7e6c1e-2f4d-4c8a-9a51-2d0f6e3b8c47';

describe('The liveness response envelope (api/liveness/envelope.ts)', () => {
  it('stamps the date in UTC with milliseconds and the API version', () => {
    const m = metadata(clock, 'success');
    expect(m).to.deep.equal({
      date: '2026-02-28T23:59:59.999Z',
      ver: LIVENESS_API_VERSION,
      customer_id: null,
      remaining_calls: null,
      over_limit_calls: null,
      status: 'success',
    });
    expect(successMetadataSchema.safeParse(m).success).to.equal(true);
  });

  it('clips remaining_calls at 0 and keeps overage as counted', () => {
    const q: QuotaView = { customerId: customer, remaining: -7, overLimit: 7 };
    const m = metadata(clock, 'error', q);
    expect(m).to.include({ customer_id: customer, remaining_calls: 0, over_limit_calls: 7, status: 'error' });
    expect(errorMetadataSchema.safeParse(m).success).to.equal(true);
  });

  describe('on the wire (a real Express app)', () => {
    let server: ReturnType<express.Express['listen']>;
    let base = '';
    before(async () => {
      const app = express();
      app.get('/ok', (_req, res) => {
        sendSuccess(res, clock, { hello: 'world' }, { customerId: customer, remaining: 3, overLimit: 0, monthlyLimit: 50 });
      });
      app.get('/anonymous', (_req, res) => sendSuccess(res, clock, {}));
      app.get('/capped', () => {
        // The refusal carries the caller's credits to the envelope.
        throw new QuotaExceededError({ customerId: customer, remaining: 0, overLimit: 0, monthlyLimit: 50 }, 50, 1);
      });
      app.use(errorHandler(renderError(clock)));
      server = app.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise((r) => server.close(r)));

    it('answers a success with metadata + data and the quota headers, reset at the next UTC month start', async () => {
      const res = await fetch(`${base}/ok`);
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { data: unknown; metadata: Record<string, unknown> };
      expect(body.data).to.deep.equal({ hello: 'world' });
      expect(body.metadata).to.include({ status: 'success', customer_id: customer, remaining_calls: 3, over_limit_calls: 0 });
      expect([res.headers.get('x-quota-limit'), res.headers.get('x-quota-remaining'), res.headers.get('x-quota-reset')]).to.deep.equal([
        '50',
        '3',
        '2026-03-01T00:00:00.000Z',
      ]);
    });

    it('sends no quota headers when the caller is unknown', async () => {
      const res = await fetch(`${base}/anonymous`);
      expect(res.headers.get('x-quota-remaining')).to.equal(null);
      expect(((await res.json()) as { metadata: { customer_id: unknown } }).metadata.customer_id).to.equal(null);
    });

    it('renders an error as metadata + error, matching the public contract, with Retry-After', async () => {
      const res = await fetch(`${base}/capped`);
      expect(res.status).to.equal(429);
      expect(res.headers.get('retry-after')).to.equal('1');
      expect(res.headers.get('x-quota-remaining')).to.equal('0');
      const body = (await res.json()) as { data: unknown; metadata: Record<string, unknown> };
      expect(anyErrorEnvelopeSchema.parse(body).error).to.deep.equal({
        code: 'quota_exceeded',
        message: 'The monthly limit of 50 calls is reached and the hard cap is on',
      });
    });
  });
});
