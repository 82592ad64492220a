import { expect } from 'chai';
import { fromFrameworkError, type FrameworkErrorWording } from '../../../api/http/error-handler';
import { AppError, PayloadTooLargeError } from '../../../shared/errors';

const api: FrameworkErrorWording = { bodyTooLarge: () => new PayloadTooLargeError('too big') };
const people: FrameworkErrorWording = {
  bodyTooLarge: () => new AppError('invalid_request', 'The form is too large.', 413),
  unreadable: 'The request could not be read.',
  unavailable: 'Briefly unavailable.',
};
const parserError = (type: string, status = 400) => Object.assign(new Error(type), { type, status });
const brief = (e: AppError | null) => e && { code: e.code, status: e.httpStatus, message: e.message };

describe('fromFrameworkError: one mapping of framework errors for the API and the console', () => {
  it("maps the body parsers' errors to 413 and 400 with what went wrong", () => {
    expect(brief(fromFrameworkError(parserError('entity.too.large', 413), api))).to.deep.equal({ code: 'payload_too_large', status: 413, message: 'too big' });
    expect(brief(fromFrameworkError(parserError('entity.parse.failed'), api))).to.deep.equal({
      code: 'invalid_request',
      status: 400,
      message: 'Request body is not valid JSON',
    });
    expect(fromFrameworkError(parserError('charset.unsupported', 415), api)?.message).to.equal('Unsupported body encoding or charset');
    expect(fromFrameworkError(parserError('request.aborted'), api)?.message).to.equal('Request aborted by the client');
    expect(brief(fromFrameworkError(Object.assign(new Error('x'), { status: 414 }), api))).to.deep.equal({
      code: 'invalid_request',
      status: 400,
      message: 'Malformed request',
    });
  });

  it('words them for people when the console asks', () => {
    expect(brief(fromFrameworkError(parserError('entity.too.large', 413), people))).to.deep.equal({
      code: 'invalid_request',
      status: 413,
      message: 'The form is too large.',
    });
    expect(fromFrameworkError(parserError('entity.parse.failed'), people)?.message).to.equal('The request could not be read.');
  });

  it('maps database and queue outages to 503 service_unavailable', () => {
    const mongo = Object.assign(new Error('connection refused'), { name: 'MongoServerSelectionError' });
    expect(brief(fromFrameworkError(mongo, api))).to.deep.equal({ code: 'service_unavailable', status: 503, message: 'database unavailable' });
    expect(fromFrameworkError(mongo, people)?.message).to.equal('Briefly unavailable.');
    const redis = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    expect(brief(fromFrameworkError(redis, api))).to.deep.equal({ code: 'service_unavailable', status: 503, message: 'queue unavailable' });
  });

  it('leaves anything else (a bug) to the caller: null, which becomes 500 internal_error', () => {
    for (const err of [new TypeError('x is undefined'), Object.assign(new Error('boom'), { status: 500 }), null, undefined, 'string thrown']) {
      expect(fromFrameworkError(err, api)).to.equal(null);
    }
  });
});
