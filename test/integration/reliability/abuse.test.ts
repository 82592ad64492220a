import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { portrait } from '../../../dev/harness/sample-images';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { startEmotionStack, type EmotionStack } from '../../support/emotion-stack';
import { median } from '../../../dev/harness/harness';
import { seededRandom as prng } from '../../../dev/harness/seeded-random';
import { rawRequest } from './raw-http';
import { PREFIX_BUCKETS } from '../../../api/http/throttle';
import { keysUnder } from '../../support/engines';

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A valid PNG header declaring width x height RGB pixels, with only a few rows of (compressed) data. */
function pngBomb(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc(4 * (1 + width * 3));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Opens a socket, sends a request line, then one header byte per second; resolves with the seconds until
 *  the server closes it and what the server wrote before closing. */
function slowLoris(port: number, limitMs: number): Promise<{ seconds: number; reply: string }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    let reply = '';
    const sock = net.connect(port, '127.0.0.1');
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      clearInterval(timer);
      sock.destroy();
      reject(new Error(`socket still open after ${limitMs} ms`));
    }, limitMs);
    sock.on('connect', () => {
      sock.write('POST /v1/check/liveness HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      timer = setInterval(() => sock.writable && sock.write('X'), 1000);
    });
    sock.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ seconds: (Date.now() - t0) / 1000, reply });
    });
  });
}

describe('Abuse: bombs, slow clients, oversized headers, key guessing, security headers', function () {
  this.timeout(110_000);
  let live: LivenessStack;
  let emo: EmotionStack;
  let account: { customerId: string; primaryKey: string };
  let dir: string;

  before(async () => {
    live = await startLivenessStack('abuse-liveness');
    emo = await startEmotionStack('abuse-emotion');
    account = await live.createAccount('business');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-abuse-'));
  });
  after(async () => {
    await live?.stop();
    await emo?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const analyse = (body: Buffer) =>
    rawRequest(emo.api.port, {
      path: '/feelings/v3/analysis',
      headers: { authorization: `Bearer ${emo.token}`, 'content-type': 'audio/flac' },
      body,
      timeoutMs: 30_000,
    });

  describe('decompression bombs', () => {
    it('refuses a 60-byte-per-row PNG declaring 50000 x 50000 pixels with 400 invalid_image, fast and without allocating the pixels', async () => {
      const bomb = pngBomb(50_000, 50_000);
      expect(bomb.length).to.be.lessThan(2_000_000);
      const rss0 = process.memoryUsage().rss;
      const res = await live.check(account.primaryKey, bomb, 'png');
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_image');
      expect(res.body.error.message).to.match(/50000x50000/);
      // 7.5 GB of RGB if decoded; the API and the worker both live in this process.
      expect(process.memoryUsage().rss - rss0).to.be.lessThan(200 * 1024 * 1024);
      expect(await live.api.deps.models.UsageEvent.countDocuments({ customerId: account.customerId })).to.equal(0);
    });

    it('refuses a 2 MB FLAC of three hours of silence with 400 too_long before decoding it', async () => {
      const file = path.join(dir, 'silence-3h.flac');
      execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', '10800', '-c:a', 'flac', file]);
      const res = await analyse(fs.readFileSync(file));
      expect(res.status, res.text).to.equal(400);
      expect(res.json.error.code).to.equal('too_long');
      // The length read from the stream header: decoding 3 h would have run into the 5 s budget (503 processing_timeout).
      expect(res.json.error.message).to.match(/lasts 10800 s/);
    });

    it('refuses headers that lie about the length: a WAV claiming 4 GB of samples, a FLAC and an MP3 claiming days', async () => {
      const rate = 16000;
      const pcm = Buffer.alloc(rate * 2);
      const wav = Buffer.alloc(44);
      wav.write('RIFF', 0, 'latin1');
      wav.writeUInt32LE(0xfffffff0, 4);
      wav.write('WAVEfmt ', 8, 'latin1');
      wav.writeUInt32LE(16, 16);
      wav.writeUInt16LE(1, 20);
      wav.writeUInt16LE(1, 22);
      wav.writeUInt32LE(rate, 24);
      wav.writeUInt32LE(rate * 2, 28);
      wav.writeUInt16LE(2, 32);
      wav.writeUInt16LE(16, 34);
      wav.write('data', 36, 'latin1');
      wav.writeUInt32LE(0xffffffd0, 40);
      const lyingWav = Buffer.concat([wav, pcm]);

      const flacFile = path.join(dir, 'short.flac');
      execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=220:r=16000', '-t', '2', '-c:a', 'flac', flacFile]);
      const flac = fs.readFileSync(flacFile);
      // STREAMINFO starts at byte 8; total samples are the low 36 bits at bytes 21..25 of the file.
      flac[21] = (flac[21]! & 0xf0) | 0x0f;
      flac.fill(0xff, 22, 26);

      const mp3File = path.join(dir, 'short.mp3');
      execFileSync('ffmpeg', [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        'sine=f=220:r=44100',
        '-t',
        '2',
        '-c:a',
        'libmp3lame',
        '-q:a',
        '4',
        mp3File,
      ]);
      const mp3 = fs.readFileSync(mp3File);
      const xing = mp3.indexOf('Xing');
      expect(xing).to.be.greaterThan(0);
      mp3.writeUInt32BE(0x0fffffff, xing + 8); // frame count: 268 M frames ≈ 81 days

      // Never a long decode (which the 5 s budget would turn into 503 processing_timeout): the WAV is read for
      // the 1 s of samples it holds; the FLAC is refused by its STREAMINFO's claimed length; the MP3's claimed
      // 268 M frames over its real size give ffprobe a bit rate far below 96 kbps, and it is refused for that.
      const wavRes = await analyse(lyingWav);
      expect(wavRes.status, wavRes.text).to.equal(200);
      expect(wavRes.json.summary.duration).to.equal(1);
      const flacRes = await analyse(flac);
      expect(flacRes.status, flacRes.text).to.equal(400);
      expect(flacRes.json.error.code).to.equal('too_long');
      const mp3Res = await analyse(mp3);
      expect(mp3Res.status, mp3Res.text).to.equal(400);
      expect(mp3Res.json.error.code).to.equal('bit_rate_out_of_range');
    });

    it('analyses a 280 kB FLAC of 25 minutes of silence (under the 30 min limit) in full, in bounded memory', async () => {
      // A 30 s budget (not the shipped 5 s): this test is about a complete answer and bounded memory; whether 25 min
      // fit the 5 s budget depends on the machine's speed, which bench/emotion.ts measures on a quiet one.
      const roomy = await startEmotionStack('abuse-emotion-long', { env: { EMOTION_BUDGET_MS: '30000' } });
      try {
        const file = path.join(dir, 'silence-25m.flac');
        execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', '1500', '-c:a', 'flac', file]);
        const rss0 = process.memoryUsage().rss;
        const res = await rawRequest(roomy.api.port, {
          path: '/feelings/v3/analysis',
          headers: { authorization: `Bearer ${roomy.token}`, 'content-type': 'audio/flac' },
          body: fs.readFileSync(file),
          timeoutMs: 60_000,
        });
        expect(res.status, res.text).to.equal(200);
        expect(res.json.summary.duration).to.equal(1500);
        expect(res.json.results).to.have.length(300);
        expect(res.json.results.every((r: { speech_ratio: number }) => r.speech_ratio === 0)).to.equal(true);
        // 12 M samples at 8 kHz as float32 = 48 MB; a couple of copies at most.
        expect(process.memoryUsage().rss - rss0).to.be.lessThan(250 * 1024 * 1024);
      } finally {
        await roomy.stop();
      }
    });
  });

  describe('slow and oversized requests', () => {
    it('closes a slow-loris socket (one header byte per second) with 408 once headersTimeout (10 s) is up, on both APIs', async () => {
      // Given up on at 45 s, before the 60 s requestTimeout: a 408 and a close by then can only be the headers
      // timeout (the one-second connection sweep makes it 10-11 s on a quiet machine; the margin is for a busy one).
      const [a, b] = await Promise.all([slowLoris(live.api.port, 45_000), slowLoris(emo.api.port, 45_000)]);
      for (const { seconds, reply } of [a, b]) {
        expect(reply).to.match(/^HTTP\/1\.1 408 /);
        // Trickling bytes does not keep the socket open, and it is not cut before the 10 s allowed.
        expect(seconds).to.be.at.least(9.5);
      }
    });

    it('answers 431 to 20 kB of headers on both APIs, at once', async () => {
      for (const port of [live.api.port, emo.api.port]) {
        // 431 is Node's answer to the header block itself: no timeout (that would be a 408) was waited out.
        const res = await rawRequest(port, { path: '/v1/health', method: 'GET', headers: { 'x-filler': 'a'.repeat(20_000) } });
        expect(res.status).to.equal(431);
      }
    });

    it('answers 413 to a body past 10 MB on both APIs without reading it all', async () => {
      const big = Buffer.alloc(11 * 1024 * 1024, 0x41);
      const l = await rawRequest(live.api.port, {
        path: '/v1/check/liveness',
        headers: { 'content-type': 'application/json', 'x-api-key': account.primaryKey },
        body: big,
      });
      expect(l.status).to.equal(413);
      const e = await rawRequest(emo.api.port, {
        path: '/feelings/v3/analysis',
        headers: { authorization: `Bearer ${emo.token}`, 'content-type': 'audio/wav' },
        body: big,
      });
      expect(e.status).to.equal(413);
    });
  });

  describe('keys', () => {
    const usage = (key: string) => rawRequest(live.api.port, { method: 'GET', path: '/v1/usage', headers: { 'x-api-key': key } });

    it('throttles key guessing per client address: past the allowance every attempt gets 429, a right key too, until the Retry-After it gave', async () => {
      // A 20-failure allowance refilling one every 10 s (shipped: see config-defaults.test.ts): small enough to spend in
      // the test, and slow enough that no refill lands while the test sends, however busy the machine.
      const RATE_PER_SEC = 0.1;
      const guarded = await startLivenessStack('abuse-bruteforce', {
        withWorker: false,
        env: { AUTH_FAILURE_BURST: '20', AUTH_FAILURE_RATE_PER_SEC: String(RATE_PER_SEC) }, // why: the comment above
      });
      try {
        const acc = await guarded.createAccount('business');
        const r = prng(99);
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
        const guess = () => `lc_${Array.from({ length: 43 }, () => alphabet[Math.floor(r() * 64)]).join('')}`;
        const statuses: number[] = [];
        const started = performance.now();
        for (let i = 0; i < 40; i++) {
          const res = await rawRequest(guarded.api.port, { method: 'GET', path: '/v1/usage', headers: { 'x-api-key': guess() } });
          statuses.push(res.status);
          if (res.status === 429) {
            expect(res.json.error.code).to.equal('rate_limited');
            expect(Number(res.headers['retry-after'])).to.be.at.least(1);
          }
        }
        expect(statuses.slice(0, 20)).to.deep.equal(Array(20).fill(401));
        // Past the allowance only what refilled meanwhile is let through (none unless sending took 10 s).
        const refilled = Math.floor(((performance.now() - started) / 1000) * RATE_PER_SEC);
        expect(statuses.slice(20).filter((x) => x === 401).length).to.be.at.most(refilled);
        // While the address is over its allowance even the right key is refused: a guesser learns nothing.
        const blocked = await rawRequest(guarded.api.port, { method: 'GET', path: '/v1/usage', headers: { 'x-api-key': acc.primaryKey } });
        expect(blocked.status).to.equal(429);
        const retryAfter = Number(blocked.headers['retry-after']);
        expect(retryAfter).to.be.within(1, 1 / RATE_PER_SEC);
        // After the advertised wait a token has refilled and the right key is served.
        await new Promise((res) => setTimeout(res, retryAfter * 1000));
        const after = await rawRequest(guarded.api.port, { method: 'GET', path: '/v1/usage', headers: { 'x-api-key': acc.primaryKey } });
        expect(after.status).to.equal(200);
      } finally {
        await guarded.stop();
      }
    });

    it('answers 1000 guessed keys with plain 401s when the allowance is high, leaving no per-guess state, and keeps serving the real key', async () => {
      const r = prng(99);
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const guess = () => `lc_${Array.from({ length: 43 }, () => alphabet[Math.floor(r() * 64)]).join('')}`;
      const redis = live.api.deps.redis;
      const keysBefore = (await keysUnder(redis, live.prefix)).length;
      const statuses: number[] = [];
      const times: number[] = [];
      for (let batch = 0; batch < 100; batch++) {
        const res = await Promise.all(Array.from({ length: 10 }, () => usage(guess())));
        for (const x of res) {
          statuses.push(x.status);
          times.push(x.ms);
          expect(x.json.error.code).to.equal('invalid_api_key');
          expect(x.json.metadata.customer_id).to.equal(null);
        }
      }
      expect(new Set(statuses)).to.deep.equal(new Set([401]));
      // One bucket per address and at most PREFIX_BUCKETS shared prefix buckets, none per guess: guessing cannot exhaust memory.
      expect((await keysUnder(redis, live.prefix)).length).to.be.at.most(keysBefore + 1 + PREFIX_BUCKETS);
      expect((await usage(account.primaryKey)).status).to.equal(200);
      console.log(`      1000 guesses: p50 ${median(times).toFixed(1)} ms; 2^256 key space (32 random bytes)`);
    });

    it('takes as long to refuse a key sharing 40 leading characters with a real one as a key sharing none', async () => {
      const real = account.primaryKey;
      const other = (c: string) => (c === 'A' ? 'B' : 'A');
      const near = real.slice(0, 40) + [...real.slice(40)].map(other).join('');
      const far = 'lc_' + [...real.slice(3)].map(other).join('');
      expect(near.length).to.equal(real.length);
      for (let i = 0; i < 20; i++) await Promise.all([usage(near), usage(far)]);
      const tNear: number[] = [];
      const tFar: number[] = [];
      const paired: number[] = [];
      for (let i = 0; i < 200; i++) {
        // Back-to-back pairs, the order alternating, so drift (GC, other tests on the machine) hits both alike.
        const a = await usage(i % 2 ? near : far);
        const b = await usage(i % 2 ? far : near);
        expect([a.status, b.status]).to.deep.equal([401, 401]);
        const [n, f] = i % 2 ? [a.ms, b.ms] : [b.ms, a.ms];
        tNear.push(n);
        tFar.push(f);
        paired.push(n - f);
      }
      const mNear = median(tNear);
      const mFar = median(tFar);
      const mDiff = median(paired);
      console.log(`      median 401: 40 shared chars ${mNear.toFixed(2)} ms, 0 shared ${mFar.toFixed(2)} ms, paired difference ${mDiff.toFixed(2)} ms`);
      // The median of the paired differences: a drift of the machine's load between pairs cancels out.
      expect(Math.abs(mDiff)).to.be.lessThan(Math.max(2, 0.3 * Math.min(mNear, mFar)));
    });
  });

  describe('security headers', () => {
    it("sends helmet's headers on both APIs, on successes and errors alike, and no X-Powered-By", async () => {
      const face = await portrait();
      const responses = [
        await rawRequest(live.api.port, { method: 'GET', path: '/v1/health' }),
        await rawRequest(live.api.port, { method: 'GET', path: '/v1/usage', headers: { 'x-api-key': 'lc_nope' } }),
        await rawRequest(live.api.port, {
          path: '/v1/check/liveness',
          headers: { 'content-type': 'application/json', 'x-api-key': account.primaryKey },
          body: JSON.stringify({ image: face.toString('base64'), image_format: 'jpeg' }),
        }),
        await rawRequest(emo.api.port, { path: '/feelings/v3/analysis', headers: { 'content-type': 'audio/wav' }, body: 'x' }),
        await rawRequest(emo.api.port, { method: 'GET', path: '/nowhere' }),
      ];
      for (const res of responses) {
        expect(res.headers['content-security-policy']).to.be.a('string');
        expect(res.headers['x-content-type-options']).to.equal('nosniff');
        expect(res.headers['strict-transport-security']).to.match(/max-age=\d+/);
        expect(res.headers['x-frame-options']).to.equal('SAMEORIGIN');
        expect(res.headers['referrer-policy']).to.equal('no-referrer');
        expect(res.headers['cross-origin-opener-policy']).to.equal('same-origin');
        expect(res.headers).to.not.have.property('x-powered-by');
      }
      expect(responses[2]!.status).to.equal(200);
    });
  });
});
