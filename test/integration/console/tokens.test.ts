import { expect } from 'chai';
import { Redis } from 'ioredis';
import { HmacRegistrationSigner, newLocalSubscription } from '../../../api/console/registration-token';
import { VerificationTokens, VERIFICATION_TTL_MS } from '../../../api/console/verification-token';
import { AttemptLimiter, RULES } from '../../../api/console/attempts';
import { TotpService } from '../../../api/console/totp';
import { hashPassword, passwordProblems, verifyPassword } from '../../../api/console/passwords';
import { readRegistration } from '../../../api/console/validation';
import { TooManyRequestsError } from '../../../shared/errors';
import { generate } from 'otplib';
import { isolation, testRedisUrl } from '../../support/engines';

const SECRET = 'unit-secret-unit-secret-unit-secret-0001';

describe('Console token and credential rules', () => {
  let redis: Redis;
  let prefix: string;
  before(() => {
    redis = new Redis(testRedisUrl());
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
    it('locks a subject after the allowed failures, even for a right answer, until the window ends', async () => {
      const limiter = new AttemptLimiter(redis, prefix);
      for (let i = 0; i < RULES.signInAccount.maxFailures; i++) {
        await limiter.assertOpen(RULES.signInAccount, 'victim@example.com');
        await limiter.fail(RULES.signInAccount, 'victim@example.com');
      }
      const err = await limiter.assertOpen(RULES.signInAccount, 'victim@example.com').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(TooManyRequestsError);
      expect((err as TooManyRequestsError).retryAfterSeconds).to.be.within(14 * 60, 15 * 60);
      await limiter.assertOpen(RULES.signInAccount, 'other@example.com');
    });

    it('counts e-mail addresses case-insensitively', async () => {
      const limiter = new AttemptLimiter(redis, prefix);
      for (let i = 0; i < RULES.totp.maxFailures; i++) await limiter.fail(RULES.totp, i % 2 ? 'MiXeD@Example.com' : 'mixed@example.com');
      const err = await limiter.assertOpen(RULES.totp, 'mixed@EXAMPLE.com').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(TooManyRequestsError);
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
      expect(a).to.match(/^scrypt\$/).and.not.equal(b).and.not.contain('Sturdy');
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

    it('require every field', () => {
      expect(Object.keys(readRegistration({}).errors).sort()).to.deep.equal(['company', 'email', 'firstName', 'lastName', 'website']);
    });
  });
});
