// Refuse before reading (issue 27): on POST /v1/check/liveness authentication, the quota, the key's throttle and its
// share of body bytes in flight are decided before the body is read; a refused upload is answered at once and its
// connection closed, so the API never holds it. Raw sockets send only the start of each declared body: an answer
// can only come if the server decided without the rest.
import nodeHttp from 'node:http';
import { expect } from 'chai';
import { portrait } from '../../../dev/harness/sample-images';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { http } from '../../support/http';
import { DECLARED_BYTES, partialUpload as partial } from '../../support/partial-upload';

/** Declares a 10 MB liveness body, sends its first 256 KB (the JSON head, then Base64) and waits for the answer. */
const partialUpload = (port: number, key: string) =>
  partial(port, '/v1/check/liveness', { 'X-API-Key': key, 'Content-Type': 'application/json' }, Buffer.from('{"image_format":"jpeg","image":"'));

/** The process's memory while `work` runs: the highest RSS and external (Buffer) bytes seen, above where they started. */
async function memoryGrowthDuring<T>(work: () => Promise<T>): Promise<{ result: T; rssMiB: number; buffersMiB: number }> {
  const start = process.memoryUsage();
  let peak = start;
  const sample = setInterval(() => {
    const now = process.memoryUsage();
    peak = { ...now, rss: Math.max(peak.rss, now.rss), arrayBuffers: Math.max(peak.arrayBuffers, now.arrayBuffers) };
  }, 5);
  try {
    const result = await work();
    return { result, rssMiB: (peak.rss - start.rss) / 2 ** 20, buffersMiB: (peak.arrayBuffers - start.arrayBuffers) / 2 ** 20 };
  } finally {
    clearInterval(sample);
  }
}

describe('POST /v1/check/liveness: refused before reading the body', function () {
  this.timeout(120_000);
  let stack: LivenessStack;

  before(async () => {
    // A throttled key must stay throttled for the whole test: the shipped refill (20/s) would let a call through mid-test.
    stack = await startLivenessStack('uploads', { env: { THROTTLE_RATE_PER_SEC: '0.001' } });
  });
  after(() => stack.stop());

  it('answers 20 concurrent 10 MB uploads from a throttled key with 429 at once and closes each connection unread, holding no body in memory', async () => {
    const acc = await stack.createAccount('starter');
    // The shipped burst (60) spent on cheap calls: the key is now throttled.
    const { THROTTLE_BURST } = stack.api.deps.config;
    for (let i = 0; i < THROTTLE_BURST; i++) expect((await stack.usage(acc.primaryKey)).status).to.equal(200);
    expect((await stack.usage(acc.primaryKey)).status).to.equal(429);

    const uploads = Array.from({ length: 20 }, () => partialUpload(stack.api.port, acc.primaryKey));
    const { result: answers, rssMiB, buffersMiB } = await memoryGrowthDuring(() => Promise.all(uploads.map((u) => u.answered)));
    for (const a of answers) {
      expect(a.status).to.equal(429);
      expect(a.connectionClose, 'the answer says the connection closes').to.equal(true);
      expect(a.sentBytes, 'answered and closed with most of the body never sent').to.be.below(DECLARED_BYTES / 10);
    }
    // Reading them would have held 20 x 10 MB (200 MB and more); refused unread, no body is ever held. The bound
    // stated in README (Memory model) is UPLOAD_BYTES_TOTAL (48 MiB) for bodies the API accepts; these hold none.
    console.log(`      20 refused 10 MB uploads: RSS +${rssMiB.toFixed(1)} MiB, Buffers +${buffersMiB.toFixed(1)} MiB at peak`);
    expect(buffersMiB, 'Buffer memory grew by less than one body').to.be.below(10);
    expect(rssMiB, 'RSS grew by less than two bodies').to.be.below(20);
    // The usage counters show nothing was reserved or charged (read directly: fair use is the account's, so its
    // other key is throttled too).
    const account = (await stack.api.deps.accounts.current(acc.customerId))!;
    expect((await stack.api.deps.ledger.snapshot(acc.customerId, stack.api.deps.accounts.planView(account))).used).to.equal(0);
  });

  it("refuses with 429 an upload its account's share of body bytes in flight cannot hold, unread, while that account's other uploads go on", async () => {
    const acc = await stack.createAccount('starter');
    const { UPLOAD_BYTES_PER_CALLER } = stack.api.deps.config;
    const fit = Math.floor(UPLOAD_BYTES_PER_CALLER / DECLARED_BYTES);
    // These are admitted and wait for the rest of their bodies (which never comes; they are closed below).
    const held = Array.from({ length: fit }, () => partialUpload(stack.api.port, acc.primaryKey));
    const settledHeld = held.map((u) =>
      u.answered.then(
        () => 'answered',
        () => 'closed',
      ),
    );
    // Once the held uploads are being read, a further one is over the key's share. A probe sent before they were
    // admitted would be admitted itself and wait for its body: it is dropped and sent again.
    let refused: { status: number; connectionClose: boolean } | null = null;
    for (let i = 0; i < 20 && !refused; i++) {
      const probe = partialUpload(stack.api.port, acc.primaryKey);
      refused = await Promise.race([probe.answered, new Promise<null>((r) => setTimeout(() => r(null), 1000))]);
      if (!refused) probe.socket.destroy();
    }
    expect(refused?.status).to.equal(429);
    expect(refused?.connectionClose).to.equal(true);
    // Another key is not held back by this one's share.
    const other = await stack.createAccount('starter');
    expect((await stack.check(other.primaryKey, await portrait())).status).to.equal(200);
    for (const u of held) u.socket.destroy();
    expect(await Promise.all(settledHeld)).to.have.length(fit);
    // With its uploads gone, the key's share is free again.
    expect((await stack.check(acc.primaryKey, await portrait())).status).to.equal(200);
  });

  it('holds the memory model with 20 concurrent 10 MB uploads from 20 keys: bodies wait for room instead of piling up', async () => {
    const keys = await Promise.all(Array.from({ length: 20 }, () => stack.createAccount('starter')));
    // 10,485,760 Base64 characters of zero bytes: the largest body the route takes (the worker finds no image in it).
    const head = Buffer.from('{"image_format":"jpeg","image":"');
    const tail = Buffer.from('"}');
    const chunk = Buffer.alloc(256 * 1024, 'A');
    const imageChars = 10 * 1024 * 1024;
    const upload = (key: string) =>
      new Promise<number>((resolve, reject) => {
        const req = nodeHttp.request(
          {
            host: '127.0.0.1',
            port: stack.api.port,
            method: 'POST',
            path: '/v1/check/liveness',
            agent: false,
            headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': String(head.length + imageChars + tail.length) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        // The same 256 KB chunk again and again, written as the server reads: the client holds no 10 MB body.
        let sent = 0;
        const more = () => {
          req.write(head);
          while (sent < imageChars) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', () => more2());
          }
          req.end(tail);
        };
        const more2 = () => {
          while (sent < imageChars) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', more2);
          }
          req.end(tail);
        };
        more();
      });
    const { result: statuses, rssMiB, buffersMiB } = await memoryGrowthDuring(() => Promise.all(keys.map((k) => upload(k.primaryKey))));
    console.log(`      20 concurrent 10 MB uploads: ${JSON.stringify(statuses)}; RSS +${rssMiB.toFixed(0)} MiB, Buffers +${buffersMiB.toFixed(0)} MiB at peak`);
    // Each is read once room is free (400: no image in the zeros), or waited past its budget for room (503, uncharged).
    for (const s of statuses) expect([400, 503]).to.include(s);
    // At most UPLOAD_BYTES_TOTAL (48 MiB) of bodies are read at once; the rest wait. This process also holds the
    // worker and its copies of the payloads, and V8 collects the parse garbage lazily, so it grows well past 48 MiB
    // (README "Memory model": +173 to +255 MiB measured); reading all 20 at once grew the API alone by 602 MB (issue 27).
    expect(rssMiB, 'RSS growth of the API, the in-process worker and the client together').to.be.below(400);
  });

  it('reads a body without Content-Length (chunked), counting it as it streams, and answers it like any other', async () => {
    const acc = await stack.createAccount('starter');
    const body = JSON.stringify({ image: (await portrait()).toString('base64'), image_format: 'jpeg' });
    const status = await new Promise<number>((resolve, reject) => {
      const req = nodeHttp.request(
        {
          host: '127.0.0.1',
          port: stack.api.port,
          method: 'POST',
          path: '/v1/check/liveness',
          headers: { 'x-api-key': acc.primaryKey, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      // Several writes and no length: Node sends it chunked.
      for (let i = 0; i < body.length; i += 16 * 1024) req.write(body.slice(i, i + 16 * 1024));
      req.end();
    });
    expect(status).to.equal(200);
  });

  describe('raw image bytes (Content-Type: image/jpeg or image/png, additive)', () => {
    const raw = (key: string, type: string, bytes: Buffer) =>
      http(stack.api.port, '/v1/check/liveness', { method: 'POST', headers: { 'x-api-key': key, 'content-type': type }, body: bytes });

    it('answers 200 for the raw JPEG and PNG bytes of a face, billing each once', async () => {
      const acc = await stack.createAccount('starter');
      const jpeg = await raw(acc.primaryKey, 'image/jpeg', await portrait());
      const png = await raw(acc.primaryKey, 'image/png', await portrait('png'));
      expect([jpeg.status, png.status]).to.deep.equal([200, 200]);
      expect(jpeg.body.data.isValidFace).to.equal(true);
      expect(png.body.metadata.remaining_calls).to.equal(998);
    });

    it('answers 400 invalid_image when the bytes are not the type the Content-Type names, uncharged', async () => {
      const acc = await stack.createAccount('starter');
      const res = await raw(acc.primaryKey, 'image/png', await portrait());
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_image');
      expect((await stack.usage(acc.primaryKey)).body.data.total_calls).to.equal(0);
    });
  });
});
