// Issue 29, finding 1: a free account upgraded itself to Business from the console and switched the hard cap
// off; no metering record, no marketplace call. Plan changes now go through the marketplace: the console asks,
// a signed entitlement event applies, and every change is audited and metered (the plan-fee dimension).
import { expect } from 'chai';
import { http } from '../../support/http';
import { runCli } from '../../support/cli';
import { testMongoUri, testRedisUrl } from '../../support/engines';
import { marketplaceSecret, signEntitlement } from '../../../shared/marketplace/entitlements';
import { fullySignedIn, startConsole, subscriptionOf, type ConsoleHarness } from './harness';

/** Mid-month, so the proration is visible: the 16th of a 30-day month leaves 15 of 30 days. */
const NOW = new Date('2026-11-16T10:00:00.000Z');

describe('Plan changes through the marketplace (issue 29, finding 1)', function () {
  this.timeout(180_000);
  let h: ConsoleHarness;

  before(async () => {
    // TRUST_PROXY (unset by default): the rate-limit test speaks for several client addresses through X-Forwarded-For.
    h = await startConsole('marketplace', { TRUST_PROXY: 'loopback' }, () => NOW);
  });
  after(async () => h?.stop());

  const usageOf = async (key: string) => (await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': key } })).body.data as Record<string, unknown>;
  const feeRecords = (customerId: string) => h.api.deps.models.MeteringRecord.find({ customerId, dimension: 'plan_fee_cents' }).lean();

  describe('POST /console/plan/change', () => {
    it('finding 1: a free account cannot raise its own limit: the change stays pending, the limit stays 50, nothing is metered', async () => {
      const user = await fullySignedIn(h, 'free');
      const page = await user.client.submit(await user.client.open('/console/plan'), '/console/plan/change', { plan: 'business' });
      expect(page.status).to.equal(200);
      expect(page.html).to.contain('id="pending-change"').and.contain('Pending:').and.contain('Business');
      expect(await usageOf(user.primaryKey)).to.include({ plan: 'free', monthly_limit: 50, hard_cap_enabled: true });
      const off = await user.client.submit(page, '/console/hard-cap', { on: 'off' }, false);
      expect(off.status).to.equal(400);
      expect(await usageOf(user.primaryKey)).to.include({ hard_cap_enabled: true });
      expect(await feeRecords(user.customerId)).to.deep.equal([]);
      const audit = await h.api.deps.models.Audit.findOne({ customerId: user.customerId, action: 'plan.change_requested' }).lean();
      expect(audit?.detail).to.deep.equal({ from: 'free', to: 'business' });
    });

    it('a pending request can be withdrawn; withdrawing when none is pending answers 404', async () => {
      const user = await fullySignedIn(h);
      const page = await user.client.submit(await user.client.open('/console/plan'), '/console/plan/change', { plan: 'standard' });
      const withdrawn = await user.client.submit(page, '/console/plan/pending/withdraw', {});
      expect(withdrawn.html).to.not.contain('id="pending-change"');
      expect((await user.client.submit(withdrawn, '/console/plan/pending/withdraw', {}, false)).status).to.equal(404);
    });
  });

  describe('Cancelling and withdrawing a scheduled change: requests the marketplace confirms', () => {
    const accountOf = async (customerId: string) => (await h.api.deps.accounts.get(customerId))!;
    const auditOf = (customerId: string, action: string) => h.api.deps.models.Audit.find({ customerId, action }).lean();

    it('a console cancellation changes nothing until the signed unsubscribe.pending event, which schedules the end for the 1st', async () => {
      const user = await fullySignedIn(h, 'standard');
      const page = await user.client.submit(await user.client.open('/console/plan'), '/console/plan/cancel', {});
      expect(page.status).to.equal(200);
      expect(page.html).to.contain('id="pending-change" data-kind="cancel"').and.contain('your cancellation');
      expect(page.html, 'no second cancel button while one is pending').to.not.contain('action="/console/plan/cancel"');
      const before = await accountOf(user.customerId);
      expect(before.scheduledChange ?? null).to.equal(null);
      expect(before.pendingPlanChange).to.include({ kind: 'cancel' });
      expect((await auditOf(user.customerId, 'plan.cancellation_requested'))[0]?.detail).to.deep.equal({
        effectiveMonth: '2026-12',
        effectiveAt: '2026-12-01T00:00:00.000Z',
      });

      const answer = await h.unsubscribe(await subscriptionOf(h, user.customerId), 'unsubscribe.pending', { id: `evt_cancel_${user.customerId}` });
      expect(answer).to.deep.equal({ status: 200, body: { status: 'applied', customerId: user.customerId, subscription: 'ending', effective: '2026-12' } });
      const after = await accountOf(user.customerId);
      expect(after.scheduledChange).to.include({ cancel: true, effectiveMonth: '2026-12' });
      expect(after.pendingPlanChange ?? null).to.equal(null);
      expect(await usageOf(user.primaryKey), 'the keys work until the 1st').to.include({ plan: 'standard' });
      expect((await auditOf(user.customerId, 'plan.cancellation_scheduled'))[0]?.detail).to.deep.equal({
        effectiveMonth: '2026-12',
        effectiveAt: '2026-12-01T00:00:00.000Z',
        by: 'marketplace',
        changeId: `evt_cancel_${user.customerId}`,
      });
      const plan = await user.client.open('/console/plan');
      expect(plan.html).to.contain('id="scheduled-change"').and.contain('Your subscription ends');
    });

    it('withdrawing a scheduled downgrade is a request too: it stays scheduled until the marketplace confirms the plan in effect', async () => {
      const user = await fullySignedIn(h, 'professional');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      await h.entitle(subscriptionId, 'starter');
      const page = await user.client.submit(await user.client.open('/console/plan'), '/console/plan/scheduled/withdraw', {});
      expect(page.html).to.contain('data-kind="withdraw_scheduled"').and.contain('id="scheduled-change"');
      expect(page.html, 'no second withdraw button while one is pending').to.not.contain('action="/console/plan/scheduled/withdraw"');
      expect((await accountOf(user.customerId)).scheduledChange).to.include({ plan: 'starter', effectiveMonth: '2026-12' });
      expect(await feeRecords(user.customerId), "the downgrade's fee record stays until then").to.have.length(1);
      expect((await auditOf(user.customerId, 'plan.scheduled_change_withdrawal_requested'))[0]?.detail).to.deep.equal({
        to: 'starter',
        effectiveMonth: '2026-12',
      });

      await h.entitle(subscriptionId, 'professional', { id: `evt_keep_${user.customerId}` });
      const after = await accountOf(user.customerId);
      expect(after.scheduledChange ?? null).to.equal(null);
      expect(after.pendingPlanChange ?? null).to.equal(null);
      expect(await feeRecords(user.customerId)).to.deep.equal([]);
      expect((await auditOf(user.customerId, 'plan.scheduled_change_withdrawn'))[0]?.detail).to.deep.equal({
        to: 'starter',
        effectiveAt: NOW.toISOString(),
        by: 'marketplace',
        changeId: `evt_keep_${user.customerId}`,
      });
      expect((await user.client.open('/console/plan')).html).to.not.contain('id="scheduled-change"');
    });

    it('withdrawing a scheduled cancellation: the entitlement for the plan in effect keeps the subscription', async () => {
      const user = await fullySignedIn(h, 'starter');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      await h.unsubscribe(subscriptionId, 'unsubscribe.pending');
      await user.client.submit(await user.client.open('/console/plan'), '/console/plan/scheduled/withdraw', {});
      expect((await accountOf(user.customerId)).scheduledChange).to.include({ cancel: true });
      await h.entitle(subscriptionId, 'starter');
      expect((await accountOf(user.customerId)).scheduledChange ?? null).to.equal(null);
      expect((await auditOf(user.customerId, 'plan.scheduled_change_withdrawn'))[0]?.detail).to.include({ cancel: true, by: 'marketplace' });
    });

    it('a replayed unsubscribe event is applied once, and unsubscribe.success ends the subscription now', async () => {
      const user = await fullySignedIn(h, 'starter');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      const id = `evt_unsub_replay_${user.customerId}`;
      const answers = await Promise.all(Array.from({ length: 5 }, () => h.unsubscribe(subscriptionId, 'unsubscribe.pending', { id })));
      expect(answers.map((a) => a.body.status).sort()).to.deep.equal(['already_applied', 'already_applied', 'already_applied', 'already_applied', 'applied']);
      expect(await auditOf(user.customerId, 'plan.cancellation_scheduled')).to.have.length(1);

      const ended = await h.unsubscribe(subscriptionId, 'unsubscribe.success');
      expect(ended.body).to.deep.equal({ status: 'applied', customerId: user.customerId, subscription: 'ended', effective: 'now' });
      expect((await accountOf(user.customerId)).status).to.equal('cancelled');
      expect((await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': user.primaryKey } })).status).to.equal(403);
      expect((await auditOf(user.customerId, 'status.cancelled'))[0]?.detail).to.include({ by: 'marketplace', effectiveAt: NOW.toISOString() });
      expect((await h.unsubscribe(subscriptionId, 'unsubscribe.success')).body).to.include({ status: 'unchanged' });
    });
  });

  describe('POST /marketplace/entitlements', () => {
    it('a confirmed entitlement event changes the plan at once and writes the prorated fee record and the audit entry', async () => {
      const user = await fullySignedIn(h, 'starter');
      await user.client.submit(await user.client.open('/console/plan'), '/console/plan/change', { plan: 'business' });
      const subscriptionId = await subscriptionOf(h, user.customerId);
      const answer = await h.entitle(subscriptionId, 'business', { id: `evt_up_${user.customerId}` });
      expect(answer).to.deep.equal({
        status: 200,
        body: { status: 'applied', customerId: user.customerId, plan: 'business', effective: 'now' },
      });
      expect(await usageOf(user.primaryKey)).to.include({ plan: 'business', monthly_limit: 30_000 });
      const plan = await user.client.open('/console/plan');
      expect(plan.html).to.not.contain('id="pending-change"');
      const fees = await feeRecords(user.customerId);
      expect(fees).to.have.length(1);
      // (2,400 − 180) USD × 15/30 days left in November (the 16th included) = 1,110 USD.
      expect(fees[0]).to.include({ subscriptionId, hour: '2026-11-16T10', quantity: 111_000, plan: 'business', previousPlan: 'starter' });
      expect(fees[0]!.reportedAt ?? null, 'not reported yet').to.equal(null);
      expect(fees[0]!.effectiveAt!.toISOString()).to.equal(NOW.toISOString());
      const audit = await h.api.deps.models.Audit.findOne({ customerId: user.customerId, action: 'plan.upgraded' }).lean();
      expect(audit?.detail).to.include({ from: 'starter', to: 'business', effectiveAt: NOW.toISOString(), by: 'marketplace' });
    });

    it('a confirmed downgrade applies on the 1st: the fee record names that date and the whole month', async () => {
      const user = await fullySignedIn(h, 'starter');
      const answer = await h.entitle(await subscriptionOf(h, user.customerId), 'free');
      expect(answer.body).to.include({ status: 'applied', effective: '2026-12' });
      expect(await usageOf(user.primaryKey)).to.include({ plan: 'starter', monthly_limit: 1_000 });
      const [fee] = await feeRecords(user.customerId);
      expect(fee).to.include({ quantity: -18_000, plan: 'free', previousPlan: 'starter', hour: '2026-12-01T00' });
    });

    it('a confirmed downgrade withdrawn before the 1st leaves no fee behind (its unreported record is voided; a reported one is reversed)', async () => {
      const user = await fullySignedIn(h, 'professional');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      await h.entitle(subscriptionId, 'starter');
      // The marketplace confirms the subscription continues on Professional: the scheduled downgrade is withdrawn.
      expect((await h.entitle(subscriptionId, 'professional')).body).to.include({ status: 'applied', plan: 'professional', effective: 'now' });
      expect(await feeRecords(user.customerId)).to.deep.equal([]);
      // Reported to the marketplace already: a reversing record answers it.
      await h.entitle(subscriptionId, 'standard');
      const [reported] = await feeRecords(user.customerId);
      await h.api.deps.models.MeteringRecord.updateOne({ _id: reported!._id }, { $set: { reportedAt: new Date() } });
      await h.entitle(subscriptionId, 'professional');
      const fees = await feeRecords(user.customerId);
      expect(
        fees.reduce((sum, f) => sum + f.quantity, 0),
        'the fees net to nothing',
      ).to.equal(0);
      expect(await usageOf(user.primaryKey)).to.include({ plan: 'professional' });
    });

    it('a replayed event changes nothing the second time (one fee record, "already_applied")', async () => {
      const user = await fullySignedIn(h, 'starter');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      const id = `evt_replay_${user.customerId}`;
      const answers = await Promise.all(Array.from({ length: 5 }, () => h.entitle(subscriptionId, 'professional', { id })));
      expect(answers.map((a) => a.body.status).sort()).to.deep.equal(['already_applied', 'already_applied', 'already_applied', 'already_applied', 'applied']);
      expect(await feeRecords(user.customerId)).to.have.length(1);
    });

    it('refuses an event without a signature, with a wrong one, or signed outside the 5-minute window (401, nothing changes)', async () => {
      const user = await fullySignedIn(h, 'free');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      const body = JSON.stringify({
        id: `evt_unsigned_${user.customerId}`,
        type: 'entitlement.updated',
        occurredAt: new Date().toISOString(),
        subscriptionId,
        plan: 'business',
      });
      const unsigned = await fetch(`${h.base}/marketplace/entitlements`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(unsigned.status).to.equal(401);
      expect(((await unsigned.json()) as { error: { code: string } }).error.code).to.equal('invalid_signature');
      expect((await h.entitle(subscriptionId, 'business', { secret: 'another-secret-another-secret-0123456789' })).status).to.equal(401);
      expect((await h.entitle(subscriptionId, 'business', { nowMs: Date.now() - 10 * 60_000 })).status).to.equal(401);
      expect(await usageOf(user.primaryKey)).to.include({ plan: 'free', monthly_limit: 50 });
    });

    /** The operator CLI's environment: this test's store, Redis and prefix. */
    const adminCliEnv = () => ({
      MONGODB_URI: `${testMongoUri()}${h.dbName}`,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: h.config.QUEUE_PREFIX,
      APP_SECRET: h.config.APP_SECRET!,
      LOG_LEVEL: 'silent',
    });

    it('admin marketplace entitle replays an event by hand: signed like the marketplace, applied once', async () => {
      const user = await fullySignedIn(h, 'starter');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      const env = adminCliEnv();
      const args = [
        'marketplace',
        'entitle',
        '--subscription',
        subscriptionId,
        '--plan',
        'standard',
        '--event',
        `evt_cli_${user.customerId}`,
        '--url',
        h.base,
        '--json',
      ];
      const first = await runCli('api/admin/main.ts', args, env);
      expect(first.code, first.stderr).to.equal(0);
      expect(JSON.parse(first.stdout).answer).to.include({ status: 'applied', plan: 'standard', effective: 'now' });
      const again = await runCli('api/admin/main.ts', args, env);
      expect(JSON.parse(again.stdout).answer).to.include({ status: 'already_applied' });
      expect(await usageOf(user.primaryKey)).to.include({ plan: 'standard', monthly_limit: 5_000 });
    });

    it('admin marketplace backfill-subscriptions finds an account an earlier release registered (no top-level subscription id)', async () => {
      const subscriptionId = `mkt-sub-earlier-${Date.now()}`;
      await h.api.deps.models.Account.collection.insertOne({
        _id: `earlier-${subscriptionId}`,
        email: `${subscriptionId}@example.com`,
        plan: 'starter',
        hardCap: false,
        status: 'active',
        marketplace: { accountId: 'mkt-acct', subscriptionId },
      } as never);
      expect((await h.entitle(subscriptionId, 'standard')).status).to.equal(404);
      const env = adminCliEnv();
      const run = await runCli('api/admin/main.ts', ['marketplace', 'backfill-subscriptions', '--json'], env);
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout).copied).to.be.at.least(1);
      expect((await h.entitle(subscriptionId, 'standard')).body).to.include({ status: 'applied', plan: 'standard' });
    });

    it('answers 404 for an unknown subscription and 400 for a malformed event', async () => {
      expect((await h.entitle('sub-nobody-has', 'business')).status).to.equal(404);
      const user = await fullySignedIn(h, 'free');
      expect((await h.entitle(await subscriptionOf(h, user.customerId), 'platinum' as never)).status).to.equal(400);
    });
  });

  describe('POST /marketplace/entitlements: events in order, each applied to the end (issue 41)', () => {
    const accountOf = async (customerId: string) => (await h.api.deps.accounts.get(customerId))!;
    const auditOf = (customerId: string, action: string) => h.api.deps.models.Audit.find({ customerId, action }).lean();
    const ago = (s: number) => new Date(Date.now() - s * 1000);

    it('an older event delivered after a newer one is answered "stale" and changes nothing; a redelivery of an applied one "already_applied"', async () => {
      const user = await fullySignedIn(h, 'professional');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      const downgrade = `evt_down_${user.customerId}`;
      expect((await h.entitle(subscriptionId, 'starter', { id: downgrade, at: ago(60) })).body).to.include({ status: 'applied', effective: '2026-12' });
      // The marketplace's retry of an earlier confirmation of Professional arrives late: it must not withdraw the downgrade.
      const late = await h.entitle(subscriptionId, 'professional', { at: ago(120) });
      expect(late).to.deep.equal({ status: 200, body: { status: 'stale', customerId: user.customerId } });
      expect((await accountOf(user.customerId)).scheduledChange).to.include({ plan: 'starter', effectiveMonth: '2026-12' });
      expect(await feeRecords(user.customerId), "the downgrade's fee record stays").to.have.length(1);

      expect((await h.unsubscribe(subscriptionId, 'unsubscribe.pending', { at: ago(30) })).body).to.include({ status: 'applied', subscription: 'ending' });
      // An entitlement from before the cancellation, and the downgrade itself redelivered: neither undoes it.
      expect((await h.entitle(subscriptionId, 'professional', { at: ago(45) })).body).to.include({ status: 'stale' });
      expect((await h.entitle(subscriptionId, 'starter', { id: downgrade, at: ago(60) })).body).to.include({ status: 'already_applied' });
      const after = await accountOf(user.customerId);
      expect(after.scheduledChange).to.include({ cancel: true, effectiveMonth: '2026-12' });
      expect(after.plan).to.equal('professional');
      expect(await auditOf(user.customerId, 'plan.scheduled_change_withdrawn')).to.deep.equal([]);
      expect(await usageOf(user.primaryKey)).to.include({ plan: 'professional' });
    });

    it('an event that stopped half way (its fee record failed) completes on its retry: fee record and audit entry written once', async () => {
      const user = await fullySignedIn(h, 'starter');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      // A real write failure after the account's update: a unique index the fee record collides with (built on
      // a copy of the collection's records taken out of its way, so the other tests' records cannot collide).
      const records = h.api.deps.models.MeteringRecord.collection;
      const others = await records.find({}).toArray();
      await records.deleteMany({});
      await records.createIndex({ customerId: 1, dimension: 1 }, { unique: true, name: 'test_fee_blocker' });
      await records.insertOne({
        _id: `blocker-${user.customerId}`,
        customerId: user.customerId,
        dimension: 'plan_fee_cents',
        hour: '2026-11-01T00',
        quantity: 0,
      } as never);
      const id = `evt_half_${user.customerId}`;
      const first = await h.entitle(subscriptionId, 'business', { id });
      expect(first.status, 'the fee record could not be written').to.equal(500);
      await records.deleteOne({ _id: `blocker-${user.customerId}` } as never);
      await records.dropIndex('test_fee_blocker');
      if (others.length > 0) await records.insertMany(others);
      expect(await feeRecords(user.customerId)).to.deep.equal([]);

      const retry = await h.entitle(subscriptionId, 'business', { id });
      expect(retry).to.deep.equal({ status: 200, body: { status: 'applied', customerId: user.customerId, plan: 'business', effective: 'now' } });
      const fees = await feeRecords(user.customerId);
      expect(fees).to.have.length(1);
      // (2,400 − 180) USD × 15/30 days left in November = 1,110 USD.
      expect(fees[0]).to.include({ quantity: 111_000, plan: 'business', previousPlan: 'starter' });
      expect(await auditOf(user.customerId, 'plan.upgraded')).to.have.length(1);
      expect((await h.entitle(subscriptionId, 'business', { id })).body).to.include({ status: 'already_applied' });
      expect(await auditOf(user.customerId, 'plan.upgraded')).to.have.length(1);
      expect(await usageOf(user.primaryKey)).to.include({ plan: 'business', monthly_limit: 30_000 });
    });

    it('a cancellation delivered while the console writes the account is kept: answered applied only once the account shows it', async () => {
      const users = [];
      for (let i = 0; i < 4; i++) users.push(await fullySignedIn(h, 'starter'));
      await Promise.all(
        users.map(async (user) => {
          const subscriptionId = await subscriptionOf(h, user.customerId);
          const id = `evt_end_${user.customerId}`;
          // The console's writes to the same account (usage alert toggles, three at a time) for as long as the event takes.
          let delivered = false;
          const toggles = Array.from({ length: 3 }, async (_, lane) => {
            for (let i = lane; !delivered; i++) await h.api.deps.accounts.setUsageAlerts(user.customerId, i % 2 === 0);
          });
          let answer = await h.unsubscribe(subscriptionId, 'unsubscribe.success', { id });
          delivered = true;
          await Promise.all(toggles);
          // A 503 (the write was not kept) is retried, as the marketplace does.
          for (let retry = 0; answer.status === 503 && retry < 3; retry++) answer = await h.unsubscribe(subscriptionId, 'unsubscribe.success', { id });
          expect(answer.body).to.include({ status: 'applied', subscription: 'ended' });
        }),
      );
      for (const user of users) {
        expect((await accountOf(user.customerId)).status, user.customerId).to.equal('cancelled');
        expect((await http(h.api.port, '/v1/usage', { headers: { 'x-api-key': user.primaryKey } })).status).to.equal(403);
      }
    });

    it('a downgrade and a later cancellation delivered at once: the cancellation stands and no downgrade fee is left', async () => {
      for (let round = 0; round < 3; round++) {
        const user = await fullySignedIn(h, 'professional');
        const subscriptionId = await subscriptionOf(h, user.customerId);
        // An earlier event applied, so both read the same high-water mark.
        await h.entitle(subscriptionId, 'professional', { at: ago(60) });
        const answers = await Promise.all([
          h.entitle(subscriptionId, 'starter', { at: ago(20) }),
          h.unsubscribe(subscriptionId, 'unsubscribe.pending', { at: ago(10) }),
        ]);
        expect(answers.map((a) => a.status)).to.deep.equal([200, 200]);
        expect((await accountOf(user.customerId)).scheduledChange, `round ${round}`).to.include({ cancel: true });
        expect(await feeRecords(user.customerId), `round ${round}: the replaced downgrade's fee is voided`).to.deep.equal([]);
      }
    });

    it('refuses an event dated after its signature (it would hold back every later event)', async () => {
      const user = await fullySignedIn(h, 'starter');
      const answer = await h.entitle(await subscriptionOf(h, user.customerId), 'business', { at: new Date(Date.now() + 3600_000) });
      expect(answer.status).to.equal(400);
      expect((await accountOf(user.customerId)).plan).to.equal('starter');
    });
  });

  describe('POST /marketplace/entitlements: the limit on bad deliveries', () => {
    /** One delivery from `address` (X-Forwarded-For through the trusted loopback proxy); `sign`: with the right secret. */
    async function deliverFrom(address: string, event: Record<string, string>, sign: boolean) {
      const body = JSON.stringify(event);
      const signature = signEntitlement(sign ? marketplaceSecret(h.config)! : 'not-the-marketplace-secret-0123456789abcdef', body);
      const res = await fetch(`${h.base}/marketplace/entitlements`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address, ...signature },
        body,
      });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
    }

    it('counts only refused events, per address (IPv6 by its /64): past 20 they answer 429, and a signed event from there is still applied', async () => {
      const user = await fullySignedIn(h, 'starter');
      const subscriptionId = await subscriptionOf(h, user.customerId);
      const event = (n: string, plan = 'starter') => ({
        id: `evt_limit_${n}_${user.customerId}`,
        type: 'entitlement.updated',
        occurredAt: new Date().toISOString(),
        subscriptionId,
        plan,
      });
      for (let i = 0; i < 25; i++) {
        expect((await deliverFrom('2001:db8:1::1', event(`ok${i}`), true)).status, 'signed events are not counted').to.equal(200);
      }
      // Twenty bad ones from addresses of one /64: each refused as it is.
      for (let i = 1; i <= 20; i++) expect((await deliverFrom(`2001:db8:1::${i.toString(16)}:1`, event(`bad${i}`), false)).status).to.equal(401);
      const limited = await deliverFrom('2001:db8:1:0:ffff::9', event('bad21'), false);
      expect(limited.status).to.equal(429);
      expect((limited.body.error as { code: string }).code).to.equal('too_many_attempts');
      expect(Number(limited.retryAfter)).to.be.within(1, 15 * 60);
      expect((await deliverFrom('2001:db8:1::1', { id: 'x' }, true)).status, 'malformed counts as bad too').to.equal(429);
      expect((await deliverFrom('2001:db8:2::1', event('other'), false)).status, 'another /64 is its own subject').to.equal(401);
      const signed = await deliverFrom('2001:db8:1::1', event('upgrade', 'standard'), true);
      expect(signed.status, 'a correctly signed event is never refused').to.equal(200);
      expect(signed.body).to.include({ status: 'applied', plan: 'standard' });
    });
  });
});
