// LOCAL_DOCSTORE: which embedded document store `npm start` runs when MONGODB_URI is unset.
import { expect } from 'chai';
import { parseConfig } from '../../../shared/config';
import { describeDocstore } from '../../../dev/engines/local-engines';

describe('LOCAL_DOCSTORE (shared/config.ts)', () => {
  it('defaults to FerretDB on SQLite under var/', () => {
    expect(parseConfig({}).LOCAL_DOCSTORE).to.equal('sqlite');
  });

  it('takes a postgres:// URL for FerretDB on PostgreSQL', () => {
    const url = 'postgres://postgres@127.0.0.1:5432/liveness';
    expect(parseConfig({ LOCAL_DOCSTORE: url }).LOCAL_DOCSTORE).to.equal(url);
    expect(parseConfig({ LOCAL_DOCSTORE: 'postgresql://u@db/x' }).LOCAL_DOCSTORE).to.equal('postgresql://u@db/x');
  });

  it('refuses anything else, naming the key', () => {
    for (const bad of ['mysql://x', 'SQLite', 'postgres://', '']) {
      expect(() => parseConfig({ LOCAL_DOCSTORE: bad }), bad).to.throw(/LOCAL_DOCSTORE|sqlite/);
    }
  });

  it('names the store in the start-up log without the URL password', () => {
    expect(describeDocstore('sqlite')).to.equal('FerretDB on SQLite');
    const text = describeDocstore('postgres://lc:s3cret@127.0.0.1:5432/liveness');
    expect(text).to.equal('FerretDB on PostgreSQL (127.0.0.1:5432/liveness)');
    expect(text).not.to.include('s3cret');
  });
});
