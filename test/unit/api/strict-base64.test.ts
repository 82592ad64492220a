// decodeStrictBase64 against the rule it keeps (the regular expression plus length % 4 !== 1, then Buffer.from),
// on edge cases and on seeded random texts built from valid groups with one character changed, as a string and
// as bytes; and its in-place form on the same texts (the same answer; a refused text left untouched).
import { expect } from 'chai';
import { decodeStrictBase64, decodeStrictBase64InPlace } from '../../../api/liveness/strict-base64';
import { seededRandom } from '../../../dev/harness/seeded-random';

const oldRule = (t: string) => /^[A-Za-z0-9+/]+={0,2}$/.test(t) && t.length % 4 !== 1;

/** The text as the general JSON parser hands it over (a string) and as the body holds it (its UTF-8 bytes). */
function agrees(t: string): void {
  for (const form of [t, Buffer.from(t, 'utf8')]) {
    const what = `${JSON.stringify(t)} as ${typeof form === 'string' ? 'a string' : 'bytes'}`;
    const bytes = decodeStrictBase64(form);
    expect(bytes !== null, what).to.equal(oldRule(t));
    if (bytes) expect(bytes.equals(Buffer.from(t, 'base64')), what).to.equal(true);
  }
  // In place, inside a larger body (the bytes around the text must stay as they were).
  const body = Buffer.from(`{"image":"${t}"}`, 'utf8');
  const before = Buffer.from(body);
  const text = body.subarray(10, body.length - 2);
  const inPlace = decodeStrictBase64InPlace(text);
  expect(inPlace !== null, `${JSON.stringify(t)} in place`).to.equal(oldRule(t));
  if (inPlace) {
    expect(inPlace.equals(Buffer.from(t, 'base64')), `${JSON.stringify(t)} in place`).to.equal(true);
    expect(inPlace.buffer, "the text's own memory").to.equal(body.buffer);
    expect(body.subarray(body.length - 2).equals(before.subarray(before.length - 2))).to.equal(true);
  } else {
    expect(body.equals(before), `${JSON.stringify(t)} refused and untouched`).to.equal(true);
  }
}

describe("decodeStrictBase64 (the image field's Base64 check)", () => {
  it('agrees with the old regular expression on edge cases', () => {
    const cases = [
      '',
      'Q',
      'QQ',
      'QQ=',
      'QQ==',
      'QQ===',
      'QUI',
      'QUI=',
      'QUJD',
      'QUJDQ',
      'QUJDQ=',
      'QUJDQ==',
      '=',
      '==',
      '===',
      'Q===',
      'QU=J',
      'QQ=a',
      'Q Q=',
      'QUJD QUJD',
      'QQ-_',
      'QUJD-UJD',
      'QUJD_UJD',
      'QUJD\tUJD',
      'QUJDQUJ\u012b',
      'QUJDQUJ\u00c4',
      'QUJD\u0000UJD',
      'QUJDQUJD\n',
      'QUJD.UJD',
      'QUJD*',
      'QUJDQUJD*',
      '+/+/',
      '////',
      '++++',
      'QUJD=QUJD',
      'QUJD==QU',
      'data:image/jpeg;base64,QUJD',
      'QUJDQUJDQUJDQ\u012b==',
      'QUJDQUJDQUJDQUJD\ud83d\ude00',
    ];
    for (const t of cases) agrees(t);
  });

  it('agrees on 20,000 random texts around valid Base64', () => {
    const random = seededRandom(13);
    const pick = (s: string) => s[Math.floor(random() * s.length)]!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const intruders = '=-_ .*\t\n\u0000\u00e9\u012b\u0141\uff21';
    for (let i = 0; i < 20_000; i++) {
      const bytes = Buffer.from(Array.from({ length: Math.floor(random() * 12) }, () => Math.floor(random() * 256)));
      let t = bytes.toString('base64');
      if (random() < 0.3) t = t.replace(/=+$/, '');
      if (random() < 0.7 && t.length > 0) {
        const at = Math.floor(random() * t.length);
        const c = random() < 0.5 ? pick(intruders) : pick(alphabet);
        t = random() < 0.5 ? t.slice(0, at) + c + t.slice(at + 1) : t.slice(0, at) + c + t.slice(at);
      }
      agrees(t);
    }
  });

  it('decodes what Buffer decodes for valid text', () => {
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) & 255));
    expect(decodeStrictBase64(bytes.toString('base64'))!.equals(bytes)).to.equal(true);
    expect(decodeStrictBase64(Buffer.from(bytes.toString('base64')))!.equals(bytes)).to.equal(true);
  });
});
