// The in-memory PRelu rewrite (workers/liveness/engine/prelu.ts): the rewritten spoof models must give
// exactly the outputs of the files as shipped, and graphs without PRelu must come back untouched.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { modelEntry } from '../../../models/manifest';
import { openSession, ort } from '../../../workers/runtime/onnx-session';
import { rewritePRelu } from '../../../workers/liveness/engine/prelu';
import { BUILTIN_SPOOF_SPECS } from '../../../workers/liveness/engine/spoof';
import { seededRandom } from '../../../dev/harness/seeded-random';
import { modelsDir } from '../../fixtures/liveness/images';

const bytesOf = (name: string) => fs.readFileSync(path.join(modelsDir, modelEntry(name).file));

describe('PRelu rewrite of the spoof models', function () {
  this.timeout(60_000);

  for (const spec of BUILTIN_SPOOF_SPECS) {
    it(`${spec.name}: every PRelu replaced, outputs bit-identical to the shipped file`, async () => {
      const original = bytesOf(spec.name);
      const { bytes, rewritten } = rewritePRelu(original);
      expect(rewritten).to.equal(33);
      expect(rewritePRelu(bytes).rewritten, 'no PRelu left').to.equal(0);

      const [a, b] = [await openSession(original), await openSession(bytes)];
      const S = spec.inputSize;
      const random = seededRandom(12);
      // Pixel-like inputs (0..255, as the engine feeds them), a dark and a saturated one.
      const inputs = [
        ...[0, 1, 2].map(() => Float32Array.from({ length: 3 * S * S }, () => Math.floor(random() * 256))),
        new Float32Array(3 * S * S).fill(3),
        new Float32Array(3 * S * S).fill(255),
      ];
      for (const data of inputs) {
        const feed = { [a.inputNames[0]!]: new ort.Tensor('float32', data, [1, 3, S, S]) };
        const want = Array.from((await a.run(feed))[a.outputNames[0]!]!.data as Float32Array);
        const got = Array.from((await b.run(feed))[b.outputNames[0]!]!.data as Float32Array);
        expect(got).to.deep.equal(want);
      }
    });
  }

  it('returns bytes it cannot parse unchanged, for onnxruntime to refuse', () => {
    const truncated = bytesOf('silent-face-v2').subarray(0, 1000);
    const { bytes, rewritten } = rewritePRelu(truncated);
    expect(rewritten).to.equal(0);
    expect(bytes).to.equal(truncated);
  });

  it('returns a graph without PRelu unchanged (the detectors)', () => {
    const original = bytesOf('faceplugin-detect');
    const { bytes, rewritten } = rewritePRelu(original);
    expect(rewritten).to.equal(0);
    expect(bytes).to.equal(original);
  });
});
