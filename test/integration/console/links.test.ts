import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createRedis } from '../../../shared/redis';
import { HmacRegistrationSigner, newLocalSubscription, REGISTRATION_TOKEN_TTL_MS, registrationUrl } from '../../../api/console/links/registration-token';
import { PasswordResetTokens } from '../../../api/console/links/password-reset';
import { VERIFICATION_TTL_MS, VerificationTokens } from '../../../api/console/links/verification-token';
import { isolation, testRedisUrl } from '../../support/engines';

const SECRET = 'unit-secret-unit-secret-unit-secret-0002';

describe('Console tokens: registration links and verification links', () => {
  describe('registration link (marketplace subscription)', () => {
    let now = Date.UTC(2026, 10, 23, 12);
    const signer = new HmacRegistrationSigner(SECRET, () => now);

    it('is valid for a week to the millisecond, then expired', () => {
      const sub = newLocalSubscription('standard');
      const token = signer.sign(sub);
      now += REGISTRATION_TOKEN_TTL_MS;
      expect(signer.verify(token)).to.deep.equal({ ok: true, subscription: sub });
      now += 1;
      expect(signer.verify(token)).to.deep.equal({ ok: false, reason: 'expired' });
    });

    it('refuses a token whose plan is not a plan, however well signed', () => {
      const token = signer.sign({ marketplaceAccountId: 'a', subscriptionId: 'b', plan: 'premium' as never });
      expect(signer.verify(token)).to.deep.equal({ ok: false, reason: 'invalid' });
    });

    it('makes fresh marketplace IDs for a local subscription and a link under /console/register', () => {
      const a = newLocalSubscription('free');
      const b = newLocalSubscription('free');
      expect(a.subscriptionId).to.not.equal(b.subscriptionId);
      expect(a.marketplaceAccountId).to.match(/^mkt-acct-/);
      expect(registrationUrl('https://example.com//', 'a+b/c')).to.equal('https://example.com/console/register?token=a%2Bb%2Fc');
    });
  });

  describe('verification link (e-mail)', () => {
    let redis: Redis;
    let prefix: string;
    let now = Date.UTC(2026, 10, 23, 12);
    before(() => {
      redis = createRedis(testRedisUrl(), 'worker');
      prefix = isolation('unit-verification').prefix;
    });
    after(async () => redis.quit());

    it('is valid for 24 hours to the millisecond, and then still says whose it was', async () => {
      const tokens = new VerificationTokens(SECRET, redis, prefix, () => now);
      const token = tokens.issue('cust-1', 'a@example.com');
      now += VERIFICATION_TTL_MS;
      expect(await tokens.check(token)).to.include({ ok: true, customerId: 'cust-1', email: 'a@example.com' });
      now += 1;
      expect(await tokens.check(token)).to.deep.equal({ ok: false, reason: 'expired', customerId: 'cust-1', email: 'a@example.com' });
    });

    it('is used once: the first consume wins, later checks say used', async () => {
      const tokens = new VerificationTokens(SECRET, redis, prefix, () => now);
      const token = tokens.issue('cust-2', 'b@example.com');
      const first = await tokens.check(token);
      if (!first.ok) throw new Error('a fresh link must be valid');
      expect(await tokens.check(token)).to.include({ ok: true }); // checking does not use it up
      expect(await Promise.all([tokens.consume(first.nonce), tokens.consume(first.nonce)])).to.have.members([true, false]);
      expect(await tokens.check(token)).to.include({ ok: false, reason: 'used' });
    });

    it('refuses a token signed for another purpose or with another secret', async () => {
      const tokens = new VerificationTokens(SECRET, redis, prefix, () => now);
      const registration = new HmacRegistrationSigner(SECRET, () => now).sign(newLocalSubscription('free'));
      expect(await tokens.check(registration)).to.deep.equal({ ok: false, reason: 'invalid' });
      const other = new VerificationTokens('other-secret-other-secret-other-secret-1', redis, prefix, () => now);
      expect(await tokens.check(other.issue('cust-3', 'c@example.com'))).to.deep.equal({ ok: false, reason: 'invalid' });
    });
  });

  describe('links issued before the one signed-token class (same wire format, same keys)', () => {
    // Minted by the per-purpose classes this module replaced, with this secret and this clock.
    const OLD_SECRET = 'fixture-app-secret-0123456789abcdef';
    const at = () => 1_800_000_000_000;
    const REGISTRATION =
      'eyJ2IjoxLCJtYWkiOiJta3QtYWNjdC1maXh0dXJlIiwic3ViIjoibWt0LXN1Yi1maXh0dXJlIiwicGxhbiI6InN0YXJ0ZXIiLCJleHAiOjE4MDA2MDQ4MDAwMDB9.pBFIb7UMyZeGbmOiUOoS4FaqVNF3B9i8KNUl8sZ0j4c';
    const VERIFICATION =
      'eyJ2IjoxLCJjaWQiOiJjdXNfZml4dHVyZSIsImVtIjoiYUBleGFtcGxlLmNvbSIsImV4cCI6MTgwMDA4NjQwMDAwMCwibiI6Im5vbmNlLWZpeHR1cmUtMSJ9.E8FHo8J9i3AChLRTip7fmea2uj-_aC0IgeMFXRyBgWY';
    const RESET =
      'eyJ2IjoxLCJjaWQiOiJjdXNfZml4dHVyZSIsImV4cCI6MTgwMDAwMzYwMDAwMCwibiI6Im5vbmNlLWZpeHR1cmUtMiIsInB3IjoicWRPRTdaYVBHOUEtTjlRYyJ9.7MwikPxmpuZIZ_DrQeOXI-zK7fLs66XcoKGHzIZuy8E';
    let redis: Redis;
    let prefix: string;
    before(() => {
      redis = createRedis(testRedisUrl(), 'worker');
      prefix = isolation('unit-old-links').prefix;
    });
    after(async () => redis.quit());

    it('still verifies a registration link', () => {
      expect(new HmacRegistrationSigner(OLD_SECRET, at).verify(REGISTRATION)).to.deep.equal({
        ok: true,
        subscription: { marketplaceAccountId: 'mkt-acct-fixture', subscriptionId: 'mkt-sub-fixture', plan: 'starter' },
      });
    });

    it('still verifies an e-mail verification link', async () => {
      const tokens = new VerificationTokens(OLD_SECRET, redis, prefix, at);
      expect(await tokens.check(VERIFICATION)).to.deep.equal({ ok: true, customerId: 'cus_fixture', email: 'a@example.com', nonce: 'nonce-fixture-1' });
    });

    it('still verifies a password-reset link against the password it replaces', async () => {
      const tokens = new PasswordResetTokens(OLD_SECRET, redis, prefix, at);
      expect(await tokens.check(RESET, async () => '$scrypt$fixture-hash')).to.deep.equal({ ok: true, customerId: 'cus_fixture', nonce: 'nonce-fixture-2' });
      expect(await tokens.check(RESET, async () => '$scrypt$another-hash')).to.deep.equal({ ok: false, reason: 'used' });
    });
  });
});
