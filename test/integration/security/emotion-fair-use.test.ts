// The emotion API's fair use, where one customer could starve the others: it is counted in seconds of audio (the
// work an analysis costs), every token of an account spends from one bucket (the shipped rate; the ceiling lowered,
// see before()), so minting tokens buys no allowance; an account of its own and an operator's token without an account keep theirs;
// a token flooding long files within its allowance does not take the service from another account; and the
// dashboard refuses a token past the cap of live tokens per account, with its usual error, until one is revoked.
import { expect } from 'chai';
import crypto from 'node:crypto';
import { startEmotionApi, type RunningEmotionApi } from '../../../api/emotion/server';
import { startEmotionWorker } from '../../../workers/emotion/worker';
import type { RunningWorker } from '../../../workers/runtime/worker-process';
import { EmotionTokenService, MAX_LIVE_TOKENS_PER_ACCOUNT } from '../../../shared/accounts/emotion-tokens';
import { parseConfig } from '../../../shared/config';
import { fullySignedIn, startConsole, textOf, type ConsoleHarness } from '../console/harness';
import { quietLog } from '../../support/config';
import { sendAll } from '../../support/buckets';
import { speech } from '../../support/emotion-stack';
import { checkedFetch, registerContractPort, unregisterContractPort } from '../../support/openapi';
import { throttleKey } from '../../../api/http/throttle';

const SHIPPED = parseConfig({});

describe('Security: emotion API fair use is per account, and tokens per account are capped', function () {
  this.timeout(300_000);
  let h: ConsoleHarness;
  let emotion: RunningEmotionApi;
  let worker: RunningWorker;
  let tokens: EmotionTokenService;
  /** A minute of speech (16 kHz WAV, made with espeak-ng and ffmpeg): ten calls of it spend the lowered burst (600 s). */
  let oneMinute: Buffer;
  /** Three minutes: a few calls of it spend the burst (on a loaded machine one may run out of time; it is charged too). */
  let threeMinutes: Buffer;
  let short: Buffer;

  before(async () => {
    // The shipped ceiling (10 h of audio) is far above a batch and takes minutes of work to reach: lowered to 10 min here.
    h = await startConsole('emotion-fair-use', { EMOTION_FAIR_USE_BURST_SECONDS: '600' });
    emotion = await startEmotionApi({ config: h.config, log: quietLog, dbName: h.dbName });
    worker = await startEmotionWorker({ config: h.config, log: quietLog, dbName: h.dbName });
    registerContractPort(emotion.port, 'emotion');
    tokens = new EmotionTokenService(h.api.deps.models);
    // What customers get but the ceiling: test/support/config.ts leaves the rest of fair use and the worker count shipped.
    expect(h.config.EMOTION_FAIR_USE_BURST_SECONDS).to.equal(600);
    expect(h.config.EMOTION_FAIR_USE_SECONDS_PER_SEC).to.equal(SHIPPED.EMOTION_FAIR_USE_SECONDS_PER_SEC);
    expect(h.config.EMOTION_FAIR_USE_UPFRONT_SECONDS).to.equal(SHIPPED.EMOTION_FAIR_USE_UPFRONT_SECONDS);
    oneMinute = speech(60);
    threeMinutes = speech(180);
    short = speech(3);
  });
  after(async () => {
    if (emotion) unregisterContractPort(emotion.port);
    await worker?.stop();
    await emotion?.stop();
    await h?.stop();
  });

  /**
   * A call with `body` (audio/mpeg or WAV), or without: then one that passed authentication and the throttle answers
   * 400 (not audio, no worker needed; it spends the upfront second), a throttled one 429.
   */
  const analyse = (token: string, body?: Buffer) =>
    checkedFetch(emotion.port, '/feelings/v3/analysis', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': body ? (body[0] === 0x52 ? 'audio/wav' : 'audio/mpeg') : 'text/plain' },
      body: body ?? 'not audio',
    }).then(async (r) => ({
      status: r.status,
      code: ((await r.json()) as { error?: { code?: string } }).error?.code,
      retryAfter: Number(r.headers.get('retry-after')),
    }));

  async function accountWithTokens(n: number): Promise<string[]> {
    const account = await h.api.deps.accounts.create({ email: `fair-use-${crypto.randomUUID()}@example.com`, plan: 'starter' });
    const issued: string[] = [];
    for (let i = 0; i < n; i++) issued.push((await tokens.create(`token ${i}`, account._id)).token);
    return issued;
  }

  /**
   * Three-minute files until the account gets 429: within six calls (18 minutes of audio against a 10-minute burst),
   * where requests counted alone would have allowed sixty. Each is analysed (200) or, on a loaded machine, runs
   * out of time (503, charged at its worker time).
   */
  async function spendAllowance(token: string): Promise<void> {
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await analyse(token, threeMinutes);
      seen.push(`${r.status} ${r.code ?? ''}`);
      if (r.status === 429) return;
      expect([200, 503], seen.join(', ')).to.include(r.status);
    }
    expect.fail(`no 429 after 18 minutes of audio: ${seen.join(', ')}`);
  }

  it('charges the decoded duration of an analysed call: three seconds of audio leave the bucket three seconds lower', async () => {
    const account = await h.api.deps.accounts.create({ email: `fair-use-${crypto.randomUUID()}@example.com`, plan: 'starter' });
    const { token } = await tokens.create('token', account._id);
    expect((await analyse(token, short)).status).to.equal(200);
    // The rest is charged after the answer (not awaited by it): give it a moment to land.
    await new Promise((r) => setTimeout(r, 100));
    const level = Number(await h.api.deps.redis.hget(throttleKey(h.config.QUEUE_PREFIX, `emotion-audio:${account._id}`), 't'));
    // 600 − 1 up front (refilled to the cap while it ran) − the rest of its 3 s after it.
    expect(level).to.be.within(h.config.EMOTION_FAIR_USE_BURST_SECONDS - 4, h.config.EMOTION_FAIR_USE_BURST_SECONDS - 2);
  });

  it('counts seconds of audio: two tokens of one account share one bucket, and once the first has spent it on long audio the second gets 429 rate_limited', async () => {
    const [first, second] = await accountWithTokens(2);
    await spendAllowance(first!);
    const refused = await analyse(second!, short);
    expect(refused.status, 'the second token finds the bucket the first one emptied').to.equal(429);
    expect(refused.code).to.equal('rate_limited');
    expect(refused.retryAfter).to.be.at.least(60);
  });

  it('takes one second up front from each call, refused ones too: the burst in seconds is the most calls let through at once', async () => {
    const [token] = await accountWithTokens(1);
    const calls = h.config.EMOTION_FAIR_USE_BURST_SECONDS / h.config.EMOTION_FAIR_USE_UPFRONT_SECONDS;
    // Twice what the bucket holds, sixteen at a time: not audio, so each costs only its upfront second.
    const answers = await sendAll(2 * calls, 16, () => analyse(token!));
    expect(answers.every((r) => r.status === 400 || r.status === 429)).to.equal(true);
    expect(answers.filter((r) => r.status === 429)).to.not.be.empty;
  });

  it('meanwhile another account, and each operator token without an account, keep their own allowance', async () => {
    const [greedy] = await accountWithTokens(1);
    const [other] = await accountWithTokens(1);
    const operatorA = (await tokens.create('operator a')).token;
    const operatorB = (await tokens.create('operator b')).token;

    await spendAllowance(greedy!);
    expect((await analyse(greedy!, short)).status).to.equal(429);
    expect((await analyse(other!, short)).status, 'another account').to.equal(200);

    await spendAllowance(operatorA);
    expect((await analyse(operatorA, short)).status).to.equal(429);
    expect((await analyse(operatorB, short)).status, 'tokens without an account do not share one bucket').to.equal(200);
  });

  it("answers another account's calls within the budget (≥ 95 % × 200) while a token floods one-minute files within its allowance", async () => {
    const [flooder] = await accountWithTokens(1);
    const [polite] = await accountWithTokens(1);
    // One call first, so the API has measured the polite account's cost.
    const first = await analyse(polite!, short);
    expect(first.status, first.code).to.equal(200);
    let flooding = true;
    const flood: Array<{ status: number; code?: string }> = [];
    const floodLoops = Array.from({ length: 4 }, async () => {
      while (flooding) flood.push(await analyse(flooder!, oneMinute));
    });
    await new Promise((r) => setTimeout(r, 500));
    // One call at a time, as one customer's client would send them.
    const calls = await sendAll(20, 1, () => analyse(polite!, short));
    flooding = false;
    await Promise.all(floodLoops);
    const tally = (xs: Array<{ status: number; code?: string }>) =>
      xs.reduce<Record<string, number>>((t, r) => ({ ...t, [`${r.status} ${r.code ?? ''}`.trim()]: (t[`${r.status} ${r.code ?? ''}`.trim()] ?? 0) + 1 }), {});
    const summary = JSON.stringify({ polite: tally(calls), flooder: tally(flood) });
    console.log(`      flood of one-minute files: ${summary}`);
    expect(calls.filter((r) => r.status === 200).length, summary).to.be.at.least(19);
    expect(flood.filter((r) => r.status === 200).length, 'the flood was served until its allowance ran out').to.be.at.least(1);
    expect(
      flood.some((r) => r.status === 429),
      'then throttled',
    ).to.equal(true);
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
