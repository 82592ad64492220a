import { expect } from 'chai';
import { day, firstOf, utc } from '../../../api/console/views/format';

describe('Console dates (views/format.ts): one style everywhere', () => {
  it('writes a day as "1 Dec 2026", from a Date, an ISO time or a YYYY-MM-DD date, in UTC', () => {
    expect(day(new Date(Date.UTC(2026, 11, 1, 23, 59)))).to.equal('1 Dec 2026');
    expect(day('2026-11-05T23:30:00-02:00')).to.equal('6 Nov 2026');
    expect(day('2026-02-28')).to.equal('28 Feb 2026');
  });

  it('writes the first of a month and a time in the same style', () => {
    expect(firstOf('2026-12')).to.equal('1 Dec 2026');
    expect(firstOf('2027-01')).to.equal('1 Jan 2027');
    expect(utc(new Date(Date.UTC(2026, 11, 1, 0, 0)))).to.equal('1 Dec 2026, 00:00 UTC');
    expect(utc(null)).to.equal('—');
  });
});
