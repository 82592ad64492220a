// Runs the real entry points as separate OS processes (the way npm start and deployments do), for tests
// and benchmarks that need process boundaries: SIGTERM drains, kill -9, scaling, Prometheus scrapes.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../engines/local-engines';
import { projectRoot } from '../../shared/paths';

export type ServiceKind = 'liveness-api' | 'emotion-api' | 'liveness-worker' | 'emotion-worker';

const ENTRY: Record<ServiceKind, string> = {
  'liveness-api': 'api/liveness/main.ts',
  'emotion-api': 'api/emotion/main.ts',
  'liveness-worker': 'workers/liveness/main.ts',
  'emotion-worker': 'workers/emotion/main.ts',
};

export interface ServiceProcess {
  kind: ServiceKind;
  proc: ChildProcess;
  /** The API port, or the worker's metrics/health port. */
  port: number;
  /** Every log line the process printed (JSON lines from pino). */
  logs: string[];
  /** Resolves when /readyz answers 200. */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** SIGKILL: no cleanup at all. */
  kill9(): Promise<void>;
  exited: Promise<number | null>;
}

export function spawnService(kind: ServiceKind, env: Record<string, string>): Promise<ServiceProcess> {
  const portVar = kind === 'liveness-api' ? 'LIVENESS_PORT' : kind === 'emotion-api' ? 'EMOTION_PORT' : 'WORKER_METRICS_PORT';
  return spawnEntry(ENTRY[kind], kind, portVar, env);
}

/** Any project entry point (a test-only worker too), with its HTTP port on a free port in `portVar`. */
export async function spawnEntry(entry: string, kind: ServiceKind, portVar: string, env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(projectRoot, entry)], {
    cwd: projectRoot,
    // Spawned services get the failure allowance lifted: tests send many deliberate wrong keys from 127.0.0.1.
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      AUTH_FAILURE_BURST: '100000', // lifted: the tests' deliberate wrong keys (above)
      AUTH_PREFIX_FAILURE_BURST: '100000', // the same, per credential prefix
      ...env,
      [portVar]: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = collectLines(proc);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    kind,
    proc,
    port,
    logs,
    exited,
    async ready(timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        if (proc.exitCode !== null) throw new Error(`${entry} exited (${proc.exitCode}): ${logs.slice(-5).join('\n')}`);
        try {
          const res = await fetch(`http://127.0.0.1:${port}/readyz`);
          if (res.status === 200) return;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${kind} not ready within ${timeoutMs} ms: ${logs.slice(-5).join('\n')}`);
    },
    async stop(timeoutMs = 30_000) {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill9() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * The API process's own measure of a request, from its access log ("request" line, arrival to finish): the
 * time the test process took to send and read (and its own stalls on a busy machine) are not in it.
 */
export async function serverMs(api: ServiceProcess, requestId: string | null): Promise<number> {
  if (!requestId) throw new Error('the answer carried no X-Request-Id');
  const look = (): number | undefined => {
    for (const line of api.logs) {
      if (!line.includes(requestId)) continue;
      try {
        const entry = JSON.parse(line) as { msg?: string; requestId?: string; ms?: number };
        if (entry.msg === 'request' && entry.requestId === requestId && typeof entry.ms === 'number') return entry.ms;
      } catch {
        // not a JSON log line
      }
    }
    return undefined;
  };
  // The access log line is written when the response finishes, which can reach the pipe after the client has the answer.
  const until = Date.now() + 10_000;
  for (let ms = look(); ; ms = look()) {
    if (ms !== undefined) return ms;
    if (Date.now() > until) throw new Error(`no access log line for request ${requestId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Every whole line a child prints on stdout and stderr, as it arrives: a pipe chunk can end inside a JSON log line,
 * which is kept until its newline arrives.
 */
export function collectLines(proc: ChildProcess): string[] {
  const logs: string[] = [];
  const collector = () => {
    let partial = '';
    return (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop()!;
      logs.push(...lines.filter(Boolean));
    };
  };
  proc.stdout?.on('data', collector());
  proc.stderr?.on('data', collector());
  return logs;
}
