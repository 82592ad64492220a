// The body-read credit (api/http/deadline.ts): the deadline moves for the client's upload time, never for time
// the API process itself could not run.
import { expect } from 'chai';
import express, { type RequestHandler } from 'express';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodyWithinDeadline, requestDeadline } from '../../../api/http/deadline';

const CHUNK = Buffer.alloc(10_000, 1);

/** Holds the event loop for `ms`, as a burst of other requests' work (or no core) would. */
function spin(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** An app whose route reads the body through `bodyWithinDeadline` and reports how far the deadline moved. */
async function serve(parserBefore: RequestHandler = (_req, _res, next) => next()) {
  const app = express();
  app.use(requestDeadline(10_000));
  app.post(
    '/upload',
    (req, res, next) => {
      res.locals.deadlineAt = req.deadline.at;
      next();
    },
    parserBefore,
    bodyWithinDeadline(express.raw({ type: () => true, limit: 1_000_000 })),
    (req, res) => {
      res.json({ bytes: (req.body as Buffer).length, creditMs: req.uploadCreditMs, movedMs: req.deadline.at - (res.locals.deadlineAt as number) });
    },
  );
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return server;
}

/** POSTs `chunks` × 10 KB, the first `firstAfterMs` after the headers, then one every `everyMs`. */
function upload(server: Server, chunks: number, firstAfterMs: number, everyMs: number) {
  const { port } = server.address() as AddressInfo;
  return new Promise<{ bytes: number; creditMs: number; movedMs: number }>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/upload',
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': chunks * CHUNK.length },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(JSON.parse(text)));
      },
    );
    req.on('error', reject);
    req.flushHeaders();
    let sent = 0;
    const next = () => {
      req.write(CHUNK);
      if (++sent === chunks) req.end();
      else setTimeout(next, everyMs);
    };
    setTimeout(next, firstAfterMs);
  });
}

describe('the body-read credit', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it("moves the deadline by a slow client's upload time", async () => {
    server = await serve();
    // Five chunks 100 ms apart: about 400 ms on the wire.
    const answer = await upload(server, 5, 0, 100);
    expect(answer.bytes).to.equal(5 * CHUNK.length);
    expect(answer.creditMs).to.be.within(300, 2_000);
    expect(answer.movedMs).to.be.within(answer.creditMs, answer.creditMs + 1);
  });

  it('does not move it for time the server could not run while the body arrived', async () => {
    // The body comes 50 ms after the headers, while this process is held for 400 ms by other work.
    server = await serve((_req, _res, next) => {
      setImmediate(() => spin(400));
      next();
    });
    const answer = await upload(server, 1, 50, 0);
    expect(answer.bytes).to.equal(CHUNK.length);
    expect(answer.creditMs).to.be.below(150);
  });
});
