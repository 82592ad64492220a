// The console's one error handler (api/console/errors.ts): the same mapping for its pages and for the try-it
// scripts' JSON routes, so a store outage inside a try-it route is a 503 there too (it once became internal_error).
import { expect } from 'chai';
import express, { type Express } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { consoleErrorHandler } from '../../../api/console/errors';
import type { ConsoleDeps } from '../../../api/console/context';
import { quietLog } from '../../support/config';

/** What the handler reads of the console's dependencies when it renders a page without a session. */
const deps = { mailboxDir: null, config: { SUPPORT_EMAIL: 'support@example.com' } } as unknown as ConsoleDeps;

const storeDown = () => Object.assign(new Error('connection refused'), { name: 'MongoServerSelectionError' });

function consoleLikeApp(): Express {
  const router = express.Router();
  router.use((req, _res, next) => {
    req.log = quietLog;
    req.requestId = 'req-123';
    next();
  });
  router.post('/liveness/try/check', express.raw({ type: () => true, limit: 1024 }), () => {
    throw storeDown();
  });
  router.get('/dashboard', () => {
    throw storeDown();
  });
  router.get('/bug', () => {
    throw new TypeError('undefined is not a function');
  });
  router.post('/form', express.urlencoded({ extended: false, limit: 1024 }), (_req, res) => res.send('ok'));
  router.use(consoleErrorHandler(deps));
  const app = express();
  app.use('/console', router);
  return app;
}

describe('The console error handler', () => {
  let server: Server;
  let base: string;
  before(async () => {
    server = consoleLikeApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('answers a store outage inside a try-it route with 503 service_unavailable JSON and Retry-After', async () => {
    const res = await fetch(`${base}/console/liveness/try/check`, { method: 'POST', body: Buffer.alloc(10) });
    expect(res.status).to.equal(503);
    expect(res.headers.get('retry-after')).to.equal('5');
    expect(((await res.json()) as any).error.code).to.equal('service_unavailable');
  });

  it('answers a file over the try-it limit with 413 payload_too_large JSON', async () => {
    const res = await fetch(`${base}/console/liveness/try/check`, { method: 'POST', body: Buffer.alloc(4096) });
    expect(res.status).to.equal(413);
    expect(((await res.json()) as any).error).to.deep.equal({ code: 'payload_too_large', message: 'The file exceeds 10 MB' });
  });

  it('answers the same outage on a page with the 503 HTML page', async () => {
    const res = await fetch(`${base}/console/dashboard`);
    expect(res.status).to.equal(503);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(await res.text()).to.contain('Temporarily unavailable');
  });

  it('answers an oversized form with 413 in words for people, and a bug with 500 and its reference', async () => {
    const form = await fetch(`${base}/console/form`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `a=${'x'.repeat(4096)}`,
    });
    expect(form.status).to.equal(413);
    expect(await form.text()).to.contain('The form is too large.');
    const bug = await fetch(`${base}/console/bug`);
    expect(bug.status).to.equal(500);
    expect(await bug.text()).to.contain('Reference: req-123');
  });
});
