// Known answers through the API, as a client sees them: a live selfie and two spoofs (licensed photos in
// test/fixtures/liveness/known-answers/) get the verdict they deserve from the running worker's fused engine.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';

const dir = path.join(__dirname, '..', '..', 'fixtures', 'liveness', 'known-answers');
const photo = (file: string) => fs.readFileSync(path.join(dir, file));

describe('POST /v1/check/liveness on known live and spoof photos', () => {
  let stack: LivenessStack;
  let key: string;

  before(async () => {
    stack = await startLivenessStack('known-answers');
    key = (await stack.createAccount('starter')).primaryKey;
  });
  after(() => stack.stop());

  it('answers a live selfie with isFakeFace false and a likelihood under 0.05', async () => {
    const res = await stack.check(key, photo('doubango-live-selfie.jpg'));
    expect(res.status).to.equal(200);
    expect(res.body.data.isFakeLikelihood).to.be.lessThan(0.05);
    expect(res.body.data.isFakeFace).to.equal(false);
    expect(res.body.data.reasons).to.deep.equal([]);
  });

  it('answers a printed photo and a tablet replay with isFakeFace true (likelihood above the default 0.15)', async () => {
    for (const file of ['silentface-print-F1.jpg', 'silentface-screen-F2.jpg']) {
      const res = await stack.check(key, photo(file));
      expect(res.status, file).to.equal(200);
      expect(res.body.data.isFakeLikelihood, file).to.be.greaterThan(0.15);
      expect(res.body.data.isFakeFace, file).to.equal(true);
    }
  });
});
