// Issue 41, "console reads and writes without bounds": the Emotion page read every token ever created and 14
// month documents for each (7 -> 153 ms with 30 tokens); every settings toggle wrote an audit entry, with no
// limit (200 in 2.7 s).
import { expect } from 'chai';
import { EmotionTokenService } from '../../../shared/accounts/emotion-tokens';
import { counterId } from '../../../shared/billing/usage-counters';
import { monthOf } from '../../../shared/billing/month';
import { fullySignedIn, startConsole, textOf, type ConsoleHarness } from './harness';

describe('Bounded console work (issue 41)', function () {
  this.timeout(180_000);
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole('bounded');
  });
  after(async () => h?.stop());

  /** Database commands per collection while `run` runs, as the API's driver sends them. */
  async function readsDuring(run: () => Promise<unknown>): Promise<Record<string, number>> {
    const conn = h.api.deps.models.Account.db;
    const counted: Record<string, number> = {};
    conn.set('debug', (collection: string, method: string) => {
      if (/^(find|findOne|countDocuments|aggregate|distinct)$/.test(method)) counted[collection] = (counted[collection] ?? 0) + 1;
    });
    try {
      await run();
    } finally {
      conn.set('debug', false);
    }
    return counted;
  }

  it('GET /console/emotion reads the active tokens and the 10 most recently revoked in one query, and one usage read per listed token', async () => {
    const user = await fullySignedIn(h, 'starter');
    const tokens = new EmotionTokenService(h.api.deps.models);
    const created: Array<{ id: string }> = [];
    for (let i = 0; i < 30; i++) created.push(await tokens.create(`tok-${String(i).padStart(2, '0')}`, user.customerId));
    // tok-00 … tok-26 revoked in that order; tok-27 … tok-29 active.
    for (const t of created.slice(0, 27)) await tokens.revoke(t.id, user.customerId);
    const month = monthOf(new Date());
    const counters = h.api.deps.models.UsageCounter;
    const newest = created[29]!.id;
    await counters.create({
      _id: counterId('emotion', newest, month),
      service: 'emotion',
      owner: newest,
      month,
      calls: 7,
      audioSeconds: 90,
      last: { token: new Date() },
    });
    // A token last used months ago: its last call still shows.
    const quiet = created[28]!.id;
    const earlier = new Date('2026-03-14T09:30:00.000Z');
    await counters.create({
      _id: counterId('emotion', quiet, '2026-03'),
      service: 'emotion',
      owner: quiet,
      month: '2026-03',
      calls: 2,
      audioSeconds: 10,
      last: { token: earlier },
    });

    let page = { html: '', status: 0 };
    const reads = await readsDuring(async () => (page = await user.client.open('/console/emotion')));
    expect(page.status).to.equal(200);
    const rows = page.html.match(/<tr data-token-id=/g) ?? [];
    expect(rows, '3 active and the 10 most recently revoked').to.have.length(13);
    expect(page.html).to.contain('tok-26').and.contain('tok-17').and.not.contain('tok-16<').and.not.contain('tok-00<');
    expect(textOf(page.html, 'emotion-calls')).to.equal('7');
    expect(page.html, "tok-28's last call").to.contain('14 Mar 2026, 09:30 UTC');
    expect(reads.emotion_tokens, 'the token list: one query').to.equal(1);
    expect(reads.usage_counters ?? 0, 'at most one read per listed token').to.be.at.most(13);
  });

  it('a settings toggle that changes nothing writes no audit entry, and toggles past 20 in 15 minutes are refused (429)', async () => {
    const user = await fullySignedIn(h, 'starter');
    const audit = (action: string) => h.api.deps.models.Audit.countDocuments({ customerId: user.customerId, action });
    let page = await user.client.open('/console/security');
    for (let i = 0; i < 3; i++) page = await user.client.submit(page, '/console/security/alerts', { on: 'on' });
    expect(page.status).to.equal(200);
    expect(await audit('usage_alerts.on'), 'switched on once, then unchanged twice').to.equal(1);
    page = await user.client.open('/console/plan');
    for (let i = 0; i < 2; i++) page = await user.client.submit(page, '/console/hard-cap', { on: 'on' });
    expect(await audit('hard_cap.on')).to.equal(1);

    // Five settings POSTs so far; fifteen more are answered, the next one is refused and changes nothing.
    page = await user.client.open('/console/security');
    for (let i = 0; i < 15; i++) {
      page = await user.client.submit(page, '/console/security/alerts', { on: i % 2 === 0 ? 'off' : 'on' });
      expect(page.status, `toggle ${6 + i}`).to.equal(200);
    }
    const refused = await user.client.submit(page, '/console/security/alerts', { on: 'on' }, false);
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 15 * 60);
    expect((await h.api.deps.accounts.get(user.customerId))?.usageAlerts, 'the last answered toggle (off) stands').to.equal(false);
    expect((await audit('usage_alerts.on')) + (await audit('usage_alerts.off')), 'one entry per change: 1 + 15').to.equal(16);
  });
});
