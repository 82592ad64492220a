import { expect } from 'chai';
import { effectiveHardCap, isPlanId, monthlyLimitOf, PLAN_IDS, PLANS } from '../../../shared/billing/plans';

describe("Plans (the liveness spec's plan table)", () => {
  it("holds the spec's monthly calls, fees and overage prices", () => {
    const table = PLAN_IDS.map((id) => [id, PLANS[id].monthlyCalls, PLANS[id].monthlyFeeUsd, PLANS[id].overagePerCallUsd]);
    expect(table).to.deep.equal([
      ['free', 50, 0, null],
      ['starter', 1_000, 180, 0.18],
      ['standard', 5_000, 750, 0.15],
      ['professional', 10_000, 1_200, 0.12],
      ['business', 30_000, 2_400, 0.08],
      ['enterprise', 100_000, 5_000, 0.05],
    ]);
  });

  it('ranks the plans in the order of the table, so an upgrade is a higher rank', () => {
    expect(PLAN_IDS.map((id) => PLANS[id].rank)).to.deep.equal([0, 1, 2, 3, 4, 5]);
    for (const id of PLAN_IDS) expect(PLANS[id].id).to.equal(id);
  });

  it("gives enterprise its contract's limit, and every other plan the table's whatever a contract says", () => {
    expect(monthlyLimitOf('enterprise', 250_000)).to.equal(250_000);
    expect(monthlyLimitOf('enterprise', 3)).to.equal(3);
    expect(monthlyLimitOf('enterprise')).to.equal(100_000);
    expect(monthlyLimitOf('enterprise', 0)).to.equal(100_000);
    expect(monthlyLimitOf('enterprise', null)).to.equal(100_000);
    expect(monthlyLimitOf('starter', 250_000)).to.equal(1_000);
    expect(monthlyLimitOf('free', 10)).to.equal(50);
  });

  it('keeps the hard cap on for the free plan whatever the stored flag says, and follows the flag elsewhere', () => {
    expect(effectiveHardCap('free', false)).to.equal(true);
    expect(effectiveHardCap('free', true)).to.equal(true);
    for (const id of PLAN_IDS.filter((p) => p !== 'free')) {
      expect(effectiveHardCap(id, false)).to.equal(false);
      expect(effectiveHardCap(id, true)).to.equal(true);
    }
  });

  it('recognises exactly the plan ids, lower case', () => {
    for (const id of PLAN_IDS) expect(isPlanId(id)).to.equal(true);
    for (const other of ['Free', 'STARTER', 'premium', '', 'enterprise ']) expect(isPlanId(other)).to.equal(false);
  });
});
