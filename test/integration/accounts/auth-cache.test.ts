// The API-key cache against real Redis and the real document store: one database read per key however
// many first calls arrive at once, no read at all for a known key, only the auth fields cached, and an
// account change that a lookup in flight cannot undo by re-caching what it read before. The emotion API's
// tokens go through the same cache: the same promises, and a revocation refused from the next call on.
import { expect } from 'chai';
import mongoose, { type Connection } from 'mongoose';
import type { Redis } from 'ioredis';
import { createModels, ensureIndexes, type Models } from '../../../shared/db/models';
import { AccountService } from '../../../shared/accounts/account-service';
import { ApiKeyService, type AuthenticatedKey } from '../../../shared/accounts/api-keys';
import { EmotionTokenService, type AuthenticatedToken } from '../../../shared/accounts/emotion-tokens';
import { AuthCache } from '../../../shared/accounts/auth-cache';
import { sha256Hex } from '../../../shared/accounts/secrets';
import { systemClock, type Clock } from '../../../shared/billing/month';
import { closeRedis, createRedis, waitUntilReady } from '../../../shared/redis';
import { partitionPrefix } from '../../../shared/redis-partitions';
import { isolation, testMongoUri, testRedisUrl } from '../../support/engines';

describe('API-key authentication cache (Redis) in front of the document store', () => {
  let conn: Connection;
  let models: Models;
  let redis: Redis;
  let prefix: string;
  /** Reads the driver sent, by collection. */
  const reads: Record<string, number> = {};

  before(async () => {
    const iso = isolation('authcache');
    prefix = iso.prefix;
    // Command monitoring counts what really reaches the database, not what the code thinks it asked.
    conn = await mongoose.createConnection(testMongoUri(), { dbName: iso.dbName, monitorCommands: true }).asPromise();
    conn.getClient().on('commandStarted', (e) => {
      if (e.commandName === 'find') reads[String(e.command.find)] = (reads[String(e.command.find)] ?? 0) + 1;
    });
    models = createModels(conn);
    await ensureIndexes(models);
    redis = createRedis(testRedisUrl(), 'producer', 'auth-cache-test');
    await waitUntilReady(redis);
  });
  after(async () => {
    await closeRedis(redis);
    await conn.close();
  });

  const resetReads = () => {
    for (const k of Object.keys(reads)) delete reads[k];
  };

  it('makes one read of the key and one of the account for 50 concurrent first calls, and none once cached', async () => {
    const cache = new AuthCache<AuthenticatedKey>(redis, prefix);
    const accounts = new AccountService(models, systemClock, cache);
    const apiKeys = new ApiKeyService(models, systemClock, accounts, cache);
    const { primaryKey } = await apiKeys.createAccountWithKeys({ email: 'burst@example.com', plan: 'starter' });
    resetReads();
    const first = await Promise.all(Array.from({ length: 50 }, () => apiKeys.authenticate(primaryKey!)));
    expect(first.every((a) => a?.account.plan === 'starter')).to.equal(true);
    expect(reads).to.deep.equal({ credential_digests: 1, api_keys: 1, accounts: 1 });
    resetReads();
    const again = await Promise.all(Array.from({ length: 50 }, () => apiKeys.authenticate(primaryKey!)));
    expect(again.every((a) => a !== null)).to.equal(true);
    expect(reads).to.deep.equal({});
  });

  it('finding 9: caches only the fields authentication needs: no password hash, TOTP secret or contact data', async () => {
    const cache = new AuthCache<AuthenticatedKey>(redis, prefix);
    const accounts = new AccountService(models, systemClock, cache);
    const apiKeys = new ApiKeyService(models, systemClock, accounts, cache);
    const { account, primaryKey } = await apiKeys.createAccountWithKeys({ email: 'secret@example.com', plan: 'standard', firstName: 'Ada' });
    await models.Account.updateOne({ _id: account._id }, { $set: { passwordHash: 'scrypt$abc', totpSecretEnc: 'sealed' } });
    await apiKeys.authenticate(primaryKey!);
    const digest = sha256Hex(primaryKey!);
    const raw = await redis.get(`${partitionPrefix(prefix, digest)}:auth:${digest}`);
    expect(raw).to.be.a('string');
    const cached = JSON.parse(raw!) as AuthenticatedKey;
    expect(Object.keys(cached.account).sort()).to.deep.equal(['_id', 'hardCap', 'monthlyLimit', 'plan', 'scheduledChange', 'status']);
    expect(raw).not.to.match(/scrypt|sealed|secret@example|Ada/);
  });

  it('finding 9: refuses to re-cache a lookup that read the account before a change (the forget tombstone)', async () => {
    const cache = new AuthCache<AuthenticatedKey>(redis, prefix);
    const accounts = new AccountService(models, systemClock, cache);
    const apiKeys = new ApiKeyService(models, systemClock, accounts, cache);
    const { account, primaryKey } = await apiKeys.createAccountWithKeys({ email: 'late@example.com', plan: 'starter' });
    const digest = sha256Hex(primaryKey!);
    // A lookup starts: a miss, remembering the generation it saw ...
    const seen = await cache.get(digest);
    expect(seen.kind).to.equal('miss');
    const before: AuthenticatedKey = {
      account: { _id: account._id, status: 'active', plan: 'starter', monthlyLimit: null, hardCap: false, scheduledChange: null },
      keyId: 'k',
      slot: 'primary',
    };
    // ... the account is suspended meanwhile ...
    await accounts.setStatus(account._id, 'suspended');
    // ... and the late put of the old read is refused, so the next call reads the new state.
    expect(await cache.put(digest, seen.kind === 'miss' ? seen.generation : null, before)).to.equal(false);
    expect((await cache.get(digest)).kind).to.equal('miss');
    let refused: unknown;
    try {
      await apiKeys.authenticate(primaryKey!);
    } catch (err) {
      refused = err;
    }
    expect((refused as { httpStatus?: number })?.httpStatus).to.equal(403);
  });

  it('invalidates at once on an account change and re-caches the new state', async () => {
    const cache = new AuthCache<AuthenticatedKey>(redis, prefix);
    const accounts = new AccountService(models, systemClock, cache);
    const apiKeys = new ApiKeyService(models, systemClock, accounts, cache);
    const { account, primaryKey } = await apiKeys.createAccountWithKeys({ email: 'upgrade@example.com', plan: 'starter' });
    expect((await apiKeys.authenticate(primaryKey!))?.account.plan).to.equal('starter');
    await accounts.changePlan(account._id, 'business');
    expect((await apiKeys.authenticate(primaryKey!))?.account.plan).to.equal('business');
    resetReads();
    expect((await apiKeys.authenticate(primaryKey!))?.account.plan).to.equal('business');
    expect(reads).to.deep.equal({});
  });

  describe('emotion tokens', () => {
    /** The emotion API's wiring (api/emotion/server.ts): the token service reads the account through a cached AccountService. */
    const tokenStack = (clock: Clock = systemClock) => {
      const cache = new AuthCache<AuthenticatedToken>(redis, prefix);
      const accounts = new AccountService(models, clock, cache);
      const tokens = new EmotionTokenService(models, { accountOf: (id) => accounts.current(id), cache, clock });
      return { accounts, tokens };
    };
    const refusal = async (fn: () => Promise<unknown>): Promise<string | null> => {
      try {
        await fn();
        return null;
      } catch (err) {
        return (err as { code?: string }).code ?? String(err);
      }
    };

    it('reads the digest, the token and the account once for 50 concurrent first calls, and nothing once cached', async () => {
      const { accounts, tokens } = tokenStack();
      const account = await accounts.create({ email: 'emotion-burst@example.com', plan: 'starter' });
      const { id, token } = await tokens.create('burst', account._id);
      resetReads();
      const first = await Promise.all(Array.from({ length: 50 }, () => tokens.authenticate(token)));
      expect(first.every((t) => t?._id === id && t.customerId === account._id)).to.equal(true);
      expect(reads).to.deep.equal({ credential_digests: 1, emotion_tokens: 1, accounts: 1 });
      resetReads();
      const again = await Promise.all(Array.from({ length: 50 }, () => tokens.authenticate(token)));
      expect(again.every((t) => t?._id === id)).to.equal(true);
      expect(reads).to.deep.equal({});
    });

    it('refuses a cached token from the next call on after its revocation, suspension or cancellation', async () => {
      const { accounts, tokens } = tokenStack();
      // The console and the operator CLI revoke through their own service instance holding the same cache.
      const dashboard = new EmotionTokenService(models, { cache: new AuthCache<AuthenticatedToken>(redis, prefix) });
      const account = await accounts.create({ email: 'emotion-status@example.com', plan: 'starter' });
      const kept = await tokens.create('kept', account._id);
      const revoked = await tokens.create('revoked', account._id);
      for (const t of [kept, revoked]) expect((await tokens.authenticate(t.token))?._id).to.equal(t.id);
      await dashboard.revoke(revoked.id, account._id);
      expect(await tokens.authenticate(revoked.token)).to.equal(null);
      await accounts.setStatus(account._id, 'suspended');
      expect(await refusal(() => tokens.authenticate(kept.token))).to.equal('account_suspended');
      await accounts.setStatus(account._id, 'active');
      expect((await tokens.authenticate(kept.token))?._id).to.equal(kept.id);
      await accounts.setStatus(account._id, 'cancelled');
      expect(await refusal(() => tokens.authenticate(kept.token))).to.equal('subscription_ended');
    });

    it('re-reads a cached account whose scheduled cancellation has come due (on the 1st, injected clock)', async () => {
      let now = new Date('2026-11-20T12:00:00Z');
      const { accounts, tokens } = tokenStack(() => now);
      const account = await accounts.create({ email: 'emotion-due@example.com', plan: 'starter' });
      const { token } = await tokens.create('due', account._id);
      await accounts.scheduleCancellation(account._id);
      expect((await tokens.authenticate(token))?.customerId).to.equal(account._id);
      now = new Date('2026-12-01T00:00:01Z');
      expect(await refusal(() => tokens.authenticate(token))).to.equal('subscription_ended');
    });
  });
});
