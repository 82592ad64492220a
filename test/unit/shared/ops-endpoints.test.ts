// /readyz needs no credential: a flood of it must cost the server one readiness check at a time, not one each.
import { expect } from 'chai';
import { READINESS_REUSE_MS, sharedCheck } from '../../../shared/http/ops-endpoints';

describe('readiness check shared by /readyz callers', () => {
  function counted(answers: boolean[]) {
    let runs = 0;
    let release: () => void = () => undefined;
    const check = () => {
      const ok = answers[Math.min(runs, answers.length - 1)]!;
      runs++;
      return new Promise<{ ok: boolean }>((resolve) => (release = () => resolve({ ok })));
    };
    return { check, runs: () => runs, release: () => release() };
  }

  it('runs one check for any number of concurrent callers', async () => {
    const c = counted([true]);
    const shared = sharedCheck(c.check);
    const waiting = Array.from({ length: 500 }, () => shared());
    c.release();
    const answers = await Promise.all(waiting);
    expect(c.runs()).to.equal(1);
    expect(answers.every((a) => a.ok)).to.equal(true);
  });

  it('reuses a good answer for a second, then checks again', async () => {
    let t = 0;
    const c = counted([true]);
    const shared = sharedCheck(c.check, READINESS_REUSE_MS, () => t);
    const first = shared();
    c.release();
    await first;
    t = READINESS_REUSE_MS - 1;
    await shared();
    expect(c.runs()).to.equal(1);
    t = READINESS_REUSE_MS;
    const again = shared();
    c.release();
    await again;
    expect(c.runs()).to.equal(2);
  });

  it('does not reuse a failed answer: the next caller checks again, so recovery is seen at once', async () => {
    const c = counted([false, true]);
    const shared = sharedCheck(c.check, READINESS_REUSE_MS, () => 0);
    const failed = shared();
    c.release();
    expect((await failed).ok).to.equal(false);
    const next = shared();
    c.release();
    expect((await next).ok).to.equal(true);
    expect(c.runs()).to.equal(2);
  });
});
