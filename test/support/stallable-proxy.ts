// A TCP proxy in front of the test database that can stop answering on demand: connections stay open and
// nothing comes back, which is what a hung database looks like to a driver (tests of request deadlines).
import net from 'node:net';

/** Forwards TCP to the database until stall(); then holds every connection, old and new, unanswered. */
export class StallableProxy {
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private stalled = false;
  private server!: net.Server;
  port = 0;

  async start(target: { host: string; port: number }): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      client.pipe(upstream);
      upstream.pipe(client);
      if (this.stalled) for (const s of pair) s.pause();
      const close = () => {
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  stall(): void {
    this.stalled = true;
    for (const pair of this.pairs) for (const s of pair) s.pause();
  }

  resume(): void {
    this.stalled = false;
    for (const pair of this.pairs) for (const s of pair) s.resume();
  }

  async close(): Promise<void> {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    await new Promise((resolve) => this.server.close(resolve));
  }
}
