// The shipped defaults of the request path, read from shared/config.ts: changing one is a visible decision
// (this test changes with it), and the admission ceiling stays derived from the budget it serves.
import { expect } from 'chai';
import { parseConfig } from '../../../shared/config';
import { ENTRY_TTL_SECONDS } from '../../../shared/accounts/auth-cache';

describe('Shipped defaults of the request path (shared/config.ts)', () => {
  const defaults = parseConfig({});

  it('bounds each request by its budget: 10 s liveness, 5 s emotion (the spec)', () => {
    expect(defaults.LIVENESS_BUDGET_MS).to.equal(10_000);
    expect(defaults.EMOTION_BUDGET_MS).to.equal(5_000);
  });

  it('admits by time; the backlog ceiling is the most one worker could serve in the budget at ~20 ms a job', () => {
    expect(defaults.MAX_BACKLOG_PER_WORKER).to.equal(500);
    expect(defaults.MAX_BACKLOG_PER_WORKER).to.equal(defaults.LIVENESS_BUDGET_MS / 20);
    expect(defaults.EXPECTED_LIVENESS_WORKERS).to.equal(undefined);
  });

  it('lets a 70-call burst of a free account reach the quota check: the fair-use burst is 60 a key at 20/s', () => {
    expect(defaults.THROTTLE_BURST).to.equal(60);
    expect(defaults.THROTTLE_RATE_PER_SEC).to.equal(20);
    // The quota (50 on the free plan) is checked first, so 70 calls give 50 × 200 and 20 × quota_exceeded.
    expect(defaults.THROTTLE_BURST).to.be.at.least(50);
  });

  it('counts fair use in work: a liveness token pays for 100 ms of worker time (several selfies), emotion in seconds of audio', () => {
    expect(defaults.THROTTLE_WORK_MS_PER_TOKEN).to.equal(100);
    // Emotion's is only an abuse ceiling (docs/emotion-api.md): 10 h of audio at once, ten times a batch of 60
    // one-minute recordings, refilled in an hour at 10 s of audio a second; 1 s taken before the work.
    expect(defaults.EMOTION_FAIR_USE_BURST_SECONDS).to.equal(36_000);
    expect(defaults.EMOTION_FAIR_USE_BURST_SECONDS).to.equal(10 * 60 * 60);
    expect(defaults.EMOTION_FAIR_USE_SECONDS_PER_SEC).to.equal(10);
    expect(defaults.EMOTION_FAIR_USE_BURST_SECONDS / defaults.EMOTION_FAIR_USE_SECONDS_PER_SEC).to.equal(3600);
    expect(defaults.EMOTION_FAIR_USE_UPFRONT_SECONDS).to.equal(1);
    // A refused job that ran out the 5 s emotion budget costs what the engine analyses in that time at its low pace.
    expect((defaults.EMOTION_BUDGET_MS / 1000) * defaults.EMOTION_FAIR_USE_SECONDS_PER_WORKER_SECOND).to.equal(500);
  });

  it('keeps a cached authentication at most 5 minutes (the staleness bound for edits outside AccountService)', () => {
    expect(ENTRY_TTL_SECONDS).to.equal(300);
  });
});
