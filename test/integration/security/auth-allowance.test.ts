// The failed-authentication allowance per client address (issue 27): only failures spend it, so a valid
// credential is never refused as a failed authentication, however many calls one address has in flight; wrong
// guesses stay bounded even when sent all at once; IPv6 addresses count by their /64 (IPv4-mapped ones as IPv4),
// on the API guard and on the console's per-address limits alike. Client addresses come through X-Forwarded-For
// from loopback, which the shipped TRUST_PROXY trusts.
import crypto from 'node:crypto';
import { expect } from 'chai';
import { parseConfig } from '../../../shared/config';
import { AttemptLimiter, RULES } from '../../../api/console/auth/attempts';
import { portrait } from '../../../dev/harness/sample-images';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { http } from '../../support/http';
import { admittedWithin } from '../../support/buckets';

const SHIPPED = parseConfig({});
/** test/support/config.ts lifts the brute-force allowance for other files; these tests need the shipped one. */
const SHIPPED_AUTH_LIMITS = {
  AUTH_FAILURE_BURST: String(SHIPPED.AUTH_FAILURE_BURST), // shipped value
  AUTH_FAILURE_RATE_PER_SEC: String(SHIPPED.AUTH_FAILURE_RATE_PER_SEC), // shipped value
  AUTH_PREFIX_FAILURE_BURST: String(SHIPPED.AUTH_PREFIX_FAILURE_BURST), // shipped value
  AUTH_PREFIX_FAILURE_RATE_PER_SEC: String(SHIPPED.AUTH_PREFIX_FAILURE_RATE_PER_SEC), // shipped value
};

const wrongKey = () => `lc_${crypto.randomBytes(32).toString('base64url')}`;

describe('Failed-authentication allowance per client address', function () {
  this.timeout(180_000);
  let stack: LivenessStack;
  let face: Buffer;

  before(async () => {
    stack = await startLivenessStack('auth-allowance', { env: SHIPPED_AUTH_LIMITS });
    face = await portrait();
    // The worker's first job loads its models; the tests below measure the front-end, not that.
    const warm = await stack.createAccount('starter');
    expect((await stack.check(warm.primaryKey, face)).status).to.equal(200);
  });
  after(() => stack.stop());

  const usageFrom = (key: string, address: string) =>
    http(stack.api.port, '/v1/usage', { headers: { 'x-api-key': key, 'x-forwarded-for': address } }).then((r) => r.status);

  describe('valid keys', () => {
    it("answers 60 concurrent GET /v1/usage from one address (a customer's backend, its key never used before) with 60 x 200", async () => {
      const acc = await stack.createAccount('starter');
      const statuses = await Promise.all(Array.from({ length: 60 }, () => usageFrom(acc.primaryKey, '203.0.113.61')));
      expect(
        statuses.filter((s) => s === 200),
        JSON.stringify(statuses),
      ).to.have.length(60);
    });

    it('answers 60 concurrent POST /v1/check/liveness from one address with 60 x 200, none refused for authentication', async () => {
      const acc = await stack.createAccount('starter');
      const results = await Promise.all(Array.from({ length: 60 }, () => stack.check(acc.primaryKey, face, 'jpeg', { 'x-forwarded-for': '203.0.113.60' })));
      const tally = JSON.stringify(results.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.body.error.message}`)));
      // 60 selfies are ~2-3 s of one worker's time: well inside the 10 s budget, so every call is answered.
      expect(
        results.filter((r) => r.status === 200),
        tally,
      ).to.have.length(60);
      // And the address's allowance is whole: as many wrong keys as the shipped burst are still answered 401.
      const wrong = await Promise.all(Array.from({ length: SHIPPED.AUTH_FAILURE_BURST - 1 }, () => usageFrom(wrongKey(), '203.0.113.60')));
      expect(
        wrong.every((s) => s === 401),
        JSON.stringify(wrong),
      ).to.equal(true);
    });
  });

  describe('wrong guesses', () => {
    it('bounds a flood of 400 distinct wrong keys sent at once from one address by the allowance, and then refuses that address whatever it presents', async () => {
      const acc = await stack.createAccount('starter');
      const started = Date.now();
      const statuses = await Promise.all(Array.from({ length: 400 }, () => usageFrom(wrongKey(), '198.51.100.77')));
      const verified = statuses.filter((s) => s === 401).length;
      expect(statuses.filter((s) => s === 429).length, 'the flood is stopped').to.be.greaterThan(0);
      expect(verified, 'wrong keys looked up').to.be.at.most(
        admittedWithin(SHIPPED.AUTH_FAILURE_BURST, SHIPPED.AUTH_FAILURE_RATE_PER_SEC, Date.now() - started),
      );
      // A blocked address is blocked for every credential, so a guesser cannot tell a right guess from a wrong one.
      expect(await usageFrom(acc.primaryKey, '198.51.100.77')).to.equal(429);
      expect(await usageFrom(acc.primaryKey, '198.51.100.78'), 'the next address is not').to.equal(200);
    });
  });

  describe('IPv6', () => {
    it('counts two addresses of one /64 against one allowance, while another /64 keeps its own', async () => {
      const acc = await stack.createAccount('starter');
      const started = Date.now();
      // Spread over two addresses of 2001:db8:7:1::/64, more than one address's allowance.
      const statuses: number[] = [];
      for (let i = 0; i < SHIPPED.AUTH_FAILURE_BURST + 10; i++)
        statuses.push(await usageFrom(wrongKey(), i % 2 ? '2001:db8:7:1::a' : '2001:db8:7:1:ffff:1:2:3'));
      expect(statuses.filter((s) => s === 401).length).to.be.at.most(
        admittedWithin(SHIPPED.AUTH_FAILURE_BURST, SHIPPED.AUTH_FAILURE_RATE_PER_SEC, Date.now() - started),
      );
      expect(statuses.at(-1)).to.equal(429);
      expect(await usageFrom(acc.primaryKey, '2001:db8:7:1::9999'), 'a third address of the /64').to.equal(429);
      expect(await usageFrom(wrongKey(), '2001:db8:7:2::a'), 'the next /64').to.equal(401);
      expect(await usageFrom(acc.primaryKey, '2001:db8:7:2::a')).to.equal(200);
    });

    it('counts an IPv4-mapped IPv6 address as its IPv4 address', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < SHIPPED.AUTH_FAILURE_BURST + 5; i++) statuses.push(await usageFrom(wrongKey(), i % 2 ? '192.0.2.44' : '::ffff:192.0.2.44'));
      expect(statuses.at(-1)).to.equal(429);
      expect(await usageFrom(wrongKey(), '::ffff:192.0.2.45')).to.equal(401);
    });

    it("counts the console's per-address limits (sign-in) by /64 too", async () => {
      const limiter = new AttemptLimiter(stack.api.deps.redis, stack.prefix);
      const rule = RULES.signInAddress;
      for (let i = 0; i < rule.maxFailures; i++) await limiter.take(rule, `2001:db8:9:1::${(i + 1).toString(16)}`);
      let refused: unknown = null;
      await limiter.take(rule, '2001:db8:9:1:abcd::1').catch((err: unknown) => (refused = err));
      expect(refused, 'another address of the same /64 is refused').to.have.property('code', 'too_many_attempts');
      expect(await limiter.take(rule, '2001:db8:9:2::1'), 'the next /64 starts its own count').to.equal(1);
    });
  });
});
