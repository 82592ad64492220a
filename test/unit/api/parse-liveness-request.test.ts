import { expect } from 'chai';
import { parseLivenessJson, parseLivenessJsonText, parseLivenessRequest } from '../../../api/liveness/route';
import { MAX_IMAGE_BASE64_CHARS } from '../../../shared/contracts/http/liveness';
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

describe('parseLivenessJson (the JSON form read from its bytes)', () => {
  type Outcome = { image: string; imageFormat: string; canonical: string } | { status: number; code: string; message: string };
  const outcome = (parse: () => ReturnType<typeof parseLivenessRequest>): Outcome => {
    try {
      const r = parse();
      return { image: r.image.toString('hex'), imageFormat: r.imageFormat, canonical: r.canonical };
    } catch (err) {
      if (err instanceof AppError) return { status: err.httpStatus, code: err.code, message: err.message };
      throw err;
    }
  };
  /** What express.json (strict: false) and parseLivenessRequest answer for the same text. */
  const general = (text: string): Outcome => outcome(() => parseLivenessJsonText(text.replace(/^\uFEFF/, '')));

  const image = Buffer.from('a small image, of bytes \u00ff\u0000').toString('base64');
  const bodies = [
    `{"image":"${image}","image_format":"jpeg"}`,
    ` \r\n\t{ "image_format" : "png" ,\n "image" : "${image}" } \n`,
    `\uFEFF{"image":"${image}","image_format":"jpeg"}`,
    `{"image":"${image}","image_format":"jpeg","note":"kept out"}`,
    `{"image":"${image}","image_format":"jpeg","note":"tab\tinside"}`,
    `{"image":"${image}","image_format":"jpeg","n\u0001":"x"}`,
    `{"image":"${image}","image_format":"jpeg","n":3}`,
    `{"image":"${image}","image_format":"jpeg","n":{"a":"b"}}`,
    `{"image":"${image.slice(0, 8)}\\n${image.slice(8)}","image_format":"jpeg"}`,
    `{"image":"${image.slice(0, 8)}\\/${image.slice(8)}","image_format":"jpeg"}`,
    `{"image":"${image.slice(0, 8)}\n${image.slice(8)}","image_format":"jpeg"}`,
    `{"\\u0069mage":"${image}","image_format":"jpeg"}`,
    `{"image":"AAAA","image":"${image}","image_format":"jpeg"}`,
    `{"image":"${image}","image_format":"gif"}`,
    `{"image":"${image}","image_format":"JPEG"}`,
    `{"image":"${image}"}`,
    `{"image_format":"jpeg"}`,
    `{"image":"","image_format":"jpeg"}`,
    `{"image":"data:image/jpeg;base64,${image}","image_format":"jpeg"}`,
    `{"image":"${image.replace(/\+/g, '-')}-_","image_format":"jpeg"}`,
    `{"image":"${image}=","image_format":"jpeg"}`,
    `{"image":"caf\u00e9","image_format":"jpeg"}`,
    `{"image":"${image}","image_format":"jpeg"} x`,
    `{"image":"${image}","image_format":"jpeg",}`,
    `{"image":"${image}" "image_format":"jpeg"}`,
    `{"image":"${image}","image_format":"jpeg"`,
    `[{"image":"${image}","image_format":"jpeg"}]`,
    `"${image}"`,
    `{}`,
    ``,
    `   `,
    `null`,
  ];

  it('answers every body exactly as JSON.parse and parseLivenessRequest do', () => {
    for (const text of bodies) {
      expect(
        outcome(() => parseLivenessJson(Buffer.from(text, 'utf8'))),
        text,
      ).to.deep.equal(general(text));
    }
  });

  it('answers every body the same when it decodes the image over its own text (a call without Idempotency-Key)', () => {
    const withoutCanonical = (o: Outcome) => ('canonical' in o ? { image: o.image, imageFormat: o.imageFormat } : o);
    for (const text of bodies) {
      const consumed = (): Outcome => {
        try {
          const r = parseLivenessJson(Buffer.from(text, 'utf8'), true);
          return { image: r.image.toString('hex'), imageFormat: r.imageFormat, canonical: '' };
        } catch (err) {
          if (err instanceof AppError) return { status: err.httpStatus, code: err.code, message: err.message };
          throw err;
        }
      };
      expect(withoutCanonical(consumed()), text).to.deep.equal(withoutCanonical(general(text)));
    }
  });

  it('reads the common body (plain strings, valid Base64, a known format) without JSON.parse', () => {
    const parse = JSON.parse;
    let calls = 0;
    JSON.parse = (...args: Parameters<typeof JSON.parse>) => (calls++, parse(...args)) as unknown;
    try {
      for (const text of bodies.slice(0, 4)) parseLivenessJson(Buffer.from(text, 'utf8'));
      expect(calls).to.equal(0);
      parseLivenessJson(Buffer.from(bodies[6]!, 'utf8'));
      expect(calls, 'a number member goes to JSON.parse').to.equal(1);
    } finally {
      JSON.parse = parse;
    }
  });

  it('reads an image at the 10 MB limit, and refuses one group more with 413', () => {
    const atLimit = 'A'.repeat(MAX_IMAGE_BASE64_CHARS);
    const parsed = parseLivenessJson(Buffer.from(`{"image":"${atLimit}","image_format":"png"}`));
    expect(parsed.image.length).to.equal((MAX_IMAGE_BASE64_CHARS / 4) * 3);
    expect(outcome(() => parseLivenessJson(Buffer.from(`{"image":"${atLimit}AAAA","image_format":"png"}`)))).to.include({
      status: 413,
      code: 'payload_too_large',
    });
  });
});
