// One tenant, one share (issue 41): the upload room is shared per account, not per key, so one account's two keys
// cannot hold the room another account's photo needs; and the fair-use allowance pays for the work, not the call —
// declared bytes before the body is read, the front-end's parse time after, and replays of an Idempotency-Key too.
import { expect } from 'chai';
import { phonePhoto, portrait } from '../../../dev/harness/sample-images';
import { accountShare } from '../../../api/http/upload-gate';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { http } from '../../support/http';
import { DECLARED_BYTES, partialUpload } from '../../support/partial-upload';

const JSON_HEAD = Buffer.from('{"image_format":"jpeg","image":"');

/** Whether `done` holds within `ms`, polled every 20 ms. */
async function eventually(done: () => boolean, ms = 5_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until && !done()) await new Promise((r) => setTimeout(r, 20));
  return done();
}

/** Cheap calls (GET /v1/usage, one token each) the key's account can still make before 429, at most `max`. */
async function tokensLeft(stack: LivenessStack, key: string, max: number): Promise<number> {
  for (let n = 0; n < max; n++) {
    const res = await stack.usage(key);
    if (res.status === 429) return n;
    expect(res.status).to.equal(200);
  }
  return max;
}

describe('Upload room per account (issue 41)', function () {
  this.timeout(120_000);
  let stack: LivenessStack;

  before(async () => {
    // The holds below must last while the other account calls: the floor rate, which cuts them after its grace, is
    // tested in test/unit/api/upload-gate.test.ts.
    stack = await startLivenessStack('upload-per-account', { env: { UPLOAD_GRACE_MS: '600000' } });
  });
  after(() => stack.stop());

  it("one account's two keys holding slow 6 MiB bodies cannot push another account's photo past its budget", async () => {
    const holder = await stack.createAccount('starter');
    const other = await stack.createAccount('starter');
    const { UPLOAD_BYTES_PER_CALLER, UPLOAD_BYTES_TOTAL } = stack.api.deps.config;
    const declaredBytes = 6 * 1024 * 1024;
    // Four 6 MiB bodies per key, each sending 64 KB and waiting: two shares per key would be the whole room.
    const holds = [holder.primaryKey, holder.secondaryKey].flatMap((key) =>
      Array.from({ length: 4 }, () =>
        partialUpload(stack.api.port, '/v1/check/liveness', { 'X-API-Key': key, 'Content-Type': 'application/json' }, JSON_HEAD, {
          declaredBytes,
          sentBytes: 64 * 1024,
        }),
      ),
    );
    const refused: number[] = [];
    for (const h of holds) void h.answered.then((a) => refused.push(a.status)).catch(() => undefined);
    const gate = stack.api.deps.uploads;
    const share = accountShare(holder.customerId);
    const held = Math.floor(UPLOAD_BYTES_PER_CALLER / declaredBytes);
    expect(await eventually(() => refused.length === holds.length - held && gate.inFlight(share) === held * declaredBytes)).to.equal(true);
    expect(
      refused.every((s) => s === 429),
      'the rest refused for the account’s share',
    ).to.equal(true);
    expect(gate.inFlight(share)).to.be.at.most(UPLOAD_BYTES_TOTAL / 4);
    try {
      const res = await stack.check(other.primaryKey, await phonePhoto());
      expect(res.status).to.equal(200);
    } finally {
      for (const h of holds) h.socket.destroy();
    }
  });
});

describe('Fair use charges the work, not the call (issue 41)', function () {
  this.timeout(120_000);
  let stack: LivenessStack;
  const BURST = 20;

  before(async () => {
    stack = await startLivenessStack('fair-use-work', {
      // Shipped 60 / 20 per s / 5 ms: no refill mid-test and a token per parse ms, so what each call spent can be counted.
      env: { THROTTLE_BURST: String(BURST), THROTTLE_RATE_PER_SEC: '0.001', THROTTLE_PARSE_MS_PER_TOKEN: '1' },
    });
  });
  after(() => stack.stop());

  it('a 10 MB body with one bad Base64 character at its end spends its declared megabytes and its parse time', async () => {
    const acc = await stack.createAccount('starter');
    const image = 'A'.repeat(10 * 1024 * 1024 - 1) + '!';
    const res = await http(stack.api.port, '/v1/check/liveness', {
      method: 'POST',
      headers: { 'x-api-key': acc.primaryKey, 'content-type': 'application/json' },
      body: JSON.stringify({ image_format: 'jpeg', image }),
    });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('invalid_request');
    // 11 tokens for 10 MiB and its JSON (one per started MiB), at least one for the parse; one call used to cost one.
    expect(await tokensLeft(stack, acc.primaryKey, BURST)).to.be.at.most(BURST - 11 - 1);
    expect((await stack.usage(acc.secondaryKey)).status, 'the account’s other key shares the allowance').to.equal(429);
  });

  it('refuses a body of the plain shape as it streams: a bad character in its first bytes is answered 400 with the rest unread', async () => {
    const acc = await stack.createAccount('starter');
    const upload = partialUpload(
      stack.api.port,
      '/v1/check/liveness',
      { 'X-API-Key': acc.primaryKey, 'Content-Type': 'application/json' },
      Buffer.concat([JSON_HEAD, Buffer.from('QUJD-')]),
    );
    const answer = await Promise.race([upload.answered, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
    upload.socket.destroy();
    expect(answer?.status, 'answered before the rest of the body was sent').to.equal(400);
    expect(answer?.connectionClose).to.equal(true);
    expect(answer?.sentBytes).to.be.below(DECLARED_BYTES / 10);
  });

  it('takes a fair-use token for every replay of a known Idempotency-Key', async () => {
    const acc = await stack.createAccount('starter');
    const image = await portrait();
    const headers = { 'idempotency-key': 'replayed-once-too-often' };
    expect((await stack.check(acc.primaryKey, image, 'jpeg', headers)).status).to.equal(200);
    const statuses: number[] = [];
    for (let i = 0; i < BURST && !statuses.includes(429); i++) {
      const replay = await stack.check(acc.primaryKey, image, 'jpeg', headers);
      if (replay.status === 200) expect(replay.headers.get('idempotent-replayed')).to.equal('true');
      statuses.push(replay.status);
    }
    expect(statuses.at(-1), `replays: ${statuses.join(' ')}`).to.equal(429);
    expect(statuses.slice(0, -1).every((s) => s === 200)).to.equal(true);
  });
});
