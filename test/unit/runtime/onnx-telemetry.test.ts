// onnxruntime's own telemetry (shared/config.ts, disableOnnxRuntimeTelemetry): a process that opens its sessions
// through workers/runtime/onnx-session.ts writes nothing to its home or temporary folder. onnxruntime 1.30 otherwise
// leaves a device id and an event store under $HOME/.cache and `.ses` in $TMPDIR, one file every worker of a host shares.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultModelsDir, projectRoot } from '../../../shared/paths';

describe('onnxruntime sessions', () => {
  it('leave no telemetry files in the home or temporary folder', function () {
    this.timeout(60_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-ort-'));
    try {
      for (const sub of ['home', 'tmp']) fs.mkdirSync(path.join(dir, sub));
      const model = path.join(defaultModelsDir, 'MiniFASNetV1SE_4.0_80x80.ft.onnx');
      const script = `require(${JSON.stringify(path.join(projectRoot, 'workers/runtime/onnx-session.ts'))}).openSession(${JSON.stringify(model)}).then(() => process.exit(0))`;
      execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
        cwd: projectRoot,
        env: { PATH: process.env.PATH, HOME: path.join(dir, 'home'), TMPDIR: path.join(dir, 'tmp') },
        stdio: 'ignore',
      });
      // tsx's own compile cache (tmp/tsx-*) is the test's loader, not the worker's.
      const left = (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => !f.startsWith(path.join('tmp', 'tsx-')));
      expect(left.sort()).to.deep.equal(['home', 'tmp']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
