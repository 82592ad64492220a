import { expect } from 'chai';
import { hashPassword, verifyPassword } from '../../../api/console/auth/passwords';
import { PASSWORD_MAX, PASSWORD_MIN, passwordProblems } from '../../../api/console/validation';

describe('Console password rules (8+ characters with upper, lower, digit and symbol)', () => {
  it('accepts a password that meets every rule, at exactly 8 characters', () => {
    expect(PASSWORD_MIN).to.equal(8);
    expect(passwordProblems('Abcdef1!')).to.deep.equal([]);
  });

  it('names each rule a password misses', () => {
    expect(passwordProblems('Abcde1!')).to.deep.equal(['At least 8 characters']);
    expect(passwordProblems('abcdefg1!')).to.deep.equal(['An upper-case letter']);
    expect(passwordProblems('ABCDEFG1!')).to.deep.equal(['A lower-case letter']);
    expect(passwordProblems('Abcdefgh!')).to.deep.equal(['A digit']);
    expect(passwordProblems('Abcdefgh1')).to.deep.equal(['A symbol, such as ! ? # %']);
    expect(passwordProblems('')).to.have.length(5);
  });

  it('counts letters and digits of any script, and does not count a space as a symbol', () => {
    expect(passwordProblems('Ärger1234#')).to.deep.equal([]);
    expect(passwordProblems('Abcdefg1 ')).to.deep.equal(['A symbol, such as ! ? # %']);
  });

  it(`refuses more than ${PASSWORD_MAX} characters, bounding the cost of a hash`, () => {
    const long = 'Aa1!'.repeat(PASSWORD_MAX / 4);
    expect(passwordProblems(long)).to.deep.equal([]);
    expect(passwordProblems(long + 'x')).to.deep.equal([`At most ${PASSWORD_MAX} characters`]);
  });

  it('hashes with scrypt and a fresh salt, verifies the right password only, and treats NFKC forms alike', async () => {
    const a = await hashPassword('Sturdy#Passw0rd');
    const b = await hashPassword('Sturdy#Passw0rd');
    expect(a).to.match(/^scrypt\$32768\$8\$3\$[\w-]+\$[\w-]+$/);
    expect(a).to.not.equal(b);
    expect(await verifyPassword('Sturdy#Passw0rd', a)).to.equal(true);
    expect(await verifyPassword('sturdy#Passw0rd', a)).to.equal(false);
    expect(await verifyPassword('Sturdy#Passw0rd', null)).to.equal(false);
    expect(await verifyPassword('Sturdy#Passw0rd', 'md5$abc')).to.equal(false);
    // U+FB01 (the "fi" ligature) is NFKC-equal to "fi".
    const lig = await hashPassword('Pro\uFB01le#2026');
    expect(await verifyPassword('Profile#2026', lig)).to.equal(true);
  });
});
