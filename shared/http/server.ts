// Owns an HTTP server's life: listen, and on stop refuse new connections and drain in-flight requests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface RunningServer {
  server: http.Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish within drainMs, then closes what is left. */
  close(drainMs: number): Promise<void>;
}

export function listen(app: Express, port: number, host: string): Promise<RunningServer> {
  // Node enforces headersTimeout/requestTimeout only when it sweeps connections (every 30 s by default), so a
  // slow-loris socket could live up to 40 s; sweeping every second keeps the bound near the 10 s asked for.
  const server = http.createServer({ connectionsCheckingInterval: 1000 }, app);
  // Bound slow clients (slow-loris): headers within 10 s, whole request within 60 s.
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const actual = (server.address() as AddressInfo).port;
      resolve({
        server,
        port: actual,
        close: (drainMs) =>
          new Promise<void>((done) => {
            const force = setTimeout(() => server.closeAllConnections(), drainMs);
            server.close(() => {
              clearTimeout(force);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}
