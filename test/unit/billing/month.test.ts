import { expect } from 'chai';
import { hourOf, monthAfter, monthOf, nextMonthStart } from '../../../shared/billing/month';

describe('billing month arithmetic (UTC)', () => {
  it('puts 23:59:59.999 on the last day in that month and 00:00:00.000 on the 1st in the next', () => {
    expect(monthOf(new Date('2026-01-31T23:59:59.999Z'))).to.equal('2026-01');
    expect(monthOf(new Date('2026-02-01T00:00:00.000Z'))).to.equal('2026-02');
  });

  it('ignores the local time zone: a call at 23:30 UTC on the 31st is January whatever the offset', () => {
    expect(monthOf(new Date('2026-02-01T00:30:00.000+01:00'))).to.equal('2026-01');
  });

  it('resets credits at 00:00:00 UTC on the 1st of the next month, across years and leap February', () => {
    expect(nextMonthStart(new Date('2026-01-15T10:00:00Z')).toISOString()).to.equal('2026-02-01T00:00:00.000Z');
    expect(nextMonthStart(new Date('2026-12-31T23:59:59.999Z')).toISOString()).to.equal('2027-01-01T00:00:00.000Z');
    expect(nextMonthStart(new Date('2028-02-29T12:00:00Z')).toISOString()).to.equal('2028-03-01T00:00:00.000Z');
    expect(nextMonthStart(new Date('2026-03-01T00:00:00.000Z')).toISOString()).to.equal('2026-04-01T00:00:00.000Z');
  });

  it('names the month after a month, December included', () => {
    expect(monthAfter('2026-01')).to.equal('2026-02');
    expect(monthAfter('2026-12')).to.equal('2027-01');
  });

  it('names the UTC hour for metering', () => {
    expect(hourOf(new Date('2026-01-31T23:59:59.999Z'))).to.equal('2026-01-31T23');
    expect(hourOf(new Date('2026-02-01T00:00:00.000Z'))).to.equal('2026-02-01T00');
  });
});
