// Owns running ffmpeg/ffprobe as child processes: arguments only (no shell), stdout collected or streamed,
// stderr kept short for messages, and the process killed when the deadline passes so nothing hangs.
import { spawn } from 'node:child_process';
import { AnalysisBudget, AnalysisTimeoutError } from './analysis-budget';

export interface ChildResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface RunOptions {
  deadline: AnalysisBudget;
  stage: string;
  /** When given, stdout is handed over chunk by chunk instead of being collected. */
  onStdout?: (chunk: Buffer) => void;
  /** Aborting kills the process (a speculative decode whose probe rejected the file). */
  signal?: AbortSignal;
}

const STDERR_LIMIT = 8 * 1024;

export function runChild(command: string, args: string[], opts: RunOptions): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    let timedOut = false;
    let failed: Error | undefined;
    const ms = opts.deadline.remainingMs();
    const timer = Number.isFinite(ms)
      ? setTimeout(
          () => {
            timedOut = true;
            child.kill('SIGKILL');
          },
          Math.max(0, ms),
        )
      : undefined;
    const onAbort = (): void => {
      failed = new Error(`${opts.stage} aborted`);
      child.kill('SIGKILL');
    };
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      if (failed) return;
      if (!opts.onStdout) {
        out.push(chunk);
        return;
      }
      try {
        opts.onStdout(chunk);
      } catch (err) {
        // A consumer error (for example the deadline inside analysis) stops the decoder too.
        failed = err as Error;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk.toString('utf8');
    });
    child.on('error', (err) => {
      if (timer) clearTimeout(timer);
      reject(new Error(`${command} could not be started: ${err.message}`));
    });
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (failed) return reject(failed);
      if (timedOut) return reject(new AnalysisTimeoutError(opts.stage));
      resolve({ code, stdout: Buffer.concat(out), stderr: stderr.slice(0, STDERR_LIMIT) });
    });
  });
}
