// The session routes behind the "Try it" pages, over HTTP: signed in and CSRF-checked, answering JSON in the
// API's error shape, free (no credit used), capped per account per month well inside the plan, and running the real workers.
import { expect } from 'chai';
import { tryItMonthlyCap } from '../../../api/console/services/try-it-allowance';
import { PLANS } from '../../../shared/billing/plans';
import { jsonOf, speech } from '../../support/emotion-stack';
import { selfieJpeg } from '../../fixtures/liveness/images';
import { outboxDrained } from '../../support/billing';
import { startTryItStack, type TryItStack } from './stack';

/** The stack's account is on Starter (1,000 calls a month): 100 tries a month per service. */
const STARTER_CAP = tryItMonthlyCap(PLANS.starter.monthlyCalls);

describe('Console "Try it" routes (POST /console/emotion/try/analyze, /console/liveness/try/check)', () => {
  let s: TryItStack;
  let base: string;

  before(async () => {
    // 20 s instead of the shipped 5 s emotion budget: two shared cores, and this file tests the route, not speed.
    s = await startTryItStack('try-routes', { EMOTION_BUDGET_MS: '20000', LIVENESS_BUDGET_MS: '20000' });
    base = s.h.base;
  });
  after(() => s?.stop());

  function post(path: string, body: Buffer, type: string, o: { csrf?: string | null; cookie?: boolean } = {}): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': type, origin: base };
    if (o.cookie !== false) headers.cookie = `${s.cookie.name}=${s.cookie.value}`;
    const csrf = o.csrf === undefined ? s.csrf : o.csrf;
    if (csrf) headers['x-csrf-token'] = csrf;
    return fetch(`${base}${path}`, { method: 'POST', headers, body });
  }

  it('serves both pages to a signed-in account, with their scripts as assets (no inline script)', async () => {
    for (const path of ['/console/emotion/try', '/console/liveness/try']) {
      const res = await fetch(`${base}${path}`, { headers: { cookie: `${s.cookie.name}=${s.cookie.value}` } });
      expect(res.status, path).to.equal(200);
      const html = await res.text();
      expect(html).to.match(/<script src="\/console\/assets\/try-(emotion|liveness)-[0-9a-f]{10}\.js" defer><\/script>/);
      expect(html).to.not.match(/<script>(?!<)/);
      const script = /src="(\/console\/assets\/try-[a-z]+-[0-9a-f]{10}\.js)"/.exec(html)![1]!;
      expect((await fetch(`${base}${script}`)).status).to.equal(200);
    }
  });

  it('sends a visitor without a session to sign in, and refuses a POST without one (no session, so no CSRF token either)', async () => {
    const page = await fetch(`${base}/console/emotion/try`, { redirect: 'manual' });
    expect(page.status).to.equal(303);
    expect(page.headers.get('location')).to.equal('/console/sign-in');
    const res = await post('/console/liveness/try/check', await selfieJpeg(), 'image/jpeg', { cookie: false, csrf: null });
    // The console's CSRF check runs before the session check, and without a session no token can match.
    expect(res.status).to.equal(403);
    expect(await res.text()).to.contain('csrf_failed');
  });

  it('refuses a POST without the session CSRF token (403 csrf_failed)', async () => {
    const res = await post('/console/liveness/try/check', await selfieJpeg(), 'image/jpeg', { csrf: 'x'.repeat(43) });
    expect(res.status).to.equal(403);
    expect(await res.text()).to.contain('csrf_failed');
  });

  it('checks a selfie with the liveness worker: verdict, likelihood, threshold and a face box; no credit is used', async () => {
    const res = await post('/console/liveness/try/check', await selfieJpeg(), 'image/jpeg');
    const body = await jsonOf(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body).to.include.keys('isFakeFace', 'isFakeLikelihood', 'isValidFace', 'vFaceRect', 'reasons', 'threshold', 'try_it');
    expect(body.isValidFace).to.equal(true);
    expect(body.vFaceRect).to.have.length.at.least(1);
    expect(body.threshold).to.equal(s.h.config.FAKE_THRESHOLD);
    expect(body.try_it).to.deep.equal({ used: 1, cap: STARTER_CAP });
    expect(body).to.not.have.property('stages');
    const account = (await s.h.api.deps.accounts.current(s.customerId))!;
    const usage = await s.h.api.deps.ledger.snapshot(s.customerId, s.h.api.deps.accounts.planView(account));
    expect(usage.used).to.equal(0);
  });

  it('analyses a WebM/Opus recording with the emotion worker: 5 s intervals, unbilled usage event without a token', async () => {
    const { execFileSync } = await import('node:child_process');
    const webm = execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-f', 'wav', '-i', 'pipe:0', '-c:a', 'libopus', '-f', 'webm', 'pipe:1'], {
      input: speech(12),
    });
    const res = await post('/console/emotion/try/analyze', webm, 'audio/webm');
    const body = await jsonOf(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.meta.format_name).to.equal('matroska,webm');
    expect(body.results.map((r: { from: number }) => r.from)).to.deep.equal([0, 5, 10]);
    expect(body.summary.duration).to.be.closeTo(12, 0.1);
    // The event reaches the database through the usage outbox, after the answer.
    await outboxDrained(s.h.api.deps.redis, s.h.config.QUEUE_PREFIX);
    const events = await s.h.api.deps.models.UsageEvent.find({ service: 'emotion' }).lean();
    expect(events).to.have.length(1);
    expect(events[0]).to.include({ billable: false, tokenId: null });
  });

  it('answers the engine’s 400 in the API error shape for bytes that are no audio', async () => {
    const res = await post('/console/emotion/try/analyze', Buffer.from('not audio at all, just text'.repeat(100)), 'audio/wav');
    expect(res.status).to.equal(400);
    const body = await jsonOf(res);
    expect(Object.keys(body)).to.deep.equal(['error']);
    expect(body.error.code).to.equal('unsupported_format');
  });

  it(`answers 429 try_it_monthly_limit after ${STARTER_CAP} tries in a UTC month (a tenth of Starter's), with Retry-After until the 1st`, async () => {
    const month = new Date().toISOString().slice(0, 7);
    await s.h.api.deps.redis.set(`${s.h.config.QUEUE_PREFIX}:try-it:liveness:${s.customerId}:${month}`, String(STARTER_CAP));
    const res = await post('/console/liveness/try/check', await selfieJpeg(), 'image/jpeg');
    expect(res.status).to.equal(429);
    expect((await jsonOf(res)).error.code).to.equal('try_it_monthly_limit');
    const retry = Number(res.headers.get('retry-after'));
    expect(retry).to.be.within(1, 31 * 24 * 3600);
  });
});
