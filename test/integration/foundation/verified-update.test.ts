// The read-back that marketplace events and credential changes answer after (shared/db/verified-update.ts):
// a write is reported kept only when the document shows it, and one the store does not keep is written again,
// then refused with 503, never reported done.
import { expect } from 'chai';
import mongoose from 'mongoose';
import { isolation, testMongoUri } from '../../support/engines';
import { updateVerified } from '../../../shared/db/verified-update';
import { ServiceUnavailableError } from '../../../shared/errors';
import { createModels } from '../../../shared/db/models';
import { AccountService } from '../../../shared/accounts/account-service';
import { ConsoleCredentials } from '../../../shared/accounts/console-credentials';

describe('updateVerified: a write is reported kept only when the document shows it', () => {
  let conn: mongoose.Connection;
  type Shape = { _id: string; name: string; n: number; at: Date | null; tags: string[] };
  let Doc: mongoose.Model<Shape>;
  const writes: string[] = [];

  before(async () => {
    conn = await mongoose.createConnection(testMongoUri(), { dbName: isolation('verified').dbName }).asPromise();
    const schema = new mongoose.Schema<Shape>(
      // `name` is stored lower-cased whatever is written: a write the store never keeps as sent.
      { _id: String, name: { type: String, lowercase: true }, n: Number, at: { type: Date, default: null }, tags: [String] },
      { versionKey: false },
    );
    Doc = conn.model('VerifiedDoc', schema);
    conn.set('debug', (collection: string, method: string) => {
      if (collection === Doc.collection.name && method === 'updateOne') writes.push(method);
    });
  });
  after(async () => {
    await conn?.dropDatabase().catch(() => undefined);
    await conn?.close();
  });

  it('answers "kept" after one write that the document shows, dates and arrays included', async () => {
    await Doc.create({ _id: 'a', name: 'x', n: 1, tags: [] });
    writes.length = 0;
    const at = new Date('2026-12-06T02:00:00.123Z');
    expect(await updateVerified(Doc, { _id: 'a' }, { n: 2, at, tags: ['p', 'q'] })).to.equal('kept');
    expect(writes).to.have.length(1);
    expect(await Doc.findById('a').lean()).to.deep.include({ n: 2, at, tags: ['p', 'q'] });
  });

  it('answers "unmatched" when the guard no longer holds, and writes nothing', async () => {
    await Doc.create({ _id: 'b', name: 'x', n: 5, tags: [] });
    expect(await updateVerified(Doc, { _id: 'b', n: 4 }, { n: 6 })).to.equal('unmatched');
    expect((await Doc.findById('b').lean())?.n).to.equal(5);
  });

  it('writes again while the document does not show the write, then refuses with 503 store_write_lost', async () => {
    await Doc.create({ _id: 'c', name: 'x', n: 0, tags: [] });
    writes.length = 0;
    let refused: unknown = null;
    try {
      await updateVerified(Doc, { _id: 'c' }, { name: 'MIXED Case' });
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(ServiceUnavailableError);
    expect((refused as ServiceUnavailableError).code).to.equal('store_write_lost');
    expect(writes, 'five writes, each read back').to.have.length(5);
  });

  it("a password change made while the console writes the same account is kept (the old password's hash is gone)", async () => {
    const models = createModels(conn);
    const accounts = new AccountService(models, () => new Date());
    const credentials = new ConsoleCredentials(models, () => new Date());
    for (let round = 0; round < 8; round++) {
      const account = await accounts.create({ email: `owner-${round}@example.com`, plan: 'starter' });
      await credentials.setPassword(account._id, 'scrypt$old', 'changed');
      let changed = false;
      const lanes = Array.from({ length: 3 }, async (_, lane) => {
        for (let i = lane; !changed; i++) await accounts.setUsageAlerts(account._id, i % 2 === 0);
      });
      await new Promise((r) => setTimeout(r, 20));
      await credentials.setPassword(account._id, 'scrypt$new', 'changed');
      changed = true;
      await Promise.all(lanes);
      expect((await accounts.get(account._id))?.passwordHash, `round ${round}`).to.equal('scrypt$new');
    }
  });
});
