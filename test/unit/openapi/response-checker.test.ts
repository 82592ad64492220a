import { expect } from 'chai';
import { contract, type ObservedResponse } from '../../support/openapi';

const requestId = '3f1c2a9e-6a55-4c51-9d7e-0b8f7a1d2c3e';
const meta = (status: 'success' | 'error', customer: string | null = null) => ({
  date: '2026-11-23T10:15:30.123Z',
  ver: '1.0.0',
  customer_id: customer,
  remaining_calls: customer ? 3 : null,
  over_limit_calls: customer ? 0 : null,
  status,
});

function answer(method: string, path: string, status: number, body: unknown, headers: Record<string, string> = {}): ObservedResponse {
  const text = body === undefined ? '' : JSON.stringify(body);
  return {
    method,
    path,
    status,
    headers: new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, ...headers }),
    text,
  };
}

const liveness = contract('liveness');
const emotion = contract('emotion');
const customer = '0b7e6c1e-2f4d-4c8a-9a51-2d0f6e3b8c47';
const quota = { 'x-quota-limit': '50', 'x-quota-remaining': '3', 'x-quota-reset': '2026-12-01T00:00:00.000Z' };

describe("The contract tests' response checker", () => {
  it('accepts a documented answer', () => {
    const usage = { year_month: '2026-11', total_calls: 47, monthly_limit: 50, remaining_calls: 3, over_limit_calls: 0, plan: 'free', hard_cap_enabled: true };
    expect(liveness.problems(answer('GET', '/v1/usage', 200, { metadata: meta('success', customer), data: usage }, quota))).to.deep.equal([]);
    expect(
      liveness.problems(answer('GET', '/v1/nothing', 404, { metadata: meta('error'), error: { code: 'not_found', message: 'No such endpoint' } })),
    ).to.deep.equal([]);
  });

  it('refuses a status the operation does not document', () => {
    const p = liveness.problems(answer('GET', '/v1/usage', 418, { metadata: meta('error'), error: { code: 'teapot', message: 'x' } }));
    expect(p.join()).to.include('status not documented');
  });

  it('refuses an error code the status does not document', () => {
    const p = liveness.problems(answer('POST', '/v1/check/liveness', 400, { metadata: meta('error', customer), error: { code: 'bad_thing', message: 'x' } }));
    expect(p.join()).to.include('/error/code must be equal to one of the allowed values');
  });

  it('refuses an undocumented header, and a missing required one', () => {
    const body = { metadata: meta('error', customer), error: { code: 'rate_limited', message: 'slow down' } };
    expect(liveness.problems(answer('GET', '/v1/usage', 429, body, { 'retry-after': '2', 'x-debug': '1' })).join()).to.include('header x-debug not documented');
    expect(liveness.problems(answer('GET', '/v1/usage', 429, body)).join()).to.include('required header Retry-After missing');
    expect(liveness.problems(answer('GET', '/v1/usage', 429, body, { 'retry-after': 'soon' })).join()).to.include('header Retry-After must be integer');
  });

  it('refuses a body member the schema does not document, and a wrong-method answer without Allow', () => {
    const usage = {
      year_month: '2026-11',
      total_calls: 0,
      monthly_limit: 50,
      remaining_calls: 50,
      over_limit_calls: 0,
      plan: 'free',
      hard_cap_enabled: true,
      extra: 1,
    };
    expect(liveness.problems(answer('GET', '/v1/usage', 200, { metadata: meta('success', customer), data: usage }, quota)).join()).to.include(
      'must NOT have additional properties',
    );
    const p = liveness.problems(answer('DELETE', '/v1/usage', 405, { metadata: meta('error'), error: { code: 'method_not_allowed', message: 'use GET' } }));
    expect(p.join()).to.include('required header Allow missing');
  });

  it("checks the emotion API's own shapes, and leaves the operator endpoints alone", () => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'X-Request-Id, Retry-After, Server-Timing' };
    expect(emotion.problems(answer('POST', '/feelings/v3/analysis', 401, { error: { code: 'missing_token', message: 'x' } }, cors))).to.deep.equal([]);
    expect(emotion.problems(answer('POST', '/feelings/v3/analysis', 401, { error: { code: 'missing_token', message: 'x' } })).join()).to.include(
      'Access-Control-Allow-Origin missing',
    );
    expect(emotion.problems(answer('GET', '/metrics', 200, 'anything', { 'x-anything': '1' }))).to.deep.equal([]);
  });
});
