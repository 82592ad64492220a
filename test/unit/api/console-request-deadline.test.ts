// The console's request deadline backstop (api/console/request-deadline.ts): a step that keeps waiting past the
// deadline — a driver retry that ignores the time it was given, an insert with no timeout — still gets the 503
// page within the budget + 1 s, and the step's late outcome is dropped instead of a second answer.
import { expect } from 'chai';
import express, { type Express } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { consoleErrorHandler } from '../../../api/console/errors';
import type { ConsoleDeps } from '../../../api/console/context';
import { consoleRequestDeadline, moveConsoleDeadline } from '../../../api/console/request-deadline';
import { Deadline } from '../../../shared/deadline';
import { ServiceUnavailableError } from '../../../shared/errors';
import { createLogger } from '../../../shared/logger';

/** What the handler reads of the console's dependencies when it renders a page without a session. */
const deps = { mailboxDir: null, config: { SUPPORT_EMAIL: 'support@example.com' } } as unknown as ConsoleDeps;

// A 300 ms budget instead of the shipped 10 s only to keep the test short; the rule checked is the same.
const BUDGET_MS = 300;
/** How long the stuck steps below keep waiting: well past the budget + 1 s. */
const STUCK_MS = 2500;

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('The console request deadline backstop', function () {
  this.timeout(10_000);
  let server: Server;
  let base: string;
  /** What the stuck routes did once their step finally returned. */
  const lateOutcomes: string[] = [];
  /** The console's log lines (messages). */
  const logged: string[] = [];
  const log = createLogger('test', 'debug', { write: (line: string) => void logged.push(JSON.parse(line).msg) });

  function consoleLikeApp(): Express {
    const deadline = consoleRequestDeadline(BUDGET_MS, consoleErrorHandler(deps));
    const router = express.Router();
    router.use((req, _res, next) => {
      req.log = log;
      req.requestId = 'req-1';
      next();
    });
    router.use(deadline.start);
    router.get('/stuck-then-answers/:id', async (req, res) => {
      await wait(STUCK_MS);
      try {
        res.send('late page');
        lateOutcomes.push(`${req.params.id}: sent`);
      } catch (err) {
        lateOutcomes.push(`${req.params.id}: ${(err as { code?: string }).code ?? 'threw'}`);
        throw err;
      }
    });
    router.get('/stuck-then-fails/:id', async (req) => {
      await wait(STUCK_MS);
      lateOutcomes.push(`${req.params.id}: failed`);
      throw new ServiceUnavailableError('the store answered at last: unavailable');
    });
    router.get('/quick', (_req, res) => res.send('on time'));
    // Like a try-it route: its job has a later deadline of its own, and answers after the console's first one.
    router.get('/job-with-its-own-budget', async (req, res) => {
      moveConsoleDeadline(req, Deadline.after(BUDGET_MS * 4));
      await wait(BUDGET_MS * 2);
      res.send('answered by the job');
    });
    router.use(deadline.errors);
    const app = express();
    app.use('/console', router);
    return app;
  }

  before(async () => {
    server = consoleLikeApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  async function timedGet(path: string): Promise<{ res: Response; html: string; ms: number }> {
    const started = performance.now();
    const res = await fetch(`${base}${path}`);
    const html = await res.text();
    return { res, html, ms: performance.now() - started };
  }

  it('answers a request whose step is still waiting at the deadline with the 503 page and Retry-After within the budget + 1 s', async () => {
    const { res, html, ms } = await timedGet('/console/stuck-then-answers/first');
    expect(res.status).to.equal(503);
    expect(html).to.contain('Temporarily unavailable');
    expect(Number(res.headers.get('retry-after'))).to.be.at.least(1);
    expect(ms, 'well before the stuck step returns').to.be.below(STUCK_MS);
    await wait(STUCK_MS - ms + 200); // the step returns and its answer is refused (the next test counts its own)
    expect(lateOutcomes).to.deep.equal(['first: ERR_HTTP_HEADERS_SENT']);
  });

  it("drops the step's late answer and late error: one answer each, nothing reaches Express's last-resort handler", async () => {
    logged.length = 0;
    const [answers, fails] = await Promise.all([timedGet('/console/stuck-then-answers/a'), timedGet('/console/stuck-then-fails/b')]);
    expect([answers.res.status, fails.res.status]).to.deep.equal([503, 503]);
    await wait(STUCK_MS + 200); // both stuck steps have returned by now
    expect(lateOutcomes.slice(1)).to.have.members(['a: ERR_HTTP_HEADERS_SENT', 'b: failed']);
    expect(logged.filter((m) => m.includes('answered 503 by the backstop'))).to.have.length(2);
    expect(logged.filter((m) => m.includes('dropped'))).to.have.length(2);
    expect(logged).not.to.include('unhandled error');
    const next = await timedGet('/console/quick');
    expect(next.res.status).to.equal(200);
  });

  it("holds a route that moved its deadline later (a try-it job's own budget) to the later one", async () => {
    const { res, html } = await timedGet('/console/job-with-its-own-budget');
    expect(res.status).to.equal(200);
    expect(html).to.equal('answered by the job');
  });

  it('leaves a request answered in time alone', async () => {
    const { res, html } = await timedGet('/console/quick');
    await wait(BUDGET_MS + 300); // past the deadline: the backstop of an answered request does nothing
    expect(res.status).to.equal(200);
    expect(html).to.equal('on time');
  });
});
