// Threads the workers start (workers/runtime/threads.ts) compile optimised code on their own thread: Node 20
// aborts the whole process when a thread ends while one of its background compile jobs runs, and the emotion
// analysis pool ends its threads right after warming them up.
import { expect } from 'chai';
import v8 from 'node:v8';
import vm from 'node:vm';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { startThread } from '../../../workers/runtime/threads';

// V8's own probe (natives syntax): true while the calling isolate has a background optimising compiler.
const NATIVE_PROBE = '%IsConcurrentRecompilationSupported()';
const PROBE = `require('node:worker_threads').parentPort.postMessage(require('node:vm').runInThisContext('${NATIVE_PROBE}'))`;

async function probe(worker: Worker): Promise<boolean> {
  const [answer] = (await once(worker, 'message')) as [boolean];
  await worker.terminate();
  return answer;
}

describe('workers/runtime/threads', () => {
  before(() => v8.setFlagsFromString('--allow-natives-syntax'));
  after(() => v8.setFlagsFromString('--no-allow-natives-syntax'));

  it('starts threads without a background compiler, while the main thread keeps its own', async () => {
    expect(await probe(startThread(PROBE, { eval: true }))).to.equal(false);
    expect(vm.runInThisContext(NATIVE_PROBE)).to.equal(true);
  });
});
