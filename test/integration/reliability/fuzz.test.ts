import { expect } from 'chai';
import { settledCount } from '../../support/billing';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { blank, portrait } from '../../../dev/harness/sample-images';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { startEmotionStack, type EmotionStack } from '../../support/emotion-stack';
import { monthOf } from '../../../shared/billing/month';
import { seededRandom as prng } from '../../../dev/harness/seeded-random';
import { rawRequest, type RawResult } from './raw-http';
import { creditsKey } from '../../../shared/billing/credit-ledger';

// Seeded: a failure prints its seed and case index; FUZZ_SEED=<n> replays the same cases.
const SEED = Number(process.env.FUZZ_SEED ?? 20260801);

/** The liveness API's documented 4xx answers (spec Errors table, plus 413 for bodies past 10 MB). */
const LIVENESS_4XX: Record<number, string[]> = {
  400: ['invalid_request', 'invalid_image'],
  401: ['invalid_api_key'],
  413: ['payload_too_large'],
};
/** The emotion API's 400 codes (docs: one per failed check of the spec's format table). */
const EMOTION_400 = [
  'invalid_request',
  'no_audio',
  'unsupported_format',
  'corrupt_audio',
  'bit_depth_unsupported',
  'sample_rate_out_of_range',
  'channels_out_of_range',
  'bit_rate_out_of_range',
  'too_long',
];

interface FuzzCase {
  name: string;
  headers: Record<string, string>;
  body: Buffer;
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

function randomString(r: Rand, max: number): string {
  const alphabets = ['abcXYZ019+/=', '\u0000\u0001\u001f"\\\u2028\u2029', 'ÄÖü€𝄞🙂\uFFFD', '{}[]:,', ' \t\r\n'];
  let s = '';
  const n = int(r, 0, max);
  for (let i = 0; i < n; i++) s += pick(r, [...pick(r, alphabets)]);
  return s;
}

function randomValue(r: Rand, depth: number): unknown {
  const kind = int(r, 0, depth > 4 ? 4 : 7);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return pick(r, [0, -1, 1e308, -1e-308, 2 ** 53 + 1, 3.14]);
    case 3:
      return randomString(r, 40);
    case 4:
      return pick(r, ['jpeg', 'png', 'JPEG', 'gif', '', 'jpeg\u0000']);
    case 5:
      return Array.from({ length: int(r, 0, 4) }, () => randomValue(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = int(r, 0, 4); i > 0; i--) o[pick(r, ['image', 'image_format', '__proto__', 'constructor', randomString(r, 8)])] = randomValue(r, depth + 1);
      return o;
    }
  }
}

function livenessCases(r: Rand, key: string, noFaceB64: string, faceB64: string): FuzzCase[] {
  const json = (body: unknown, extra: Record<string, string> = {}): FuzzCase => ({
    name: 'json',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...extra },
    body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  });
  const cases: FuzzCase[] = [];
  // Random structures, and the two fields with random values.
  for (let i = 0; i < 60; i++) cases.push({ ...json(randomValue(r, 0)), name: 'random structure' });
  for (let i = 0; i < 40; i++) cases.push({ ...json({ image: randomValue(r, 1), image_format: randomValue(r, 1) }), name: 'wrong types' });
  // Base64 that is almost right: data: URLs, URL-safe alphabet, whitespace, bad padding, a face under the wrong format.
  const almost = [
    `data:image/jpeg;base64,${noFaceB64}`,
    noFaceB64.replace(/\+/g, '-').replace(/\//g, '_') + '-_',
    ` ${noFaceB64}`,
    `${noFaceB64}===`,
    noFaceB64.slice(0, -1),
    noFaceB64.slice(0, 101),
    '====',
    'A',
    'AAAA',
    Buffer.from('GIF89a').toString('base64'),
  ];
  for (const image of almost) cases.push({ ...json({ image, image_format: pick(r, ['jpeg', 'png']) }), name: 'almost base64' });
  cases.push({ ...json({ image: faceB64, image_format: 'png' }), name: 'face labelled png' });
  // Truncated and bit-flipped images (decodable header, broken data).
  for (let i = 0; i < 10; i++) {
    const bytes = Buffer.from(faceB64, 'base64');
    const cut = bytes.subarray(0, int(r, 1, bytes.length - 200));
    cases.push({ ...json({ image: cut.toString('base64'), image_format: 'jpeg' }), name: 'truncated jpeg' });
  }
  // Duplicate keys: JSON.parse keeps the last; every variant must still be refused or be a no-face image.
  cases.push({ ...json(`{"image":"${faceB64}","image":5,"image_format":"jpeg"}`), name: 'duplicate image key' });
  cases.push({ ...json(`{"image":"${noFaceB64}","image_format":"jpeg","image_format":"gif"}`), name: 'duplicate format key' });
  cases.push({ ...json(`{"image_format":"jpeg","image":"${noFaceB64}","image_format":"jpeg"}`), name: 'duplicate same key (no face)' });
  // Deep nesting, in the body and inside a field.
  cases.push({ ...json('['.repeat(200_000) + ']'.repeat(200_000)), name: 'deep array' });
  cases.push({ ...json('{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000)), name: 'deep object' });
  cases.push({ ...json(`{"image":${'['.repeat(100_000)}${']'.repeat(100_000)},"image_format":"jpeg"}`), name: 'deep image field' });
  cases.push({ ...json('['.repeat(200_000)), name: 'unclosed deep array' });
  // Huge strings: just past the 10 MB image limit, a huge format, a huge key name.
  cases.push({ ...json({ image: 'A'.repeat(10 * 1024 * 1024 + 4), image_format: 'jpeg' }), name: 'image past 10 MB' });
  cases.push({ ...json({ image: noFaceB64, image_format: 'j'.repeat(5_000_000) }), name: 'huge format' });
  cases.push({ ...json(`{"${'k'.repeat(3_000_000)}":1}`), name: 'huge key' });
  cases.push({ ...json({ image: '€'.repeat(2_000_000), image_format: 'jpeg' }), name: 'multi-byte string' });
  // Invalid UTF-8 inside the JSON text.
  for (let i = 0; i < 10; i++) {
    const junk = Buffer.from(Array.from({ length: int(r, 1, 64) }, () => int(r, 0x80, 0xff)));
    cases.push({
      name: 'invalid utf-8',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: Buffer.concat([Buffer.from('{"image":"'), junk, Buffer.from('","image_format":"jpeg"}')]),
    });
  }
  // Random bytes and truncated JSON under a JSON content type.
  for (let i = 0; i < 15; i++) {
    const bytes = Buffer.from(Array.from({ length: int(r, 0, 2048) }, () => int(r, 0, 255)));
    cases.push({ name: 'random bytes', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: bytes });
  }
  const valid = JSON.stringify({ image: noFaceB64, image_format: 'jpeg' });
  for (let i = 0; i < 10; i++) cases.push({ ...json(valid.slice(0, int(r, 0, valid.length - 1))), name: 'truncated json' });
  // Content types and encodings.
  const types = [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/json; charset=utf-16',
    'application/json; charset=koi8-r',
    'application/json; charset=nonsense',
    'application/jsonx',
    'image/jpeg',
    '',
    '*/*',
    'application/json;;;',
    'APPLICATION/JSON',
    'application/vnd.api+json',
  ];
  for (const type of types) cases.push({ ...json(valid, { 'content-type': type }), name: `content-type ${JSON.stringify(type)}` });
  cases.push({ ...json(valid, { 'content-encoding': 'br' }), name: 'content-encoding br' });
  cases.push({ ...json(valid, { 'content-encoding': 'x-unknown' }), name: 'content-encoding unknown' });
  cases.push({ ...json('garbage', { 'content-encoding': 'gzip' }), name: 'gzip garbage' });
  cases.push({ ...json('garbage', { 'content-encoding': 'deflate' }), name: 'deflate garbage' });
  // A gzip bomb: 1 MB on the wire that inflates past the 10 MB body limit.
  cases.push({
    name: 'gzip bomb',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-api-key': key },
    body: zlib.gzipSync(Buffer.from(`{"image":"${'A'.repeat(64 * 1024 * 1024)}","image_format":"jpeg"}`)),
  });
  // Header fuzz: keys and companion headers.
  const keys = [
    '',
    'lc_',
    `lc_${'A'.repeat(43)}`,
    key.slice(0, -1),
    `${key}A`,
    key.toUpperCase(),
    `lc_${'A'.repeat(7000)}`,
    ` ${key}`,
    `${key},${key}`,
    'lc_ÄÖÜäöüÄÖÜäöüÄÖÜäöüÄÖÜäöüÄÖÜäöüÄÖÜäöüÄÖÜ',
    'Bearer x',
  ];
  for (const k of keys) cases.push({ ...json(valid, { 'x-api-key': Buffer.from(k, 'utf8').toString('latin1') }), name: `api key ${k.slice(0, 12)}` });
  for (let i = 0; i < 15; i++) {
    // Strips the control characters a header value cannot carry.
    // eslint-disable-next-line no-control-regex -- the control characters are the point
    const headerUnsafe = /[\u0000-\u0008\u000a-\u001f\u007f]/g;
    const v = Buffer.from(randomString(r, 300), 'utf8').toString('latin1').replace(headerUnsafe, '');
    cases.push({
      ...json(valid, { [pick(r, ['idempotency-key', 'x-request-id', 'x-forwarded-for', 'accept', 'x-api-key'])]: v }),
      name: 'random header value',
    });
  }
  return cases;
}

function checkLiveness(c: FuzzCase, res: RawResult, label: string): void {
  const codes = LIVENESS_4XX[res.status];
  expect(codes, `${label}: status ${res.status} ${res.text.slice(0, 200)}`).to.not.equal(undefined);
  expect(res.json?.metadata?.status, `${label}: envelope`).to.equal('error');
  expect(codes, `${label}: code ${res.json?.error?.code}`).to.include(res.json.error.code);
  if (res.status === 401) expect(res.json.metadata.customer_id).to.equal(null);
  void c;
}

function makeAudio(dir: string): Record<string, Buffer> {
  const raw = path.join(dir, 'speech.wav');
  execFileSync('espeak-ng', ['-v', 'en-us', '-s', '150', '-w', raw, 'The quick brown fox jumps over the lazy dog, twice over.']);
  const variants: Record<string, string[]> = {
    'pcm.wav': ['-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le'],
    'gsm.wav': ['-ar', '8000', '-ac', '1', '-c:a', 'libgsm_ms'],
    'pcm.aiff': ['-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16be'],
    'adts.aac': ['-ar', '44100', '-ac', '1', '-c:a', 'aac', '-b:a', '128k', '-f', 'adts'],
    'aac.m4a': ['-ar', '44100', '-ac', '1', '-c:a', 'aac', '-b:a', '128k'],
    'lame.mp3': ['-ar', '44100', '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '128k'],
    'wmav2.wma': ['-ar', '44100', '-ac', '1', '-c:a', 'wmav2', '-b:a', '128k'],
    'flac.flac': ['-ar', '16000', '-ac', '1', '-c:a', 'flac'],
  };
  const out: Record<string, Buffer> = {};
  for (const [name, args] of Object.entries(variants)) {
    const file = path.join(dir, name);
    execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', raw, ...args, file]);
    out[name] = fs.readFileSync(file);
  }
  return out;
}

const MAGIC: Record<string, Buffer> = {
  riff: Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'),
  form: Buffer.from('FORM\x00\x00\x00\x20AIFFCOMM', 'latin1'),
  flac: Buffer.from('fLaC', 'latin1'),
  ftyp: Buffer.from('\x00\x00\x00\x18ftypM4A ', 'latin1'),
  id3: Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'),
  asf: Buffer.from([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c]),
  adts: Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc]),
  mp3: Buffer.from([0xff, 0xfb, 0x90, 0x64]),
};

interface AudioCase {
  name: string;
  body: Buffer;
  type: string;
  /** Must be refused (the bytes hold no usable audio of an accepted format); otherwise 200 is allowed too. */
  mustFail: boolean;
}

function emotionCases(r: Rand, files: Record<string, Buffer>): AudioCase[] {
  const types = ['audio/wav', 'audio/mpeg', 'audio/flac', 'audio/aac', 'audio/x-ms-wma', 'audio/aiff', 'audio/mp4', 'audio/ogg', 'audio/*'];
  const cases: AudioCase[] = [];
  for (let i = 0; i < 20; i++) {
    const body = Buffer.from(Array.from({ length: int(r, 1, 4096) }, () => int(r, 0, 255)));
    cases.push({ name: 'random bytes', body, type: pick(r, types), mustFail: true });
  }
  // Random bytes behind each format's magic number: the sniffer says yes, the demuxer must say no.
  for (const [name, magic] of Object.entries(MAGIC)) {
    const tail = Buffer.from(Array.from({ length: int(r, 0, 3000) }, () => int(r, 0, 255)));
    cases.push({ name: `${name} magic + random`, body: Buffer.concat([magic, tail]), type: pick(r, types), mustFail: true });
  }
  for (const [name, bytes] of Object.entries(files)) {
    // Header-only and nearly empty truncations.
    for (const n of [1, 4, 12, 44, 100]) cases.push({ name: `${name} first ${n} bytes`, body: bytes.subarray(0, n), type: 'audio/wav', mustFail: true });
    // Random truncation points: a truncated file may still hold decodable audio (200) or not (400).
    for (let i = 0; i < 3; i++) {
      const cut = int(r, 100, bytes.length - 1);
      cases.push({ name: `${name} truncated at ${cut}/${bytes.length}`, body: bytes.subarray(0, cut), type: pick(r, types), mustFail: false });
    }
    // Corrupted bytes in the middle.
    const flipped = Buffer.from(bytes);
    for (let i = 0; i < 20; i++) flipped[int(r, 64, flipped.length - 1)] = int(r, 0, 255);
    cases.push({ name: `${name} with flipped bytes`, body: flipped, type: pick(r, types), mustFail: false });
    // Mislabelled: another format's magic over this file's header, and a wrong Content-Type on intact bytes.
    for (const [mname, magic] of Object.entries(MAGIC)) {
      if (name.includes(mname)) continue;
      if (r() < 0.4) {
        const body = Buffer.concat([magic, bytes.subarray(magic.length)]);
        cases.push({ name: `${name} under ${mname} magic`, body, type: pick(r, types), mustFail: false });
      }
    }
    cases.push({ name: `${name} labelled ${types[0]}`, body: bytes, type: pick(r, types), mustFail: false });
  }
  return cases;
}

describe('Bad input: fuzzing the liveness and emotion APIs (seeded; FUZZ_SEED replays)', function () {
  this.timeout(110_000);

  describe('POST /v1/check/liveness', () => {
    let stack: LivenessStack;
    let account: { customerId: string; primaryKey: string };

    before(async () => {
      stack = await startLivenessStack('fuzz-liveness', {
        // Hundreds of malformed calls from one key: refused work spends fair use (fair-share.test.ts), so the bucket
        // is made large here to see each body's own answer, not the throttle's.
        env: { THROTTLE_BURST: '100000' },
      });
      account = await stack.createAccount('free');
    });
    after(() => stack?.stop());

    it(`answers every malformed body and header with a documented 4xx, never a 500, and charges nothing (seed ${SEED})`, async () => {
      const r = prng(SEED);
      const noFace = (await blank()).toString('base64');
      const face = (await portrait()).toString('base64');
      const cases = livenessCases(r, account.primaryKey, noFace, face);
      // Odd but well-formed pictures the real engine must refuse cleanly (400 invalid_image), not crash on.
      const mk = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: { r: 9, g: 200, b: 30 } } });
      const odd: Array<[string, Buffer, string]> = [
        ['1x1 png', await mk(1, 1).png().toBuffer(), 'png'],
        ['1x9000 png', await mk(1, 9000).png().toBuffer(), 'png'],
        ['9000x1 jpeg', await mk(9000, 1).jpeg().toBuffer(), 'jpeg'],
        ['16-bit png', await mk(64, 64).png().toColourspace('rgb16').toBuffer(), 'png'],
        ['grey+alpha png', await mk(64, 64).ensureAlpha(0.3).greyscale().png().toBuffer(), 'png'],
        ['palette png', await mk(64, 64).png({ palette: true }).toBuffer(), 'png'],
        ['cmyk jpeg', await mk(64, 64).jpeg().toColourspace('cmyk').toBuffer(), 'jpeg'],
      ];
      for (const [name, bytes, format] of odd) {
        cases.push({
          name,
          headers: { 'content-type': 'application/json', 'x-api-key': account.primaryKey },
          body: Buffer.from(JSON.stringify({ image: bytes.toString('base64'), image_format: format })),
        });
      }
      let i = 0;
      const tally: Record<string, number> = {};
      for (const c of cases) {
        const label = `seed ${SEED} case ${i++} (${c.name})`;
        const res = await rawRequest(stack.api.port, { path: '/v1/check/liveness', headers: c.headers, body: c.body, timeoutMs: 30_000 });
        checkLiveness(c, res, label);
        const k = `${res.status} ${res.json.error.code}`;
        tally[k] = (tally[k] ?? 0) + 1;
      }
      console.log(`      ${cases.length} cases:`, JSON.stringify(tally));
      expect(cases.length).to.be.greaterThan(200);
      // Nothing charged, nothing left reserved; and the service still works.
      expect(await stack.api.deps.models.UsageEvent.countDocuments({ customerId: account.customerId })).to.equal(0);
      const h = await stack.api.deps.redis.hgetall(creditsKey(stack.prefix, account.customerId, monthOf(new Date())));
      expect(Number(h.used ?? 0)).to.equal(0);
      expect(Number(h.calls ?? 0)).to.equal(0);
      const ok = await stack.check(account.primaryKey, Buffer.from(face, 'base64'));
      expect(ok.status).to.equal(200);
      expect(ok.body.metadata.remaining_calls).to.equal(49);
    });
  });

  describe('POST /feelings/v3/analysis', () => {
    let stack: EmotionStack;
    let dir: string;
    // The worker's own temp dir: other test runs on this machine create and leave `emotion-*` folders in the
    // shared /tmp (a SIGKILLed worker's stay until a sweep), so only a private one can show what this worker left.
    let workerTmp: string;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-fuzz-audio-'));
      workerTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-fuzz-worker-tmp-'));
      const tmpdir = process.env.TMPDIR;
      process.env.TMPDIR = workerTmp; // os.tmpdir() is read once, when the worker's engine loads
      try {
        // Hundreds of files from one token: refused audio spends fair use (emotion-fair-use.test.ts), so the allowance is
        // made large here to see each file's own answer, not the throttle's.
        stack = await startEmotionStack('fuzz-emotion', { env: { EMOTION_FAIR_USE_BURST_SECONDS: '10000000' } });
      } finally {
        if (tmpdir === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = tmpdir;
      }
    });
    after(async () => {
      await stack?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(workerTmp, { recursive: true, force: true });
    });

    it(`answers random, truncated and mislabelled audio of every format with 200 or a documented 400, never a 500 (seed ${SEED})`, async () => {
      const r = prng(SEED + 1);
      const files = makeAudio(dir);
      // Each intact file is accepted: the fuzz cases below start from good inputs.
      for (const [name, bytes] of Object.entries(files)) {
        const res = await rawRequest(stack.api.port, {
          path: '/feelings/v3/analysis',
          headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'audio/wav' },
          body: bytes,
        });
        expect(res.status, `${name}: ${res.text}`).to.equal(200);
      }
      // The intact files' events arrive through the outbox; waiting for their count (3 s at most) lets them land first.
      const before = await settledCount(
        () => stack.models.UsageEvent.countDocuments({ service: 'emotion', tokenId: stack.tokenId }),
        Object.keys(files).length,
        3000,
      );
      const cases = emotionCases(r, files);
      let accepted = 0;
      let i = 0;
      const tally: Record<string, number> = {};
      for (const c of cases) {
        const label = `seed ${SEED + 1} case ${i++} (${c.name})`;
        const res = await rawRequest(stack.api.port, {
          path: '/feelings/v3/analysis',
          headers: { authorization: `Bearer ${stack.token}`, 'content-type': c.type },
          body: c.body,
        });
        const k = `${res.status} ${res.json?.error?.code ?? 'ok'}`;
        tally[k] = (tally[k] ?? 0) + 1;
        if (res.status === 200 && !c.mustFail) {
          accepted++;
          expect(res.json.results, label).to.be.an('array');
          continue;
        }
        expect(res.status, `${label}: ${res.text.slice(0, 200)}`).to.equal(400);
        expect(EMOTION_400, `${label}: ${res.text.slice(0, 200)}`).to.include(res.json?.error?.code);
      }
      console.log(`      ${cases.length} cases:`, JSON.stringify(tally));
      expect(cases.length).to.be.greaterThan(100);
      // A usage event only for the answered calls; no temporary files left behind.
      const count = () => stack.models.UsageEvent.countDocuments({ service: 'emotion', tokenId: stack.tokenId });
      expect(await settledCount(count, before + accepted)).to.equal(before + accepted);
      expect(fs.readdirSync(workerTmp).filter((f) => f.startsWith('emotion-'))).to.deep.equal([]);
    });
  });
});
