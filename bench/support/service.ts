// Owns the field benchmark's service under test: `dev/start.ts` (what `npm start` runs) as a child process
// with its own VAR_DIR, so it starts the embedded Redis (empty: a cold cache) and FerretDB on the copied seed,
// then the APIs and workers with the shipped defaults. Collects every process's log lines (they inherit the
// supervisor's stdout) and samples the resident memory of every process of the tree.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { freePort } from '../../dev/engines/local-engines';
import { collectLines } from '../../dev/harness/processes';
import { readLocalState, type LocalState } from '../../shared/local-state';
import { entryPoint, projectRoot } from '../../shared/paths';
import { processTreeCpuMs } from './cpu';

export interface Service {
  livenessUrl: string;
  state: LocalState;
  logs: string[];
  /** Peak RSS (MiB) per process, by role, since the last resetPeaks(). */
  peaks(): Map<string, number>;
  resetPeaks(): void;
  /** CPU time (ms) each process has used so far, by the same labels as peaks(): subtract two readings for a phase. */
  cpuMs(): Map<string, number>;
  stop(): Promise<void>;
}

/** A process's role from its command line (what the RSS table names). */
function roleOf(cmdline: string): string | null {
  if (cmdline.includes('api/liveness/main')) return 'liveness API';
  if (cmdline.includes('api/emotion/main')) return 'emotion API';
  if (cmdline.includes('workers/liveness/main')) return 'liveness worker';
  if (cmdline.includes('workers/emotion/main')) return 'emotion worker';
  if (cmdline.includes('redis-server')) return 'Redis';
  if (cmdline.includes('ferretdb')) return 'FerretDB';
  if (cmdline.includes('dev/start')) return 'supervisor';
  return null;
}

function read(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** pid -> parent pid of every process (from /proc/<pid>/stat). */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = read(`/proc/${name}/stat`);
    const m = /\) \S+ (\d+)/.exec(stat);
    if (m) out.set(Number(name), Number(m[1]));
  }
  return out;
}

/** The pids of the tree under `root` (root included). */
export function tree(root: number): number[] {
  const pp = parents();
  const found = [root];
  for (let i = 0; i < found.length; i++) for (const [pid, ppid] of pp) if (ppid === found[i]) found.push(pid);
  return found;
}

export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(read(`/proc/${pid}/status`));
  return m ? Number(m[1]) / 1024 : 0;
}

/** The largest RSS of one PostgreSQL server process (a shared-memory page counts in each backend that touched it). */
export function postgresPeakMiB(): number {
  let max = 0;
  for (const name of fs.readdirSync('/proc')) {
    if (/^\d+$/.test(name) && read(`/proc/${name}/comm`).trim() === 'postgres') max = Math.max(max, rssMiB(Number(name)));
  }
  return max;
}

export async function startService(varDir: string, env: Record<string, string>, readyTimeoutMs = 240_000): Promise<Service> {
  const livenessPort = await freePort();
  const emotionPort = await freePort();
  const proc: ChildProcess = spawn(process.execPath, ['--require', 'tsx/cjs', entryPoint('dev/start')], {
    cwd: projectRoot,
    env: {
      // The shipped defaults: only where things live and the ports differ from `npm start`.
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(REDIS_URL|MONGODB_URI|SMTP_URL|LOG_LEVEL)$/.test(k))),
      VAR_DIR: varDir,
      LIVENESS_PORT: String(livenessPort),
      EMOTION_PORT: String(emotionPort),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = collectLines(proc);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));

  /** Every process of the tree with a role, labelled (several of one role, the workers, numbered in pid order). */
  const labelled = (): Array<{ pid: number; label: string }> => {
    const counts = new Map<string, number>();
    const out: Array<{ pid: number; label: string }> = [];
    for (const pid of tree(proc.pid!)) {
      const role = roleOf(read(`/proc/${pid}/cmdline`).replace(/\0/g, ' '));
      if (!role) continue;
      const n = (counts.get(role) ?? 0) + 1;
      counts.set(role, n);
      out.push({ pid, label: role.endsWith('worker') ? `${role} ${n}` : role });
    }
    return out;
  };
  const peak = new Map<string, number>();
  const sample = () => {
    for (const { pid, label } of labelled()) peak.set(label, Math.max(peak.get(label) ?? 0, rssMiB(pid)));
  };
  const cpuMs = () => {
    const out = new Map<string, number>();
    for (const { pid, label } of labelled()) {
      try {
        out.set(label, processTreeCpuMs(pid));
      } catch {
        // the process ended between listing and reading
      }
    }
    return out;
  };
  const sampler = setInterval(sample, 200);

  const stop = async () => {
    clearInterval(sampler);
    if (proc.exitCode === null) {
      const all = tree(proc.pid!);
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(timer);
      // Whatever the supervisor did not stop (it was killed): these are the processes it started, by pid.
      for (const pid of all.slice(1)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  };

  const url = `http://127.0.0.1:${livenessPort}`;
  const until = Date.now() + readyTimeoutMs;
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`dev/start.ts exited (${proc.exitCode}): ${logs.slice(-5).join('\n')}`);
      if (Date.now() > until) throw new Error(`the service was not ready within ${readyTimeoutMs} ms: ${logs.slice(-5).join('\n')}`);
      try {
        const res = await fetch(`${url}/readyz`);
        if (res.status === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    // The workers too: a liveness job needs one, and npm start answers /readyz before they loaded their models.
    for (;;) {
      const workers = tree(proc.pid!).filter((pid) => read(`/proc/${pid}/cmdline`).includes('workers/')).length;
      const readyWorkers = logs.filter((l) => l.includes('"msg":"worker ready"')).length;
      if (workers > 0 && readyWorkers >= workers) break;
      if (Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const state = readLocalState(varDir);
  if (!state) {
    await stop();
    throw new Error('the service wrote no var/local-engines.json');
  }
  return {
    livenessUrl: url,
    state,
    logs,
    peaks: () => new Map(peak),
    resetPeaks: () => peak.clear(),
    cpuMs,
    stop,
  };
}
