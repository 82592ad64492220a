// Credential look-ups by digest document against the real document store: authentication reads by `_id` only
// (FerretDB 1.x scans on any other filter), a regenerated key stops working at once, a crash between the three
// writes of a regeneration neither admits the replaced key nor locks out the valid one, the start-up migration
// gives old credentials their digests once, and revocation and account deletion take digests away.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import mongoose, { type Connection } from 'mongoose';
import { createModels, ensureIndexes, type Models } from '../../../shared/db/models';
import { AccountService } from '../../../shared/accounts/account-service';
import { ApiKeyService } from '../../../shared/accounts/api-keys';
import { EmotionTokenService } from '../../../shared/accounts/emotion-tokens';
import { backfillCredentialDigests, CredentialDigests } from '../../../shared/accounts/credential-digests';
import { prepareStore } from '../../../shared/db/prepare-store';
import { displayPrefix, generateApiKey, generateToken, sha256Hex } from '../../../shared/accounts/secrets';
import { systemClock } from '../../../shared/billing/month';
import { isolation, testMongoUri } from '../../support/engines';

/** A connection whose `find` commands are recorded (collection and filter), as the driver sent them. */
async function monitoredStore(label: string): Promise<{ conn: Connection; models: Models; finds: Array<{ collection: string; filter: object }> }> {
  const finds: Array<{ collection: string; filter: object }> = [];
  const conn = await mongoose.createConnection(testMongoUri(), { dbName: isolation(label).dbName, monitorCommands: true }).asPromise();
  conn.getClient().on('commandStarted', (e) => {
    if (e.commandName === 'find') finds.push({ collection: String(e.command.find), filter: (e.command.filter ?? {}) as object });
  });
  return { conn, models: createModels(conn), finds };
}

describe('Credential look-ups by digest document', () => {
  let conn: Connection;
  let models: Models;
  let finds: Array<{ collection: string; filter: object }>;

  before(async () => {
    ({ conn, models, finds } = await monitoredStore('digests'));
    await ensureIndexes(models);
  });
  after(async () => {
    await conn.close();
  });

  /** The collections read while `fn` runs, each read checked to filter on `_id` alone (anything else scans). */
  async function readsOf(fn: () => Promise<unknown>): Promise<string[]> {
    finds.length = 0;
    await fn();
    for (const f of finds) expect(Object.keys(f.filter), `filter on ${f.collection}`).to.deep.equal(['_id']);
    return finds.map((f) => f.collection);
  }

  describe('API keys', () => {
    it('authenticates a key reading its digest document, the key and the account by `_id` only', async () => {
      const accounts = new AccountService(models, systemClock);
      const apiKeys = new ApiKeyService(models, systemClock, accounts);
      const { account, primaryKey } = await apiKeys.createAccountWithKeys({ email: 'by-id@example.com', plan: 'starter' });
      let auth: Awaited<ReturnType<ApiKeyService['authenticate']>> = null;
      expect(await readsOf(async () => (auth = await apiKeys.authenticate(primaryKey!)))).to.deep.equal(['credential_digests', 'api_keys', 'accounts']);
      expect(auth!.account._id).to.equal(account._id);
      expect(auth!.slot).to.equal('primary');
    });

    it('answers an unknown key with one `_id` read that finds nothing', async () => {
      const apiKeys = new ApiKeyService(models, systemClock, new AccountService(models, systemClock));
      let auth: unknown = 'not read';
      expect(await readsOf(async () => (auth = await apiKeys.authenticate(generateApiKey())))).to.deep.equal(['credential_digests']);
      expect(auth).to.equal(null);
    });

    it('regenerate: the old key stops working, the new one works, and the old digest is gone', async () => {
      const apiKeys = new ApiKeyService(models, systemClock, new AccountService(models, systemClock));
      const { account, secondaryKey } = await apiKeys.createAccountWithKeys({ email: 'regen@example.com', plan: 'starter' });
      const fresh = await apiKeys.regenerate(account._id, 'secondary');
      expect(await apiKeys.authenticate(secondaryKey!)).to.equal(null);
      expect((await apiKeys.authenticate(fresh))?.slot).to.equal('secondary');
      expect(await models.CredentialDigest.exists({ _id: sha256Hex(secondaryKey!) })).to.equal(null);
    });

    /** A regeneration of the primary key stopped after its first write: the new key's digest document. */
    async function firstWriteOnly(email: string) {
      const apiKeys = new ApiKeyService(models, systemClock, new AccountService(models, systemClock));
      const { account, primaryKey } = await apiKeys.createAccountWithKeys({ email, plan: 'starter' });
      const key = (await models.ApiKey.findOne({ customerId: account._id, slot: 'primary' }).lean())!;
      const replacement = generateApiKey();
      await new CredentialDigests(models).add(sha256Hex(replacement), 'api_key', key._id, account._id);
      return { apiKeys, oldKey: primaryKey!, keyId: key._id, replacement };
    }

    it('a crash after only the first write (the new digest) leaves the old key working and admits no other', async () => {
      const { apiKeys, oldKey, keyId, replacement } = await firstWriteOnly('crash-1@example.com');
      expect((await apiKeys.authenticate(oldKey))?.keyId).to.equal(keyId);
      expect(await apiKeys.authenticate(replacement)).to.equal(null);
    });

    it('a crash after the key write (old digest not yet removed) refuses the replaced key and admits the new one', async () => {
      const { apiKeys, oldKey, keyId, replacement } = await firstWriteOnly('crash-2@example.com');
      await models.ApiKey.updateOne({ _id: keyId }, { $set: { hash: sha256Hex(replacement), prefix: displayPrefix(replacement) } });
      expect(await models.CredentialDigest.exists({ _id: sha256Hex(oldKey) })).not.to.equal(null);
      expect(await apiKeys.authenticate(oldKey)).to.equal(null);
      expect((await apiKeys.authenticate(replacement))?.keyId).to.equal(keyId);
    });

    it('deleting a stale pending account removes its keys digests', async () => {
      const apiKeys = new ApiKeyService(models, systemClock, new AccountService(models, systemClock));
      const { account } = await apiKeys.createAccountWithKeys({ email: 'stale@example.com', plan: 'starter', status: 'pending' });
      const { primaryKey, secondaryKey } = await apiKeys.issueKeys(account._id);
      const digests = [sha256Hex(primaryKey), sha256Hex(secondaryKey)];
      expect(await models.CredentialDigest.countDocuments({ _id: { $in: digests } })).to.equal(2);
      const eightDaysOn = () => new Date(Date.now() + 8 * 86_400_000);
      expect(await new AccountService(models, eightDaysOn).deleteStalePending(7)).to.be.greaterThan(0);
      expect(await models.CredentialDigest.countDocuments({ _id: { $in: digests } })).to.equal(0);
      expect(await apiKeys.authenticate(primaryKey)).to.equal(null);
    });
  });

  describe('emotion tokens', () => {
    it('authenticates a token reading its digest document and the token by `_id` only', async () => {
      const tokens = new EmotionTokenService(models);
      const { id, token } = await tokens.create('by-id');
      let doc: Awaited<ReturnType<EmotionTokenService['authenticate']>> = null;
      expect(await readsOf(async () => (doc = await tokens.authenticate(token)))).to.deep.equal(['credential_digests', 'emotion_tokens']);
      expect(doc!._id).to.equal(id);
      expect(await readsOf(async () => expect(await tokens.authenticate(generateToken())).to.equal(null))).to.deep.equal(['credential_digests']);
    });

    it('revocation refuses the token and removes its digest', async () => {
      const tokens = new EmotionTokenService(models);
      const { id, token } = await tokens.create('revoked');
      await tokens.revoke(id);
      expect(await tokens.authenticate(token)).to.equal(null);
      expect(await models.CredentialDigest.exists({ _id: sha256Hex(token) })).to.equal(null);
    });
  });

  describe('the start-up migration (prepareStore)', () => {
    it('gives keys and live tokens written before the digest index their digests, once, and concurrent runs agree; a forced run catches up', async () => {
      const old = await monitoredStore('digests-migration');
      try {
        // Credentials as the earlier version wrote them: no digest documents.
        const apiKey = generateApiKey();
        const keyId = randomUUID();
        await old.models.Account.create({ _id: 'cust-old', email: 'old@example.com', plan: 'starter', hardCap: false, status: 'active' });
        await old.models.ApiKey.create({ _id: keyId, customerId: 'cust-old', slot: 'primary', hash: sha256Hex(apiKey), prefix: displayPrefix(apiKey) });
        const live = generateToken();
        const revoked = generateToken();
        await old.models.EmotionToken.create({ _id: 'tok-live', name: 'live', hash: sha256Hex(live), prefix: displayPrefix(live) });
        await old.models.EmotionToken.create({
          _id: 'tok-gone',
          name: 'gone',
          hash: sha256Hex(revoked),
          prefix: displayPrefix(revoked),
          revokedAt: new Date(),
        });
        const apiKeys = new ApiKeyService(old.models, systemClock, new AccountService(old.models, systemClock));
        const tokens = new EmotionTokenService(old.models);
        // No scan falls back for a missing digest.
        expect(await apiKeys.authenticate(apiKey)).to.equal(null);

        // Two front-ends starting at once both run it.
        const runs = await Promise.all([backfillCredentialDigests(old.models), backfillCredentialDigests(old.models)]);
        expect(runs.reduce((n, r) => n + r.added, 0)).to.equal(2);
        expect((await apiKeys.authenticate(apiKey))?.keyId).to.equal(keyId);
        expect((await tokens.authenticate(live))?._id).to.equal('tok-live');
        expect(await tokens.authenticate(revoked)).to.equal(null);

        // The migrations' own marks live in this collection too (prepareStore adds the subscription-id one).
        const digests = () => old.models.CredentialDigest.countDocuments({ kind: { $ne: 'mark' } });
        const count = await digests();
        expect(await backfillCredentialDigests(old.models)).to.deep.equal({ added: 0, skipped: true });
        await prepareStore(old.models);
        expect(await digests()).to.equal(count);

        // An instance of the earlier version writes a key after the mark (a rolling upgrade): the operator's forced run.
        const late = generateApiKey();
        await old.models.ApiKey.create({ _id: 'key-late', customerId: 'cust-old', slot: 'secondary', hash: sha256Hex(late), prefix: displayPrefix(late) });
        expect(await backfillCredentialDigests(old.models, true)).to.deep.equal({ added: 1, skipped: false });
        expect((await apiKeys.authenticate(late))?.keyId).to.equal('key-late');
      } finally {
        await old.conn.close();
      }
    });
  });
});
