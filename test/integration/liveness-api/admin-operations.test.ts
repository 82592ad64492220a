import { expect } from 'chai';
import { runCli } from '../../support/cli';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { testMongoUri, testRedisUrl } from '../../support/engines';
import { hourOf, monthOf } from '../../../shared/billing/month';
import type { Models } from '../../../shared/db/models';
import { hoursSince } from '../../../api/admin/commands/metering';
import { firstKeptMonth } from '../../../api/admin/commands/retention';

/** A billed liveness call's usage event as the outbox drainer writes it (the rollup and retention read these). */
function recordUsageEvent(models: Models, e: { requestId: string; customerId: string; overage: boolean; at: Date } & Record<string, unknown>) {
  const { requestId, customerId, overage, at } = e;
  return models.UsageEvent.create({
    _id: requestId,
    service: 'liveness',
    customerId,
    keyId: 'k',
    plan: 'starter',
    month: monthOf(at),
    hour: hourOf(at),
    billable: true,
    overage,
    latencyMs: 20,
    at,
  });
}

describe('operator CLI: scripting, contract limits and the metering schedule', function () {
  // Each CLI call is a fresh tsx process (seconds each on a busy 2-core machine); a test makes up to six.
  this.timeout(240_000);
  let stack: LivenessStack;
  let env: Record<string, string>;

  before(async () => {
    stack = await startLivenessStack('adminops', { withWorker: false });
    env = { MONGODB_URI: `${testMongoUri()}${stack.dbName}`, REDIS_URL: testRedisUrl(), QUEUE_PREFIX: stack.prefix, LOG_LEVEL: 'silent' };
  });
  after(() => stack.stop());

  const admin = (...args: string[]) => runCli('api/admin/main.ts', args, env);

  it('--get FIELD prints just that value, so a shell can use it without jq', async () => {
    const res = await admin('account', 'create', '--email', 'get@example.com', '--plan', 'starter', '--get', 'primaryKey');
    expect(res.code).to.equal(0);
    const key = res.stdout.trim();
    expect(key).to.match(/^lc_[A-Za-z0-9_-]{32,}$/);
    expect((await stack.usage(key)).status).to.equal(200);
  });

  it('refuses --monthly-limit on a plan that takes its limit from the plan table, instead of ignoring it', async () => {
    const create = await admin('account', 'create', '--email', 'lim@example.com', '--plan', 'starter', '--monthly-limit', '7000', '--json');
    expect(create.code).to.equal(64);
    expect(JSON.parse(create.stdout).error.message).to.include('enterprise plan only');
    const made = JSON.parse((await admin('account', 'create', '--email', 'lim2@example.com', '--plan', 'standard', '--json')).stdout);
    const set = await admin('account', 'set', '--customer', made.customerId, '--monthly-limit', '7000', '--json');
    expect(set.code).to.equal(64);
    const usage = (await stack.usage(made.primaryKey)).body.data;
    expect(usage.monthly_limit).to.equal(5_000); // standard's plan limit, untouched
  });

  it('metering rollup --since backfills every hour; pending lists unreported records; mark-reported settles one', async () => {
    const made = JSON.parse((await admin('account', 'create', '--email', 'meter@example.com', '--plan', 'starter', '--hard-cap', 'off', '--json')).stdout);
    const threeHoursAgo = new Date(Date.now() - 3 * 3600_000);
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    const models = stack.api.deps.models;
    for (const [i, at] of [threeHoursAgo, threeHoursAgo, twoHoursAgo].entries()) {
      await recordUsageEvent(models, {
        requestId: `00000000-0000-4000-8000-00000000000${i}`,
        service: 'liveness',
        customerId: made.customerId,
        keyId: 'k',
        plan: 'starter',
        billable: true,
        overage: true,
        latencyMs: 20,
        at,
      });
    }
    const rollup = await admin('metering', 'rollup', '--since', hourOf(threeHoursAgo), '--json');
    expect(rollup.code, rollup.stderr).to.equal(0);
    const out = JSON.parse(rollup.stdout);
    expect(out.hours).to.equal(3); // three hours ago, two hours ago, the last full hour
    expect(out.withOverage).to.deep.equal([
      { hour: hourOf(threeHoursAgo), customers: 1 },
      { hour: hourOf(twoHoursAgo), customers: 1 },
    ]);
    const pending = JSON.parse((await admin('metering', 'pending', '--json')).stdout).records;
    expect(pending.map((r: { hour: string; quantity: number }) => [r.hour, r.quantity])).to.deep.equal([
      [hourOf(threeHoursAgo), 2],
      [hourOf(twoHoursAgo), 1],
    ]);
    const marked = JSON.parse((await admin('metering', 'mark-reported', '--hour', hourOf(threeHoursAgo), '--customer', made.customerId, '--json')).stdout);
    expect(marked.marked).to.equal(true);
    // Re-running the schedule is harmless: the reported record keeps its reportedAt.
    await admin('metering', 'rollup', '--since', hourOf(threeHoursAgo), '--json');
    const left = JSON.parse((await admin('metering', 'pending', '--json')).stdout).records;
    expect(left.map((r: { hour: string }) => r.hour)).to.deep.equal([hourOf(twoHoursAgo)]);
  });

  it('a backfill window is every whole UTC hour up to the last full one', () => {
    const now = new Date('2026-03-01T05:30:00Z');
    expect(hoursSince(new Date('2026-03-01T02:00:00Z'), now)).to.deep.equal(['2026-03-01T02', '2026-03-01T03', '2026-03-01T04']);
    expect(hoursSince(new Date('2026-03-01T05:00:00Z'), now)).to.deep.equal([]);
    expect(() => hoursSince(new Date('2025-01-01T00:00:00Z'), now)).to.throw('at most');
  });

  it('retention prune keeps the last N months (at least 13) and refuses while old metering records are unreported', async () => {
    expect(firstKeptMonth(new Date('2026-11-23T12:00:00Z'), 13)).to.equal('2025-11');
    expect(firstKeptMonth(new Date('2026-01-05T00:00:00Z'), 13)).to.equal('2025-01');
    const tooFew = await admin('retention', 'prune', '--keep-months', '6', '--json');
    expect(tooFew.code).to.equal(64);
    const models = stack.api.deps.models;
    const old = new Date(Date.UTC(new Date().getUTCFullYear() - 2, 0, 15));
    await recordUsageEvent(models, {
      requestId: '00000000-0000-4000-8000-0000000000aa',
      service: 'liveness',
      customerId: 'c-old',
      keyId: 'k',
      plan: 'starter',
      billable: true,
      overage: true,
      latencyMs: 20,
      at: old,
    });
    await recordUsageEvent(models, {
      requestId: '00000000-0000-4000-8000-0000000000ab',
      service: 'liveness',
      customerId: 'c-old',
      keyId: 'k',
      plan: 'starter',
      billable: true,
      overage: false,
      latencyMs: 20,
      at: new Date(),
    });
    await admin('metering', 'rollup', '--hour', hourOf(old), '--json');
    const blocked = await admin('retention', 'prune', '--keep-months', '13', '--json');
    expect(blocked.code).to.equal(64);
    expect(JSON.parse(blocked.stdout).error.message).to.include('not reported yet');
    await admin('metering', 'mark-reported', '--hour', hourOf(old), '--customer', 'c-old', '--json');
    const dry = JSON.parse((await admin('retention', 'prune', '--keep-months', '13', '--dry-run', '--json')).stdout);
    expect(dry).to.include({ dryRun: true, usageEvents: 1, meteringRecords: 1 });
    const done = JSON.parse((await admin('retention', 'prune', '--keep-months', '13', '--json')).stdout);
    expect(done).to.include({ dryRun: false, usageEvents: 1, meteringRecords: 1 });
    expect(await models.UsageEvent.countDocuments({ customerId: 'c-old' })).to.equal(1); // this month's event stays
  });

  it('account reset-2fa clears the TOTP secret and recovery codes and ends the console sessions, so the next sign-in sets two-factor up again', async () => {
    const made = JSON.parse((await admin('account', 'create', '--email', 'lost-phone@example.com', '--plan', 'starter', '--json')).stdout);
    const { models, redis, config } = stack.api.deps;
    await models.Account.updateOne({ _id: made.customerId }, { $set: { totpEnabled: true, totpSecretEnc: 'v1:sealed', recoveryCodeHashes: ['h1', 'h2'] } });
    const index = `${config.QUEUE_PREFIX}:console:account-sessions:${made.customerId}`;
    await redis.zadd(index, Date.now() + 60_000, 'session-a'); // a signed-in console session of this account
    await redis.set(`${config.QUEUE_PREFIX}:console:session:session-a`, '{}');
    const res = await admin('account', 'reset-2fa', '--customer', made.customerId, '--json');
    expect(res.code, res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout)).to.include({ twoFactor: 'reset', sessionsEnded: 1 });
    const after = await models.Account.findById(made.customerId).lean();
    expect(after).to.include({ totpEnabled: false, totpSecretEnc: null });
    expect(after!.recoveryCodeHashes).to.deep.equal([]);
    expect(await redis.exists(`${config.QUEUE_PREFIX}:console:session:session-a`)).to.equal(0);
    expect(await models.Audit.countDocuments({ customerId: made.customerId, action: 'two_factor.reset_by_operator' })).to.equal(1);
  });
});
