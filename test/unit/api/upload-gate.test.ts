// The upload gate's memory model (api/http/upload-gate.ts): bodies count until handed to the queue or answered.
import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UploadGate } from '../../../api/http/upload-gate';
import { requestDeadline } from '../../../api/http/deadline';
import { errorHandler } from '../../../api/http/error-handler';
import { TooManyRequestsError } from '../../../shared/errors';
import { quietLog } from '../../support/config';

const BODY = Buffer.alloc(100_000, 1);

/**
 * An app whose route reads the body through the gate (room for one body), then waits until its `waiting` entry is
 * called. Each body's caller is the `x-caller` header (the API's key id), and `readOrder` lists the `x-body` labels
 * in the order the bodies were read.
 */
function gatedApp(handOff: boolean) {
  const gate = new UploadGate(
    { perSubjectBytes: 1_000_000, totalBytes: BODY.length, maxBodyBytes: 1_000_000 },
    () => new TooManyRequestsError('rate_limited', 'share', 1),
  );
  const waiting: Array<() => void> = [];
  const readOrder: string[] = [];
  const app = express();
  app.use((req, _res, next) => {
    req.log = quietLog;
    next();
  });
  app.use(requestDeadline(1_500));
  app.post(
    '/upload',
    gate.read((req) => req.get('x-caller') ?? 'one caller', express.raw({ type: () => true, limit: 1_000_000 })),
    async (req, res) => {
      readOrder.push(req.get('x-body') ?? '');
      // As the liveness route does once the job and its bytes are in Redis.
      if (handOff) gate.handedOff(req);
      await new Promise<void>((resolve) => waiting.push(resolve));
      res.json({ bytes: (req.body as Buffer).length });
    },
  );
  app.use(errorHandler((err, _req, res) => res.status(err.httpStatus).json({ code: err.code })));
  return { app, gate, waiting, readOrder };
}

async function listen(app: express.Express): Promise<{ server: Server; url: string }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/upload` };
}

/** Whether `done` holds within `ms`, polled every 10 ms. */
async function eventually(done: () => boolean, ms = 1_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (done()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return done();
}

describe('UploadGate: bodies in flight', () => {
  it('gives a body’s room back once it is handed to the queue, so the next body is read while the first still waits for its answer', async () => {
    const { app, gate, waiting } = gatedApp(true);
    const { server, url } = await listen(app);
    try {
      const first = fetch(url, { method: 'POST', body: BODY });
      expect(await eventually(() => waiting.length >= 1)).to.equal(true);
      expect(gate.inFlight()).to.equal(0);
      const second = fetch(url, { method: 'POST', body: BODY });
      expect(await eventually(() => waiting.length >= 2), 'the second body is read while the first waits').to.equal(true);
      for (const release of waiting) release();
      expect((await first).status).to.equal(200);
      expect((await second).status).to.equal(200);
    } finally {
      server.close();
    }
  });

  it('gives room to the caller that has had the least since bodies began to wait, not to the oldest body', async () => {
    const { app, gate, waiting: held, readOrder } = gatedApp(false);
    const { server, url } = await listen(app);
    const send = (caller: string, body: string) => fetch(url, { method: 'POST', body: BODY, headers: { 'x-caller': caller, 'x-body': body } });
    try {
      const answers = [send('A', 'A1')];
      expect(await eventually(() => readOrder.length === 1)).to.equal(true);
      // A's second and third bodies wait first, then B's first.
      answers.push(send('A', 'A2'));
      expect(await eventually(() => gate.waitingBodies() === 1)).to.equal(true);
      answers.push(send('A', 'A3'));
      expect(await eventually(() => gate.waitingBodies() === 2)).to.equal(true);
      answers.push(send('B', 'B1'));
      expect(await eventually(() => gate.waitingBodies() === 3)).to.equal(true);
      for (let read = 1; read < 4; read++) {
        held[read - 1]!();
        expect(await eventually(() => readOrder.length === read + 1)).to.equal(true);
      }
      held[3]!();
      // First come first served would read A1, A2, A3, B1: B waits behind every body A sent before it.
      expect(readOrder).to.deep.equal(['A1', 'A2', 'B1', 'A3']);
      for (const a of answers) expect((await a).status).to.equal(200);
      expect(gate.inFlight()).to.equal(0);
      expect(gate.waitingBodies()).to.equal(0);
    } finally {
      server.close();
    }
  });

  it('without the hand-off a body counts until its answer: a second one waits for room and gets 503 at its deadline', async () => {
    const { app, gate, waiting } = gatedApp(false);
    const { server, url } = await listen(app);
    try {
      const first = fetch(url, { method: 'POST', body: BODY });
      expect(await eventually(() => waiting.length >= 1)).to.equal(true);
      expect(gate.inFlight()).to.equal(BODY.length);
      const second = await fetch(url, { method: 'POST', body: BODY });
      expect(second.status).to.equal(503);
      expect(waiting.length).to.equal(1);
      waiting[0]!();
      expect((await first).status).to.equal(200);
      expect(gate.inFlight()).to.equal(0);
    } finally {
      server.close();
    }
  });
});
