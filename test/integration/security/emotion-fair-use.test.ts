// The emotion API's fair use, where one customer could starve the others: every token of an account spends from
// one bucket (the shipped burst and rate), so minting tokens buys no allowance; an account of its own and an
// operator's token without an account keep theirs; and the dashboard refuses a token past the cap of live
// tokens per account, with its usual error, until one is revoked.
import { expect } from 'chai';
import crypto from 'node:crypto';
import { startEmotionApi, type RunningEmotionApi } from '../../../api/emotion/server';
import { EmotionTokenService, MAX_LIVE_TOKENS_PER_ACCOUNT } from '../../../shared/accounts/emotion-tokens';
import { parseConfig } from '../../../shared/config';
import { fullySignedIn, startConsole, textOf, type ConsoleHarness } from '../console/harness';
import { quietLog } from '../../support/config';
import { admittedWithin, sendAll } from '../../support/buckets';

const SHIPPED = parseConfig({});

describe('Security: emotion API fair use is per account, and tokens per account are capped', function () {
  this.timeout(180_000);
  let h: ConsoleHarness;
  let emotion: RunningEmotionApi;
  let tokens: EmotionTokenService;

  before(async () => {
    h = await startConsole('emotion-fair-use');
    emotion = await startEmotionApi({ config: h.config, log: quietLog, dbName: h.dbName });
    tokens = new EmotionTokenService(h.api.deps.models);
    // What customers get: test/support/config.ts leaves the fair-use throttle at its shipped values.
    expect(h.config.THROTTLE_BURST).to.equal(SHIPPED.THROTTLE_BURST);
    expect(h.config.THROTTLE_RATE_PER_SEC).to.equal(SHIPPED.THROTTLE_RATE_PER_SEC);
  });
  after(async () => {
    await emotion?.stop();
    await h?.stop();
  });

  /** A call that passed authentication and the throttle answers 400 (not audio, no worker needed); a throttled one 429. */
  const analyse = (token: string) =>
    fetch(`http://127.0.0.1:${emotion.port}/feelings/v3/analysis`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: 'not audio',
    }).then(async (r) => ({
      status: r.status,
      code: ((await r.json()) as { error?: { code?: string } }).error?.code,
      retryAfter: Number(r.headers.get('retry-after')),
    }));

  async function accountWithTokens(n: number): Promise<string[]> {
    const { account } = await h.api.deps.accounts.create({ email: `fair-use-${crypto.randomUUID()}@example.com`, plan: 'starter' });
    const issued: string[] = [];
    for (let i = 0; i < n; i++) issued.push((await tokens.create(`token ${i}`, account._id)).token);
    return issued;
  }

  it('two tokens of one account share one bucket: once the first has used the burst, the second gets 429 rate_limited', async () => {
    const [first, second] = await accountWithTokens(2);
    const burst = SHIPPED.THROTTLE_BURST;
    const started = performance.now();
    const byFirst = await sendAll(burst, 16, () => analyse(first!));
    const bySecond = await sendAll(burst, 16, () => analyse(second!));
    const elapsed = performance.now() - started;

    expect(
      byFirst.map((r) => r.status),
      'the first token alone stays within the burst',
    ).to.not.include(429);
    const refused = bySecond.filter((r) => r.status === 429);
    expect(refused, 'the second token finds the bucket the first one emptied').to.not.be.empty;
    for (const r of refused) {
      expect(r.code).to.equal('rate_limited');
      expect(r.retryAfter).to.be.at.least(60);
    }
    const admitted = [...byFirst, ...bySecond].filter((r) => r.status === 400).length;
    expect(admitted, 'one burst (plus its refill) between the two tokens').to.be.at.most(admittedWithin(burst, SHIPPED.THROTTLE_RATE_PER_SEC, elapsed));
    expect(
      [...byFirst, ...bySecond].every((r) => r.status === 400 || r.status === 429),
      'only admitted (400: not audio) or throttled',
    ).to.equal(true);
  });

  it('meanwhile another account, and each operator token without an account, keep their own allowance', async () => {
    const [greedy] = await accountWithTokens(1);
    const [other] = await accountWithTokens(1);
    const operatorA = (await tokens.create('operator a')).token;
    const operatorB = (await tokens.create('operator b')).token;

    expect((await sendAll(2 * SHIPPED.THROTTLE_BURST, 16, () => analyse(greedy!))).map((r) => r.status)).to.include(429);
    expect((await analyse(other!)).status, 'another account').to.equal(400);

    expect((await sendAll(2 * SHIPPED.THROTTLE_BURST, 16, () => analyse(operatorA))).map((r) => r.status)).to.include(429);
    expect((await analyse(operatorB)).status, 'tokens without an account do not share one bucket').to.equal(400);
  });

  it(`the dashboard refuses an active token past ${MAX_LIVE_TOKENS_PER_ACCOUNT} per account with its usual error, and takes one again after a revocation`, async () => {
    const user = await fullySignedIn(h);
    const create = async (name: string) => user.client.submit(await user.client.open('/console/emotion'), '/console/emotion/tokens', { name });

    for (let i = 1; i <= MAX_LIVE_TOKENS_PER_ACCOUNT; i++) {
      const shown = await create(`token ${i}`);
      expect(shown.url, `token ${i} is created and shown once`).to.match(/\/console\/emotion\/tokens\/new$/);
    }
    const refused = await create('one too many');
    expect(refused.status).to.equal(400);
    expect(textOf(refused.html, 'token-name-error')).to.contain(`at most ${MAX_LIVE_TOKENS_PER_ACCOUNT} active tokens`);
    const live = async () => (await tokens.list(user.customerId)).filter((t) => !t.revokedAt).length;
    expect(await live(), 'nothing was created').to.equal(MAX_LIVE_TOKENS_PER_ACCOUNT);

    const list = await user.client.open('/console/emotion');
    const link = /href="(\/console\/emotion\/tokens\/[^"]+\/revoke)"/.exec(list.html)![1]!;
    await user.client.submit(await user.client.open(link), link, {});
    expect(await live()).to.equal(MAX_LIVE_TOKENS_PER_ACCOUNT - 1);

    const again = await create('one too many');
    expect(again.url, 'a revoked token frees its place').to.match(/\/console\/emotion\/tokens\/new$/);
    expect(await live()).to.equal(MAX_LIVE_TOKENS_PER_ACCOUNT);
  });
});
