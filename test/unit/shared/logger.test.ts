// The log lines' fixed fields (shared/logger.ts): which process on which host wrote them, and the service.
import { expect } from 'chai';
import os from 'node:os';
import { Writable } from 'node:stream';
import { createLogger } from '../../../shared/logger';

describe('log lines', () => {
  it('name the host beside the pid, since pids repeat across hosts (every container has a pid 1)', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    createLogger('liveness-api', 'info', sink).info('ready');
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).to.include({ pid: process.pid, host: os.hostname(), svc: 'liveness-api', msg: 'ready' });
  });
});
