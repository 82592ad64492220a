// Owns the embedded local engines: a private redis-server and FerretDB 1.24 (on SQLite, or on a PostgreSQL
// database when LOCAL_DOCSTORE names one) as child processes on free loopback ports. Used by `npm start` when REDIS_URL/MONGODB_URI are unset, and by the test suite.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** FerretDB 1.24.2 with dev/engines/ferretdb-*.patch applied, as dev/setup.sh builds it. */
const FERRETDB_BUILD = 'v1.24.2-lc3';

export interface Engine {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * A loopback port free now, for a process started next. Chosen below the kernel's ephemeral range: a port the kernel
 * handed out for `listen(0)` is free again once probed, and a worker's metrics server or an outgoing connection could
 * take it before our process binds it (it happened: the liveness API found its port held by a worker's `/metrics`,
 * and a client talked to that instead).
 */
export async function freePort(): Promise<number> {
  const low = lowestEphemeralPort();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PRIVATE_PORTS_FROM + Math.floor(Math.random() * Math.max(1, low - PRIVATE_PORTS_FROM));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port found in ${PRIVATE_PORTS_FROM}-${low - 1}`);
}

/** Where freePort looks from: above the registered ports most local services use. */
const PRIVATE_PORTS_FROM = 20_000;

/** The first port of the kernel's ephemeral range (where listen(0) and outgoing connections take theirs). */
function lowestEphemeralPort(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (low > PRIVATE_PORTS_FROM + 1000) return low;
  } catch {
    // Not Linux: the IANA ephemeral range.
  }
  return 49_152;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

/** Where dev/setup.sh puts the FerretDB it builds (or a ferretdb on PATH). */
export function ferretDbBinary(): string {
  const home = process.env.LC_ENGINE_HOME ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'lc-engines');
  const built = path.join(home, `ferretdb-${FERRETDB_BUILD}`);
  if (fs.existsSync(built)) return built;
  const onPath = which('ferretdb');
  if (onPath) return onPath;
  throw new Error(`FerretDB ${FERRETDB_BUILD} not found: run "bash dev/setup.sh" (needs Go) or set MONGODB_URI`);
}

function waitForPort(port: number, proc: ChildProcess, name: string, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (proc.exitCode !== null) return reject(new Error(`${name} exited with code ${proc.exitCode} during start-up`));
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve();
      });
      sock.once('error', () => {
        sock.destroy();
        if (Date.now() - started > timeoutMs) reject(new Error(`${name} did not listen on ${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

function stopProcess(proc: ChildProcess, timeoutMs = 5000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

function spawnEngine(bin: string, args: string[], logFile: string): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  // detached: a Ctrl-C in the terminal reaches only the supervisor, which stops the engines last.
  const proc = spawn(bin, args, { stdio: ['ignore', out, out], detached: true });
  fs.closeSync(out);
  return proc;
}

/** `args`: more redis-server options (dev/engines/redis-cluster.ts starts cluster nodes with them). */
export async function startRedis(opts: { dir: string; port?: number; args?: string[] }): Promise<Engine> {
  fs.mkdirSync(opts.dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const bin = which('redis-server');
  if (!bin) throw new Error('redis-server not found: run "bash dev/setup.sh" or set REDIS_URL');
  const proc = spawnEngine(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      opts.dir,
      '--maxmemory-policy',
      'noeviction',
      '--protected-mode',
      'yes',
      ...(opts.args ?? []),
    ],
    path.join(opts.dir, 'redis.log'),
  );
  await waitForPort(port, proc, 'redis-server');
  return { name: 'redis', url: `redis://127.0.0.1:${port}`, port, stop: () => stopProcess(proc) };
}

/**
 * FerretDB on SQLite under dataDir (the embedded default), or on PostgreSQL when `postgresqlUrl` is given
 * (bench:docstore compares the two). `sqliteQuery` appends connection parameters to the SQLite URL.
 */
export async function startFerretDb(opts: { dataDir: string; port?: number; postgresqlUrl?: string; sqliteQuery?: string }): Promise<Engine> {
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const backend = opts.postgresqlUrl
    ? ['--handler=postgresql', `--postgresql-url=${opts.postgresqlUrl}`]
    : ['--handler=sqlite', `--sqlite-url=file:${opts.dataDir}/${opts.sqliteQuery ?? ''}`];
  const proc = spawnEngine(
    ferretDbBinary(),
    [...backend, `--listen-addr=127.0.0.1:${port}`, `--state-dir=${opts.dataDir}`, '--debug-addr=-', '--telemetry=disable', '--log-level=warn'],
    path.join(opts.dataDir, 'ferretdb.log'),
  );
  await waitForPort(port, proc, 'ferretdb');
  return { name: 'ferretdb', url: `mongodb://127.0.0.1:${port}/`, port, stop: () => stopProcess(proc) };
}

/** The embedded document store LOCAL_DOCSTORE selects: 'sqlite' (files under dataDir) or a postgres:// URL. */
export function startLocalDocstore(localDocstore: string, dataDir: string): Promise<Engine> {
  return startFerretDb(localDocstore === 'sqlite' ? { dataDir } : { dataDir, postgresqlUrl: localDocstore });
}

/** What the store LOCAL_DOCSTORE selects is, for logs: never the URL's password. */
export function describeDocstore(localDocstore: string): string {
  if (localDocstore === 'sqlite') return 'FerretDB on SQLite';
  const u = new URL(localDocstore);
  return `FerretDB on PostgreSQL (${u.host}${u.pathname})`;
}
