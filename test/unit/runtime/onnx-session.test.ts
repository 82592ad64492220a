// The one ONNX session helper: a model opens from a path and from bytes with the same options, and a missing or
// mistyped output is an error naming it rather than an undefined read.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emotionMappingBytes } from '../../../models/emotion/build-mapping';
import { FEATURE_NAMES } from '../../../workers/emotion/engine/features';
import { float32Tensor, openSession, sessionOptions, tensorData } from '../../../workers/runtime/onnx-session';

describe('workers/runtime/onnx-session', () => {
  const F = FEATURE_NAMES.length;
  const input = { features: float32Tensor(new Float32Array(F).fill(0.5), [1, F]) };

  it('opens the same model from a file and from its bytes, giving the same scores', async () => {
    const bytes = emotionMappingBytes();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'onnx-session-'));
    const file = path.join(dir, 'mapping.onnx');
    fs.writeFileSync(file, bytes);
    try {
      const fromFile = await openSession(file, { intraOpThreads: 2 });
      const fromBytes = await openSession(new Uint8Array(bytes));
      const a = tensorData(await fromFile.run(input), 'scores');
      const b = tensorData(await fromBytes.run(input), 'scores');
      expect(Array.from(a)).to.deep.equal(Array.from(b));
      expect(a.length).to.equal(2);
      await Promise.all([fromFile.release(), fromBytes.release()]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names a missing output', async () => {
    const session = await openSession(emotionMappingBytes());
    const out = await session.run(input);
    expect(() => tensorData(out, 'nope')).to.throw('model output "nope" missing');
    await session.release();
  });

  it('takes intra-op threads from the caller and keeps one inter-op thread', () => {
    expect(sessionOptions({ intraOpThreads: 3 })).to.include({ intraOpNumThreads: 3, interOpNumThreads: 1, executionMode: 'sequential' });
    expect(sessionOptions().intraOpNumThreads).to.equal(1);
  });
});
