import { expect } from 'chai';
import { parseConfig } from '../../../shared/config';
import { HEALTHY_RUN_MS, restartDelayMs } from '../../../dev/restart-policy';

describe('settlement configuration and the supervisor restart policy', () => {
  it('refuses the test-only fault hook when NODE_ENV=production', () => {
    expect(() => parseConfig({ NODE_ENV: 'production', FAULT_KILL_AT: 'after_commit' })).to.throw(/FAULT_KILL_AT/);
    expect(parseConfig({ NODE_ENV: 'test', FAULT_KILL_AT: 'after_commit' }).FAULT_KILL_AT).to.equal('after_commit');
    expect(parseConfig({ NODE_ENV: 'production', SECURE_COOKIES: 'true' }).FAULT_KILL_AT).to.equal(undefined);
  });

  it('accepts only the four named steps', () => {
    for (const step of ['after_engine', 'after_commit', 'after_publish', 'in_drainer'])
      expect(parseConfig({ FAULT_KILL_AT: step }).FAULT_KILL_AT).to.equal(step);
    expect(() => parseConfig({ FAULT_KILL_AT: 'before_everything' })).to.throw();
  });

  it('defaults to at least two liveness workers, so one crash never leaves the queue without a worker', () => {
    expect(parseConfig({}).LIVENESS_WORKERS).to.be.at.least(2);
    // An operator can still choose one worker explicitly.
    expect(parseConfig({ LIVENESS_WORKERS: '1' }).LIVENESS_WORKERS).to.equal(1);
  });

  it('restarts at once after a healthy run and backs off 250 ms, 500 ms, 1 s, … up to 30 s only in a crash loop', () => {
    expect(HEALTHY_RUN_MS).to.equal(60_000);
    expect([0, 1, 2, 3, 4, 8, 20].map(restartDelayMs)).to.deep.equal([0, 250, 500, 1000, 2000, 30_000, 30_000]);
  });
});
