import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createRedis } from '../../../shared/redis';
import { HmacRegistrationSigner, newLocalSubscription } from '../../../api/console/links/registration-token';
import { VerificationTokens, VERIFICATION_TTL_MS } from '../../../api/console/links/verification-token';
import { AttemptLimiter, RULES } from '../../../api/console/auth/attempts';
import { TotpService } from '../../../api/console/auth/totp';
import { hashPassword, verifyPassword } from '../../../api/console/auth/passwords';
import { passwordProblems } from '../../../api/console/validation';
import { readRegistration } from '../../../api/console/validation';
import { PasswordResetTokens, PASSWORD_RESET_TTL_MS } from '../../../api/console/links/password-reset';
import { hashRecoveryCode, isRecoveryCodeShape, newRecoveryCodes, RECOVERY_CODE_COUNT } from '../../../api/console/auth/recovery-codes';
import { RevealStore } from '../../../api/console/links/reveal';
import { TooManyRequestsError } from '../../../shared/errors';
import { generate } from 'otplib';
import { isolation, keysUnder, testRedisUrl } from '../../support/engines';

const SECRET = 'unit-secret-unit-secret-unit-secret-0001';

describe('Console token and credential rules', () => {
  let redis: Redis;
  let prefix: string;
  before(() => {
    redis = createRedis(testRedisUrl(), 'worker');
    prefix = isolation('tokens').prefix;
  });
  after(async () => redis.quit());

  describe('marketplace registration token', () => {
    const signer = new HmacRegistrationSigner(SECRET);

    it('carries the marketplace account ID, the subscription ID and the plan', () => {
      const sub = newLocalSubscription('business');
      expect(signer.verify(signer.sign(sub))).to.deep.equal({ ok: true, subscription: sub });
    });

    it('is refused when any character is changed, or when signed with another secret', () => {
      const token = signer.sign(newLocalSubscription('starter'));
      const body = token.split('.')[0]!;
      const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), plan: 'enterprise' })).toString('base64url');
      expect(signer.verify(`${forged}.${token.split('.')[1]}`)).to.deep.equal({ ok: false, reason: 'invalid' });
      expect(new HmacRegistrationSigner('another-secret-another-secret-another-0').verify(token).ok).to.equal(false);
      expect(signer.verify('garbage').ok).to.equal(false);
    });

    it('expires', () => {
      expect(signer.verify(signer.sign(newLocalSubscription('free'), -1))).to.deep.equal({ ok: false, reason: 'expired' });
    });
  });

  describe('e-mail verification link', () => {
    it('is valid for 24 hours and then says it expired (and whose it was, to offer a new one)', async () => {
      let now = Date.now();
      const links = new VerificationTokens(SECRET, redis, prefix, () => now);
      const token = links.issue('cust-1', 'a@example.com');
      now += VERIFICATION_TTL_MS - 1000;
      expect((await links.check(token)).ok).to.equal(true);
      now += 2000;
      expect(await links.check(token)).to.deep.equal({ ok: false, reason: 'expired', customerId: 'cust-1', email: 'a@example.com' });
    });

    it('works once: after it is used up, it is reported as used', async () => {
      const links = new VerificationTokens(SECRET, redis, prefix);
      const token = links.issue('cust-2', 'b@example.com');
      const first = await links.check(token);
      if (!first.ok) throw new Error('fresh link refused');
      expect(await links.consume(first.nonce)).to.equal(true);
      expect(await links.consume(first.nonce)).to.equal(false);
      expect(await links.check(token)).to.include({ ok: false, reason: 'used' });
    });

    it('cannot be replayed as a registration token (keys are bound to their purpose)', async () => {
      const links = new VerificationTokens(SECRET, redis, prefix);
      expect(new HmacRegistrationSigner(SECRET).verify(links.issue('c', 'c@example.com')).ok).to.equal(false);
    });
  });

  describe('lockout', () => {
    const refused = (p: Promise<unknown>) => p.then(() => undefined).catch((e: unknown) => e);

    it('locks a subject after the allowed failures, even for a right answer, until the window ends', async () => {
      const limiter = new AttemptLimiter(redis, prefix);
      for (let i = 1; i <= RULES.signInAccount.maxFailures; i++) expect(await limiter.take(RULES.signInAccount, 'victim@example.com')).to.equal(i);
      const err = await refused(limiter.take(RULES.signInAccount, 'victim@example.com'));
      expect(err).to.be.instanceOf(TooManyRequestsError);
      expect((err as TooManyRequestsError).retryAfterSeconds).to.be.within(14 * 60, 15 * 60);
      expect(await limiter.take(RULES.signInAccount, 'other@example.com')).to.equal(1);
    });

    it('counts e-mail addresses case-insensitively', async () => {
      const limiter = new AttemptLimiter(redis, prefix);
      for (let i = 0; i < RULES.totp.maxFailures; i++) await limiter.take(RULES.totp, i % 2 ? 'MiXeD@Example.com' : 'mixed@example.com');
      expect(await refused(limiter.take(RULES.totp, 'mixed@EXAMPLE.com'))).to.be.instanceOf(TooManyRequestsError);
    });

    it('lets no more concurrent guesses through than the allowance (each is counted before it is checked)', async () => {
      const limiter = new AttemptLimiter(redis, prefix);
      const outcomes = await Promise.all(Array.from({ length: 200 }, () => refused(limiter.take(RULES.totp, 'burst@example.com'))));
      expect(outcomes.filter((o) => o === undefined)).to.have.length(RULES.totp.maxFailures);
      expect(outcomes.filter((o) => o instanceof TooManyRequestsError)).to.have.length(200 - RULES.totp.maxFailures);
    });

    it('gives a right attempt back, so successes never lock anyone out, while wrong ones stay counted', async () => {
      const limiter = new AttemptLimiter(redis, prefix);
      for (let i = 0; i < 3 * RULES.signInAddress.maxFailures; i++) {
        await limiter.take(RULES.signInAddress, '192.0.2.7');
        await limiter.succeeded(RULES.signInAddress, '192.0.2.7');
      }
      await limiter.take(RULES.signInAddress, '192.0.2.7'); // a wrong one
      expect(await limiter.take(RULES.signInAddress, '192.0.2.7')).to.equal(2);
      // Giving back what was never taken creates no key (and never counts below zero).
      const before = (await keysUnder(redis, prefix, 'console:attempts:totp:*')).length;
      await limiter.succeeded(RULES.totp, 'never-taken@example.com');
      expect(await keysUnder(redis, prefix, 'console:attempts:totp:*')).to.have.length(before);
    });

    it('takes from several limits in order, and gives back the ones taken when a later one refuses', async () => {
      const limiter = new AttemptLimiter(redis, prefix);
      for (let i = 0; i < RULES.signInAccount.maxFailures; i++) await limiter.take(RULES.signInAccount, 'locked@example.com');
      const refusal = await refused(
        limiter.takeAll([
          [RULES.signInAddress, '198.51.100.9'],
          [RULES.signInAccount, 'locked@example.com'],
        ]),
      );
      expect(refusal).to.be.instanceOf(TooManyRequestsError);
      // The address's attempt was given back: its next one is its first.
      expect(await limiter.take(RULES.signInAddress, '198.51.100.9')).to.equal(1);
    });

    it('keeps a fixed-size key whatever the subject (an anonymous visitor cannot grow Redis with long addresses)', async () => {
      const limiter = new AttemptLimiter(redis, prefix);
      const long = `${'x'.repeat(30_000)}@example.com`;
      await limiter.take(RULES.verifyResend, long);
      const keys = await keysUnder(redis, prefix, 'console:attempts:verify-resend:*');
      expect(keys).to.have.length(1);
      expect(keys[0]!.length).to.be.below(prefix.length + 60);
    });
  });

  describe('TOTP', () => {
    it('accepts the current 6-digit code once and refuses its replay', async () => {
      const totp = new TotpService(SECRET, redis, prefix);
      const secret = totp.newSecret();
      const code = await generate({ secret });
      expect(await totp.check('cust-totp', secret, code)).to.equal(true);
      expect(await totp.check('cust-totp', secret, code)).to.equal(false);
    });

    it('refuses codes of the wrong shape or from far outside the 30-second window', async () => {
      const totp = new TotpService(SECRET, redis, prefix);
      const secret = totp.newSecret();
      expect(await totp.check('cust-x', secret, '12345')).to.equal(false);
      expect(await totp.check('cust-x', secret, 'abcdef')).to.equal(false);
      const stale = await generate({ secret, epoch: Math.floor(Date.now() / 1000) - 300 });
      expect(await totp.check('cust-x', secret, stale)).to.equal(false);
    });

    it('keeps the secret encrypted at rest, bound to its account', () => {
      const totp = new TotpService(SECRET, redis, prefix);
      const secret = totp.newSecret();
      const sealed = totp.sealSecret(secret, 'cust-a');
      expect(sealed).to.not.contain(secret);
      expect(totp.openSecret(sealed, 'cust-a')).to.equal(secret);
      expect(() => totp.openSecret(sealed, 'cust-b')).to.throw();
    });

    it('survives an APP_SECRET rotation: the previous secret still opens a sealed TOTP secret, which is then sealed with the new one', () => {
      const before = new TotpService(SECRET, redis, prefix);
      const secret = before.newSecret();
      const sealedBefore = before.sealSecret(secret, 'cust-r');
      const rotated = 'rotated-secret-rotated-secret-rotated-0456';
      const withoutPrevious = new TotpService(rotated, redis, prefix);
      expect(() => withoutPrevious.openSecret(sealedBefore, 'cust-r')).to.throw(); // what rotating used to do to every enrolled customer
      const after = new TotpService(rotated, redis, prefix, [SECRET]);
      expect(after.openSecret(sealedBefore, 'cust-r')).to.equal(secret);
      const resealed = after.resealed(sealedBefore, 'cust-r')!;
      expect(resealed).to.be.a('string').and.not.equal(sealedBefore);
      expect(withoutPrevious.openSecret(resealed, 'cust-r')).to.equal(secret); // the previous secret can now be dropped
      expect(after.resealed(resealed, 'cust-r')).to.equal(null);
      expect(() => after.openSecret(sealedBefore, 'cust-other')).to.throw();
    });
  });

  describe('passwords', () => {
    it('require 8+ characters with an upper-case letter, a lower-case letter, a digit and a symbol', () => {
      expect(passwordProblems('Aa1!aaaa')).to.deep.equal([]);
      expect(passwordProblems('Aa1!aaa')).to.have.length(1);
      expect(passwordProblems('aa1!aaaa')).to.deep.equal(['An upper-case letter']);
      expect(passwordProblems('AA1!AAAA')).to.deep.equal(['A lower-case letter']);
      expect(passwordProblems('Aab!aaaa')).to.deep.equal(['A digit']);
      expect(passwordProblems('Aa1aaaaa')).to.deep.equal(['A symbol, such as ! ? # %']);
    });

    it('are stored as salted scrypt hashes: the same password hashes differently each time', async () => {
      const a = await hashPassword('Sturdy#Passw0rd');
      const b = await hashPassword('Sturdy#Passw0rd');
      expect(a)
        .to.match(/^scrypt\$/)
        .and.not.equal(b)
        .and.not.contain('Sturdy');
      expect(await verifyPassword('Sturdy#Passw0rd', a)).to.equal(true);
      expect(await verifyPassword('sturdy#Passw0rd', a)).to.equal(false);
      expect(await verifyPassword('Sturdy#Passw0rd', null)).to.equal(false);
    });
  });

  describe('registration fields', () => {
    it('accept a company website of the form https://<domain> only', () => {
      const ok = (website: string) => !readRegistration({ firstName: 'a', lastName: 'b', email: 'a@b.co', company: 'c', website }).errors.website;
      expect(ok('https://example.com')).to.equal(true);
      expect(ok('https://www.example.co.uk/')).to.equal(true);
      expect(ok('http://example.com')).to.equal(false);
      expect(ok('https://example.com/about')).to.equal(false);
      expect(ok('https://localhost')).to.equal(false);
      expect(ok('https://user@example.com')).to.equal(false);
    });

    it('read a bare domain as https://<domain>', () => {
      const read = readRegistration({ firstName: 'a', lastName: 'b', email: 'a@b.co', company: 'c', website: 'Example.com' });
      expect(read.errors.website).to.equal(undefined);
      expect(read.input.website).to.equal('https://example.com');
    });

    it('require every field', () => {
      expect(Object.keys(readRegistration({}).errors).sort()).to.deep.equal(['company', 'email', 'firstName', 'lastName', 'website']);
    });
  });

  describe('password reset link', () => {
    const current = async () => 'scrypt$hash-one';

    it('is valid for one hour, then expired', async () => {
      const issuedAt = Date.now() - PASSWORD_RESET_TTL_MS - 1000;
      const old = new PasswordResetTokens(SECRET, redis, prefix, () => issuedAt);
      const fresh = new PasswordResetTokens(SECRET, redis, prefix);
      expect(await fresh.check(old.issue('c1', 'scrypt$hash-one'), current)).to.deep.equal({ ok: false, reason: 'expired' });
      expect((await fresh.check(fresh.issue('c1', 'scrypt$hash-one'), current)).ok).to.equal(true);
    });

    it('works once, and dies when the password changes by any other path', async () => {
      const resets = new PasswordResetTokens(SECRET, redis, prefix);
      const token = resets.issue('c2', 'scrypt$hash-one');
      const check = await resets.check(token, current);
      if (!check.ok) throw new Error('fresh link refused');
      expect(await resets.consume(check.nonce)).to.equal(true);
      expect(await resets.consume(check.nonce)).to.equal(false);
      expect(await resets.check(token, current)).to.deep.equal({ ok: false, reason: 'used' });
      const other = resets.issue('c2', 'scrypt$hash-one');
      expect(await resets.check(other, async () => 'scrypt$hash-two')).to.deep.equal({ ok: false, reason: 'used' });
    });

    it('is refused when tampered with or when it is a verification link', async () => {
      const resets = new PasswordResetTokens(SECRET, redis, prefix);
      const [body, mac] = resets.issue('c3', 'scrypt$hash-one').split('.');
      const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), cid: 'victim' })).toString('base64url');
      expect(await resets.check(`${forged}.${mac}`, current)).to.deep.equal({ ok: false, reason: 'invalid' });
      const verification = new VerificationTokens(SECRET, redis, prefix).issue('c3', 'a@b.co');
      expect(await resets.check(verification, current)).to.deep.equal({ ok: false, reason: 'invalid' });
    });
  });

  describe('recovery codes', () => {
    it('are ten distinct codes, read back regardless of case, spaces and dashes', () => {
      const codes = newRecoveryCodes();
      expect(codes).to.have.length(RECOVERY_CODE_COUNT);
      expect(new Set(codes).size).to.equal(RECOVERY_CODE_COUNT);
      for (const c of codes) expect(c).to.match(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
      const code = codes[0]!;
      expect(hashRecoveryCode(` ${code.toUpperCase().replace('-', ' ')} `)).to.equal(hashRecoveryCode(code));
      expect(hashRecoveryCode(code)).to.not.contain(code.replace('-', ''));
      expect(isRecoveryCodeShape(code)).to.equal(true);
      expect(isRecoveryCodeShape('123456')).to.equal(false);
    });
  });

  describe('shown-once store', () => {
    it('gives a parked secret to its session once, and to no other session', async () => {
      const reveals = new RevealStore(redis, prefix);
      await reveals.put('session-a', { kind: 'emotion-token', name: 'n', token: 't' });
      expect(await reveals.take('session-b', 'emotion-token')).to.equal(null);
      expect(await reveals.take('session-a', 'emotion-token')).to.deep.equal({ kind: 'emotion-token', name: 'n', token: 't' });
      expect(await reveals.take('session-a', 'emotion-token')).to.equal(null);
    });
  });
});
