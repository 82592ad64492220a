// The streaming pass over a liveness JSON body (api/liveness/plain-body-scan.ts): a body of the plain shape whose
// image breaks the strict Base64 rule is refused in the chunk that shows it; any other body is left to the full parse.
import { expect } from 'chai';
import { PlainBodyScan } from '../../../api/liveness/plain-body-scan';
import { parseLivenessJson } from '../../../api/liveness/route';

/** Feeds `body` to a fresh scan in chunks of `size` bytes: the index of the chunk refused, or null. */
function refusedAt(body: string, size = 7): number | null {
  const scan = new PlainBodyScan();
  const bytes = Buffer.from(body);
  for (let i = 0; i * size < bytes.length; i++) {
    if (scan.push(bytes.subarray(i * size, (i + 1) * size))) return i;
  }
  return null;
}

/** The full parse's answer to `body`: 'ok' or its message. */
function fullParse(body: string): string {
  try {
    parseLivenessJson(Buffer.from(body));
    return 'ok';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('PlainBodyScan: the liveness body checked as it streams', () => {
  it('refuses the plain shape in the chunk holding the first character outside the Base64 alphabet, as the full parse would', () => {
    const body = `{"image_format":"jpeg","image":"${'QUJD'.repeat(50)}-${'QUJD'.repeat(50)}"}`;
    const at = refusedAt(body);
    expect(at).to.equal(Math.floor(body.indexOf('-') / 7));
    expect(fullParse(body)).to.match(/not valid Base64/);
  });

  it('refuses a character after the padding and a third "="', () => {
    expect(refusedAt('{"image_format":"png", "image" : "QUJD=A"}')).to.not.equal(null);
    expect(refusedAt('{"image_format":"png","image":"QU==="}')).to.not.equal(null);
  });

  it('leaves every valid body and every other shape to the full parse', () => {
    const valid = [`{"image_format":"jpeg","image":"QUJDRA=="}`, `\uFEFF{ "image_format" : "png" , "image" : "QUJD" }`];
    for (const body of valid) {
      expect(refusedAt(body), body).to.equal(null);
      expect(fullParse(body), body).to.equal('ok');
    }
    // The image first (the format's own error may come first), an escape, another format, not an object.
    for (const body of [
      '{"image":"QU-D","image_format":"jpeg"}',
      '{"image_format":"jpeg","image":"QU\\/D-"}',
      '{"image_format":"gif","image":"-"}',
      '["image"]',
    ]) {
      expect(refusedAt(body), body).to.equal(null);
    }
  });
});
