import { expect } from 'chai';
import mongoose from 'mongoose';
import { isolation, testMongoUri } from '../../support/engines';
import { createModels } from '../../../shared/db/models';
import { prepareStore } from '../../../shared/db/prepare-store';
import { AccountService } from '../../../shared/accounts/account-service';

// Our reads and conditional updates select by `_id` or by an indexed field (shared/db/models.ts). The embedded
// FerretDB/SQLite answers those from its indexes only with our patch (dev/engines/ferretdb-sqlite-index-lookups.patch);
// without it each one decodes every document of the collection (1.4 s for 20,000 API keys).
describe('the document store answers look-ups from its indexes', () => {
  let conn: mongoose.Connection;
  let ferretDb = false;

  before(async () => {
    conn = await mongoose.createConnection(testMongoUri(), { dbName: isolation('docstore').dbName }).asPromise();
    ferretDb = !!(await conn.db!.admin().command({ buildInfo: 1 })).ferretdbVersion;
  });
  after(async () => {
    await conn?.dropDatabase().catch(() => undefined);
    await conn?.close();
  });

  async function expectIndexUsed(c: mongoose.mongo.Collection<never>, filter: object): Promise<void> {
    const plan = JSON.stringify(await c.find(filter).explain());
    if (ferretDb) expect(plan).to.match(/SEARCH \S+ USING INDEX/, `${JSON.stringify(filter)}: a scan (run "bash dev/setup.sh" to build the patched FerretDB)`);
    else expect(plan).to.match(/IDHACK|EXPRESS_IXSCAN|IXSCAN/);
  }

  it('finds, updates and deletes one document by _id among many, alone or with other conditions, through the index', async () => {
    const c = conn.db!.collection<{ _id: string; n: number }>('lookups');
    await c.insertMany(Array.from({ length: 500 }, (_, i) => ({ _id: `doc-${i}`, n: i })));

    await expectIndexUsed(c as never, { _id: 'doc-123' });
    await expectIndexUsed(c as never, { _id: 'doc-123', n: 123 });
    expect((await c.updateOne({ _id: 'doc-123' }, { $inc: { n: 1000 } })).modifiedCount).to.equal(1);
    expect((await c.findOne({ _id: 'doc-123' }))?.n).to.equal(1123);
    expect((await c.findOne({ _id: 'doc-124' }))?.n).to.equal(124);
    // A condition beside _id still decides: the index only narrows the candidates.
    expect((await c.updateOne({ _id: 'doc-124', n: 999 }, { $set: { n: 0 } })).matchedCount).to.equal(0);
    expect((await c.updateOne({ _id: 'doc-124', n: 124 }, { $set: { n: 0 } })).matchedCount).to.equal(1);
    expect((await c.deleteOne({ _id: 'doc-123' })).deletedCount).to.equal(1);
    expect(await c.findOne({ _id: 'doc-123' })).to.equal(null);
    expect(await c.countDocuments()).to.equal(499);
  });

  it('finds documents by equality on indexed fields (compound prefixes too), whatever characters the value holds', async () => {
    const c = conn.db!.collection<{ _id: string; owner: string; slot: string; email: string; n: number }>('by_field');
    await c.createIndex({ email: 1 }, { unique: true });
    await c.createIndex({ owner: 1, slot: 1 });
    const awkward = [
      'plain@example.com',
      'a&b@example.com',
      '<tag>@example.com',
      'quote"d@example.com',
      "o'brien@example.com",
      'back\\slash@example.com',
      'café@exämple.com',
      '😀@example.com',
      'tab\there@example.com',
    ];
    await c.insertMany(
      Array.from({ length: 300 }, (_, i) => ({
        _id: `d${i}`,
        owner: `owner-${i % 50}`,
        slot: i % 2 ? 'primary' : 'secondary',
        email: awkward[i] ?? `user-${i}@example.com`,
        n: i,
      })),
    );

    for (const [i, email] of awkward.entries()) {
      expect((await c.findOne({ email }))?._id, email).to.equal(`d${i}`);
    }
    await expectIndexUsed(c as never, { email: 'a&b@example.com' });
    await expectIndexUsed(c as never, { owner: 'owner-7' });
    await expectIndexUsed(c as never, { owner: 'owner-7', slot: 'primary' });
    expect((await c.find({ owner: 'owner-7' }).toArray()).map((d) => d.n).sort((a, b) => a - b)).to.deep.equal([7, 57, 107, 157, 207, 257]);
    expect((await c.find({ owner: 'owner-7', slot: 'primary' }).toArray()).map((d) => d.n).sort((a, b) => a - b)).to.deep.equal([7, 57, 107, 157, 207, 257]);
    expect(await c.countDocuments({ owner: 'owner-7', slot: 'secondary' })).to.equal(0);
    expect(await c.countDocuments({ owner: 'owner-8', n: { $gte: 100 } })).to.equal(4);
    expect(await c.findOne({ email: 'nobody@example.com' })).to.equal(null);
    expect((await c.updateOne({ owner: 'owner-9', slot: 'primary', n: 59 }, { $set: { n: -59 } })).matchedCount).to.equal(1);
    expect((await c.findOne({ _id: 'd59' }))?.n).to.equal(-59);
  });

  it('finds an account by its marketplace subscription id through an index (the registration link and every marketplace event)', async () => {
    const models = createModels(conn);
    await prepareStore(models);
    const accounts = new AccountService(models, () => new Date());
    for (let i = 0; i < 200; i++) {
      await accounts.create({ email: `sub-${i}@example.com`, plan: 'starter', marketplace: { accountId: 'mkt-acct', subscriptionId: `mkt-sub-${i}` } });
    }
    await accounts.create({ email: 'no-subscription@example.com', plan: 'free' });
    // An account written before the top-level id existed: the start-up backfill gives it one.
    await models.Account.collection.insertOne({
      _id: 'written-before',
      email: 'before@example.com',
      plan: 'standard',
      hardCap: false,
      status: 'active',
      marketplace: { accountId: 'mkt-acct', subscriptionId: 'mkt-sub-before' },
    } as never);
    await models.CredentialDigest.deleteOne({ _id: 'backfill:account-subscription-ids:v1' });
    await prepareStore(models);

    // The filter the service really sends, as the driver saw it.
    const sent: object[] = [];
    conn.set('debug', (collection: string, method: string, filter: object) => {
      if (collection === 'accounts' && method === 'findOne') sent.push(filter);
    });
    try {
      expect((await accounts.getBySubscription('mkt-sub-123'))?.email).to.equal('sub-123@example.com');
      expect((await accounts.getBySubscription('mkt-sub-before'))?._id).to.equal('written-before');
      expect(await accounts.getBySubscription('mkt-sub-nobody')).to.equal(null);
    } finally {
      conn.set('debug', false);
    }
    expect(sent).to.have.length(3);
    await expectIndexUsed(models.Account.collection as never, sent[0]!);
  });

  it("the console's look-ups go through indexes: an account's tokens and keys, a token's month documents, audit entries", async () => {
    const models = createModels(conn);
    await prepareStore(models);
    await models.EmotionToken.insertMany(
      Array.from({ length: 200 }, (_, i) => ({ _id: `tok-${i}`, name: `t${i}`, customerId: `cust-${i % 20}`, hash: `h${i}`, prefix: 'p' })),
    );
    await models.UsageCounter.insertMany(
      Array.from({ length: 200 }, (_, i) => {
        const month = `2026-${String((i % 4) + 1).padStart(2, '0')}`;
        return { _id: `emotion:tok-${Math.floor(i / 4)}:${month}`, service: 'emotion', owner: `tok-${Math.floor(i / 4)}`, month };
      }),
    );
    await expectIndexUsed(models.EmotionToken.collection as never, { customerId: 'cust-3' });
    await expectIndexUsed(models.UsageCounter.collection as never, { owner: 'tok-7', service: 'emotion' });
    // And what every signed-in page reads beside them: the account's keys, its audit entries of one action.
    await models.Audit.insertMany(Array.from({ length: 100 }, (_, i) => ({ customerId: `cust-${i % 10}`, action: 'console.sign_in', at: new Date() })));
    await expectIndexUsed(models.ApiKey.collection as never, { customerId: 'cust-3' });
    await expectIndexUsed(models.Audit.collection as never, { customerId: 'cust-3', action: 'console.sign_in' });
  });

  it('our models keep no arrays in indexed fields (the patched engine finds a string, not an array holding it)', () => {
    for (const model of Object.values(createModels(conn))) {
      for (const [keys] of model.schema.indexes()) {
        for (const field of Object.keys(keys)) {
          expect(model.schema.path(field)?.instance, `${model.modelName}.${field}`).to.not.equal('Array');
        }
      }
      model.schema.eachPath((field: string, type: mongoose.SchemaType) => {
        const options = type.options as { unique?: boolean; index?: boolean };
        if (options.unique || options.index) expect(type.instance, `${model.modelName}.${field}`).to.not.equal('Array');
      });
    }
  });
});
