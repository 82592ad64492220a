// Owns `npm run bench:hosts`' network: Linux network namespaces as hosts (root only), each with one veth link to a
// bridge in the root namespace, one address on a private /24 and its own folder (its VAR_DIR, TMPDIR, data). A
// process is started in a host's namespace with `ip netns exec` (which execs it: the child's pid is the process's
// own). A host is cut off by taking its bridge-side link down (nothing is answered, no reset is sent: a pulled cable)
// and restored by bringing it up. `destroy()` stops what the hosts still run, deletes the namespaces, the bridge and
// the folders, and is safe to call twice, from a signal handler too.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface Host {
  name: string;
  /** The namespace (`ip netns`). */
  ns: string;
  address: string;
  /** The bridge-side end of the host's link (what a cut takes down). */
  link: string;
  /** The host's own folder: nothing in it is shared with another host. */
  dir: string;
}

export interface HostProcess {
  host: Host;
  proc: ChildProcess;
  /** Every line it printed (stdout and stderr). */
  lines: string[];
  exited: Promise<number | null>;
}

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function quietly(fn: () => unknown): void {
  try {
    fn();
  } catch {
    // already gone
  }
}

export class HostNetwork {
  readonly hosts: Host[] = [];
  private readonly procs = new Set<ChildProcess>();
  private destroyed = false;

  /**
   * `tag` names the bridge (`<tag>br`) and prefixes the namespaces and links; `subnet` is the /24's first three
   * octets (the bridge takes .1); `root` is the folder under which each host gets its own.
   */
  constructor(
    private readonly tag: string,
    private readonly subnet: string,
    readonly root: string,
  ) {
    if (process.getuid?.() !== 0) throw new Error('network namespaces need root');
    if (tag.length > 6) throw new Error('the tag must be at most 6 characters (Linux link names are at most 15)');
    // Whatever an earlier run left behind when it was killed without its clean-up (SIGKILL).
    this.removeLeftovers();
    fs.mkdirSync(root, { recursive: true });
    ip('link', 'add', this.bridge, 'type', 'bridge');
    ip('addr', 'add', `${subnet}.1/24`, 'dev', this.bridge);
    ip('link', 'set', this.bridge, 'up');
  }

  private get bridge(): string {
    return `${this.tag}br`;
  }

  /** The root namespace's address on the bridge (where a client there appears from). */
  get gateway(): string {
    return `${this.subnet}.1`;
  }

  addHost(name: string, octet: number): Host {
    const host: Host = {
      name,
      ns: `${this.tag}-${name}`,
      address: `${this.subnet}.${octet}`,
      link: `${this.tag}-${name}`.slice(0, 15),
      dir: path.join(this.root, name),
    };
    fs.mkdirSync(path.join(host.dir, 'tmp'), { recursive: true });
    ip('netns', 'add', host.ns);
    ip('link', 'add', host.link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.ns);
    ip('link', 'set', host.link, 'master', this.bridge);
    ip('link', 'set', host.link, 'up');
    ip('-n', host.ns, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0');
    ip('-n', host.ns, 'link', 'set', 'eth0', 'up');
    ip('-n', host.ns, 'link', 'set', 'lo', 'up');
    this.hosts.push(host);
    return host;
  }

  cut(host: Host): void {
    ip('link', 'set', host.link, 'down');
  }

  restore(host: Host): void {
    ip('link', 'set', host.link, 'up');
  }

  /**
   * Starts `argv` in the host's namespace with exactly `env` (nothing inherited), cwd `cwd`, and the host's name as its
   * host name (its own UTS namespace: `os.hostname()` differs per host, as on separate machines). Each step execs the
   * next, so the child's pid is the program's own.
   */
  spawn(host: Host, argv: string[], env: Record<string, string>, cwd: string): HostProcess {
    const named = ['unshare', '--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', host.name];
    const proc = spawn('ip', ['netns', 'exec', host.ns, ...named, ...argv], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.procs.add(proc);
    const lines: string[] = [];
    for (const stream of [proc.stdout, proc.stderr]) {
      let partial = '';
      stream.on('data', (chunk: Buffer) => {
        const parts = (partial + chunk.toString('utf8')).split('\n');
        partial = parts.pop()!;
        lines.push(...parts.filter(Boolean));
      });
    }
    const exited = new Promise<number | null>((resolve) =>
      proc.once('exit', (code) => {
        this.procs.delete(proc);
        resolve(code);
      }),
    );
    return { host, proc, lines, exited };
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  async stop(p: HostProcess, graceMs = 15_000): Promise<number | null> {
    if (p.proc.exitCode !== null || p.proc.signalCode !== null) return p.proc.exitCode;
    p.proc.kill('SIGTERM');
    const timer = setTimeout(() => p.proc.kill('SIGKILL'), graceMs);
    const code = await p.exited;
    clearTimeout(timer);
    return code;
  }

  /** Stops every process it started, then removes the namespaces, the bridge and the folders. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const running = [...this.procs];
    for (const proc of running) quietly(() => proc.kill('SIGTERM'));
    const until = Date.now() + 10_000;
    while (this.procs.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    for (const proc of this.procs) quietly(() => proc.kill('SIGKILL'));
    this.removeLeftovers();
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  /** Namespaces and links of this tag (and whatever still runs in those namespaces: only our processes run there). */
  private removeLeftovers(): void {
    const ours = ip('netns', 'list')
      .split('\n')
      .map((l) => l.split(' ')[0]!)
      .filter((n) => n.startsWith(`${this.tag}-`));
    for (const ns of ours) {
      for (const pid of ip('netns', 'pids', ns).split('\n').filter(Boolean)) quietly(() => process.kill(Number(pid), 'SIGKILL'));
      quietly(() => ip('netns', 'del', ns));
    }
    quietly(() => ip('link', 'del', this.bridge));
  }
}

/** Resolves once `address:port` accepts a TCP connection (from the calling namespace), or throws after timeoutMs. */
export async function waitForListener(address: string, port: number, timeoutMs: number, exited?: () => boolean): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect({ host: address, port, timeout: 1000 });
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('timeout', () => {
        sock.destroy();
        resolve(false);
      });
      sock.once('error', () => {
        sock.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    if (exited?.()) throw new Error(`the process for ${address}:${port} exited`);
    if (Date.now() > until) throw new Error(`${address}:${port} not listening within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
