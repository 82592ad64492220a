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
import { partialUpload } from '../../support/partial-upload';

const BODY = Buffer.alloc(100_000, 1);

/**
 * An app whose route reads the body through the gate (room for one body), then waits until its `waiting` entry is
 * called. Each body's caller is the `x-caller` header (the API's key id), and `readOrder` lists the `x-body` labels
 * in the order the bodies were read.
 */
function gatedApp(handOff: boolean) {
  const gate = new UploadGate(
    { perSubjectBytes: 1_000_000, totalBytes: BODY.length, floorBytesPerSecond: 1024, graceMs: 60_000 },
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
    gate.read((req) => req.get('x-caller') ?? 'one caller', express.raw({ type: () => true, limit: 1_000_000 }), 1_000_000),
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

/** An app whose route reads every body through `gate` (the caller is `x-caller`) and answers once it is read. */
async function readingApp(gate: UploadGate) {
  const app = express();
  app.use((req, _res, next) => {
    req.log = quietLog;
    next();
  });
  app.use(requestDeadline(2_000));
  app.post(
    '/upload',
    gate.read((req) => req.get('x-caller') ?? 'one caller', express.raw({ type: () => true, limit: 4_000_000 }), 4_000_000),
    (req, res) => {
      res.json({ bytes: (req.body as Buffer).length });
    },
  );
  app.use(errorHandler((err, _req, res) => res.status(err.httpStatus).json({ code: err.code, message: err.message })));
  const { server } = await listen(app);
  return { server, port: (server.address() as AddressInfo).port };
}

describe('UploadGate: shares, lanes and the floor rate (issue 41)', () => {
  const tooMany = () => new TooManyRequestsError('rate_limited', 'share', 1);

  it('cuts a body that arrives slower than the floor rate once its grace is over (400), and gives its room back', async () => {
    let clockMs = 0;
    const gate = new UploadGate({ perSubjectBytes: 1_000_000, totalBytes: 4_000_000, floorBytesPerSecond: 64 * 1024, graceMs: 2_000 }, tooMany, () => clockMs);
    const { server, port } = await readingApp(gate);
    try {
      // Declares 1 MB and sends 10 KB: within its grace it is read and holds its room.
      const slow = partialUpload(port, '/upload', { 'x-caller': 'slow' }, Buffer.alloc(0), { declaredBytes: 1_000_000, sentBytes: 10_000 });
      expect(await eventually(() => gate.inFlight('slow') === 1_000_000)).to.equal(true);
      clockMs += 1_900;
      expect(await eventually(() => gate.inFlight('slow') === 0, 600), 'still within its grace').to.equal(false);
      // A second past its grace it owes 64 KiB and has sent 10 KB.
      clockMs += 1_100;
      const answer = await slow.answered;
      expect(answer.status).to.equal(400);
      expect(answer.connectionClose).to.equal(true);
      expect(gate.inFlight()).to.equal(0);
    } finally {
      server.close();
    }
  });

  it('keeps one share of the room for small bodies: a photo is read at once while large bodies hold the rest', async () => {
    // Room for four shares; bodies over a quarter of a share (250 KB) are large and hold at most three shares together.
    const gate = new UploadGate({ perSubjectBytes: 1_000_000, totalBytes: 4_000_000, floorBytesPerSecond: 1, graceMs: 60_000 }, tooMany, () => 0);
    const { server, port } = await readingApp(gate);
    const held = ['A', 'B', 'C', 'D'].map((caller) =>
      partialUpload(port, '/upload', { 'x-caller': caller }, Buffer.alloc(0), { declaredBytes: 1_000_000, sentBytes: 1_000 }),
    );
    try {
      expect(await eventually(() => gate.inFlight() === 3_000_000 && gate.waitingBodies() === 1), 'three held, the fourth waits').to.equal(true);
      const photo = await fetch(`http://127.0.0.1:${port}/upload`, { method: 'POST', headers: { 'x-caller': 'E' }, body: Buffer.alloc(200_000, 1) });
      expect(photo.status).to.equal(200);
      expect(((await photo.json()) as { bytes: number }).bytes).to.equal(200_000);
    } finally {
      for (const h of held) h.socket.destroy();
      server.close();
    }
  });

  it("refuses at once (429, unread) a body past its account's share, whatever room is left", async () => {
    const gate = new UploadGate({ perSubjectBytes: 1_000_000, totalBytes: 4_000_000, floorBytesPerSecond: 1, graceMs: 60_000 }, tooMany, () => 0);
    const { server, port } = await readingApp(gate);
    const first = partialUpload(port, '/upload', { 'x-caller': 'A' }, Buffer.alloc(0), { declaredBytes: 600_000, sentBytes: 1_000 });
    try {
      expect(await eventually(() => gate.inFlight('A') === 600_000)).to.equal(true);
      const second = await partialUpload(port, '/upload', { 'x-caller': 'A' }, Buffer.alloc(0), { declaredBytes: 600_000, sentBytes: 1_000 }).answered;
      expect(second.status).to.equal(429);
      expect(second.connectionClose).to.equal(true);
    } finally {
      first.socket.destroy();
      server.close();
    }
  });
});
