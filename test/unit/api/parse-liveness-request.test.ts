import { expect } from 'chai';
import { MAX_IMAGE_BASE64_CHARS, parseLivenessRequest } from '../../../api/liveness/check-liveness';
import { AppError } from '../../../shared/errors';

function refusal(body: unknown): { status: number; code: string; message: string } {
  try {
    parseLivenessRequest(body);
  } catch (err) {
    if (err instanceof AppError) return { status: err.httpStatus, code: err.code, message: err.message };
    throw err;
  }
  throw new Error('accepted');
}

describe('parseLivenessRequest (the body of POST /v1/check/liveness)', () => {
  it('sets the limit at 10 MB = 10,485,760 Base64 characters', () => {
    expect(MAX_IMAGE_BASE64_CHARS).to.equal(10 * 1024 * 1024);
  });

  it('accepts an image of exactly 10,485,760 Base64 characters and refuses one more group with 413', () => {
    const atLimit = 'A'.repeat(MAX_IMAGE_BASE64_CHARS);
    const parsed = parseLivenessRequest({ image: atLimit, image_format: 'png' });
    expect(parsed.image.length).to.equal((MAX_IMAGE_BASE64_CHARS / 4) * 3);
    expect(parsed.imageFormat).to.equal('png');
    expect(refusal({ image: atLimit + 'AAAA', image_format: 'png' })).to.include({ status: 413, code: 'payload_too_large' });
    expect(refusal({ image: atLimit + 'A', image_format: 'png' })).to.include({ status: 413, code: 'payload_too_large' });
  });

  it('accepts wrapped Base64 (MIME line breaks), not counting the breaks toward the limit', () => {
    const lines = 'A'.repeat(MAX_IMAGE_BASE64_CHARS).match(/.{1,76}/g)!;
    const wrapped = lines.join('\r\n');
    expect(wrapped.length).to.be.greaterThan(MAX_IMAGE_BASE64_CHARS);
    const parsed = parseLivenessRequest({ image: wrapped, image_format: 'jpeg' });
    expect(parsed.image.length).to.equal((MAX_IMAGE_BASE64_CHARS / 4) * 3);
    const small = parseLivenessRequest({ image: 'aGVs\nbG8=', image_format: 'jpeg' });
    expect(small.image.toString()).to.equal('hello');
    // The idempotency fingerprint ignores the wrapping: the same image wrapped differently is the same request.
    expect(small.canonical).to.equal(parseLivenessRequest({ image: 'aGVsbG8=', image_format: 'jpeg' }).canonical);
  });

  it('answers 400 invalid_request naming the field for missing or malformed members', () => {
    expect(refusal({ image_format: 'jpeg' })).to.deep.include({ status: 400, code: 'invalid_request', message: 'image is required' });
    expect(refusal({ image: 'aGVsbG8=' })).to.deep.include({ status: 400, message: 'image_format must be "jpeg" or "png"' });
    expect(refusal({ image: 'aGVsbG8=', image_format: 'gif' }).message).to.equal('image_format must be "jpeg" or "png"');
    expect(refusal({ image: 42, image_format: 'jpeg' }).message).to.equal('image must be a Base64 string');
    expect(refusal({ image: '', image_format: 'jpeg' }).message).to.equal('image must not be empty');
  });

  it('refuses what is not standard Base64: data: URLs, URL-safe letters, bad length, stray padding', () => {
    for (const image of ['data:image/jpeg;base64,aGVsbG8=', 'aGVs-G8_', 'aGVsb', 'aG=Vs', '====', 'aGVs bG8=']) {
      expect(refusal({ image, image_format: 'jpeg' }), image).to.include({ status: 400, code: 'invalid_request' });
    }
  });

  it('refuses a body that is not a JSON object', () => {
    for (const body of [null, 'hello', 42, [{ image: 'aGVsbG8=', image_format: 'jpeg' }]]) {
      expect(refusal(body)).to.include({ status: 400, code: 'invalid_request' });
    }
  });
});
