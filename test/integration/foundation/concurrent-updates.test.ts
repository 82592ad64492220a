import { expect } from 'chai';
import mongoose from 'mongoose';
import { isolation, testMongoUri } from '../../support/engines';

// Each update of one document is atomic on its own (MongoDB's guarantee, which shared/db/models.ts relies on). The
// embedded FerretDB 1.24 reads a document, changes it in Go and writes it back whole in a separate transaction, so
// concurrent updates undid each other (50 `$set`s of 50 fields kept 11) until our patch serialised them
// (dev/engines/ferretdb-serialise-updates.patch; docs/reliability.md, "Each update is atomic per document").
describe('the document store applies concurrent updates of one document atomically', () => {
  const N = 50;
  const neighbours = Array.from({ length: 20 }, (_, i) => `neighbour-${i}`);
  let conn: mongoose.Connection;
  let c: mongoose.mongo.Collection<{ _id: string; n?: number; seq?: number; holder?: number | null; state?: string; untouched?: boolean }>;

  before(async () => {
    // A connection per update in flight, so the store really receives them at once.
    conn = await mongoose.createConnection(testMongoUri(), { dbName: isolation('concurrent').dbName, maxPoolSize: N }).asPromise();
    c = conn.db!.collection('docs');
    // Neighbours, so the document is found among others (as an account is) and none of them is touched.
    await c.insertMany(neighbours.map((_id) => ({ _id, untouched: true })));
  });
  after(async () => {
    await conn?.dropDatabase().catch(() => undefined);
    await conn?.close();
  });

  it(`keeps all of ${N} concurrent $sets of ${N} different fields`, async () => {
    await c.insertOne({ _id: 'fields' });
    const results = await Promise.all(Array.from({ length: N }, (_, i) => c.updateOne({ _id: 'fields' }, { $set: { [`f${i}`]: i } })));
    expect(results.map((r) => r.modifiedCount)).to.deep.equal(Array(N).fill(1));
    const doc: Record<string, unknown> | null = await c.findOne({ _id: 'fields' });
    const missing = Array.from({ length: N }, (_, i) => `f${i}`).filter((f, i) => doc?.[f] !== i);
    expect(missing, `lost (${N - missing.length} of ${N} kept)`).to.deep.equal([]);
  });

  it(`counts ${N} concurrent $inc of 1 as ${N}`, async () => {
    await c.insertOne({ _id: 'counter', n: 0 });
    await Promise.all(Array.from({ length: N }, () => c.updateOne({ _id: 'counter' }, { $inc: { n: 1 } })));
    expect((await c.findOne({ _id: 'counter' }))?.n).to.equal(N);
  });

  it(`gives ${N} concurrent findOneAndUpdate calls each its own step, 1 to ${N}`, async () => {
    await c.insertOne({ _id: 'sequence', seq: 0 });
    const docs = await Promise.all(Array.from({ length: N }, () => c.findOneAndUpdate({ _id: 'sequence' }, { $inc: { seq: 1 } }, { returnDocument: 'after' })));
    const seen = docs.map((d) => d?.seq).sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(seen).to.deep.equal(Array.from({ length: N }, (_, i) => i + 1));
    expect((await c.findOne({ _id: 'sequence' }))?.seq).to.equal(N);
  });

  it(`lets exactly one of ${N} concurrent conditional updates (compare-and-set) through`, async () => {
    await c.insertOne({ _id: 'claim', holder: null });
    const results = await Promise.all(Array.from({ length: N }, (_, i) => c.updateOne({ _id: 'claim', holder: null }, { $set: { holder: i } })));
    expect(results.filter((r) => r.modifiedCount === 1)).to.have.length(1);
    const winner = results.findIndex((r) => r.modifiedCount === 1);
    expect((await c.findOne({ _id: 'claim' }))?.holder).to.equal(winner);
  });

  it('never applies both a conditional delete and a conditional update that race for one document', async () => {
    const ids = Array.from({ length: N / 2 }, (_, i) => `pending-${i}`);
    await c.insertMany(ids.map((_id) => ({ _id, state: 'pending' })));
    const outcomes = await Promise.all(
      ids.map(async (_id) => {
        const [deleted, updated] = await Promise.all([
          c.deleteOne({ _id, state: 'pending' }),
          c.updateOne({ _id, state: 'pending' }, { $set: { state: 'done' } }),
        ]);
        return { _id, deleted: deleted.deletedCount, updated: updated.modifiedCount, after: await c.findOne({ _id }) };
      }),
    );
    for (const o of outcomes) {
      // Either order is right; a delete of a document the update had already taken out of its filter is not.
      expect(o.deleted + o.updated, `${o._id}: one of the two applies`).to.equal(1);
      expect(o.after, o._id).to.deep.equal(o.updated === 1 ? { _id: o._id, state: 'done' } : null);
    }
    expect(await c.countDocuments({ _id: { $in: neighbours }, untouched: true }), 'the neighbours are untouched').to.equal(neighbours.length);
  });
});
