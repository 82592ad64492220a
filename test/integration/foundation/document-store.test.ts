import { expect } from 'chai';
import mongoose from 'mongoose';
import { isolation, testMongoUri } from '../../support/engines';

// Every request-path read and every counter update of ours is by `_id` (shared/accounts/credential-digests.ts,
// shared/billing/usage-counters.ts). The embedded FerretDB/SQLite answers those from its `_id` index only with
// our patch (dev/engines/ferretdb-sqlite-id-index.patch); without it each one scans the collection.
describe('the document store answers _id look-ups from the index', () => {
  let conn: mongoose.Connection;

  before(async () => {
    conn = await mongoose.createConnection(testMongoUri(), { dbName: isolation('docstore').dbName }).asPromise();
  });
  after(async () => {
    await conn?.dropDatabase().catch(() => undefined);
    await conn?.close();
  });

  it('finds, updates and deletes one document by _id among many, through the index', async () => {
    const c = conn.db!.collection<{ _id: string; n: number }>('lookups');
    await c.insertMany(Array.from({ length: 500 }, (_, i) => ({ _id: `doc-${i}`, n: i })));

    const plan = JSON.stringify(await c.find({ _id: 'doc-123' }).explain());
    const build = await conn.db!.admin().command({ buildInfo: 1 });
    if (build.ferretdbVersion) {
      expect(plan).to.match(/SEARCH \S+ USING INDEX \S+__id_/, 'FerretDB/SQLite scans: run "bash dev/setup.sh" to build the patched FerretDB');
    } else {
      expect(plan).to.match(/IDHACK|EXPRESS_IXSCAN|IXSCAN/);
    }

    expect((await c.updateOne({ _id: 'doc-123' }, { $inc: { n: 1000 } })).modifiedCount).to.equal(1);
    expect((await c.findOne({ _id: 'doc-123' }))?.n).to.equal(1123);
    expect((await c.findOne({ _id: 'doc-124' }))?.n).to.equal(124);
    expect((await c.deleteOne({ _id: 'doc-123' })).deletedCount).to.equal(1);
    expect(await c.findOne({ _id: 'doc-123' })).to.equal(null);
    expect(await c.countDocuments()).to.equal(499);
  });
});
