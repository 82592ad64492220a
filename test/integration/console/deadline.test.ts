// The console's request deadline against a stalled document store: a TCP proxy in front of the test FerretDB
// stops forwarding (connections stay open, nothing is answered — what a hung database looks like). A console
// page, or the JSON route of the try-it page's script, answers 503 with Retry-After within the budget + 1 s, the
// same rule as the API's (test/integration/liveness-api/deadline.test.ts).
import { expect } from 'chai';
import { testMongoUri } from '../../support/engines';
import { StallableProxy } from '../../support/stallable-proxy';
import { expectWithinBudget, timedAgainstStalls } from '../../support/event-loop';
import { FormClient, fullySignedIn, startConsole, type ConsoleHarness, type Onboarded } from './harness';

describe('Console request deadline with a stalled document store', function () {
  this.timeout(120_000);
  // A 3 s console budget instead of the shipped 10 s only to keep the test short; the bound checked is the same rule.
  // LIVENESS_BUDGET_MS keeps its 10 s, so answering within 3 s + 1 s shows the console spends its own budget.
  const BUDGET_MS = 3000;
  const proxy = new StallableProxy();
  let h: ConsoleHarness;
  let user: Onboarded;

  before(async () => {
    const db = new URL(testMongoUri());
    await proxy.start({ host: db.hostname, port: Number(db.port) });
    h = await startConsole('console-stall', { MONGODB_URI: `mongodb://127.0.0.1:${proxy.port}/`, CONSOLE_BUDGET_MS: String(BUDGET_MS) });
    user = await fullySignedIn(h);
  });
  afterEach(() => proxy.resume());
  after(async () => {
    proxy.resume();
    await h?.stop();
    await proxy.close();
  });

  /** Runs `call` with the store stalled; returns its answer, how long it took and this process's event-loop stall meanwhile. */
  async function stalled<T>(call: () => Promise<T>): Promise<{ answer: T; elapsed: { ms: number; stallMs: number } }> {
    proxy.stall();
    const t = await timedAgainstStalls(call);
    return { answer: t.value, elapsed: t };
  }

  it('answers a signed-in page with the 503 error page and Retry-After within the budget + 1 s', async () => {
    const { answer: page, elapsed } = await stalled(() => user.client.request('GET', '/console/dashboard'));
    expect(page.status, page.html.slice(0, 300)).to.equal(503);
    expect(page.html).to.contain('Temporarily unavailable');
    expect(Number(page.headers.get('retry-after'))).to.be.at.least(1);
    expectWithinBudget(elapsed, BUDGET_MS); // the console runs in this process: see event-loop.ts
  });

  it('answers a sign-in with the 503 error page within the budget + 1 s', async () => {
    const client = new FormClient(h.base);
    const form = await client.open('/console/sign-in'); // the form first: the bound is the POST's, not two requests'
    const { answer: page, elapsed } = await stalled(() => client.submit(form, '/console/sign-in', { email: user.email, password: user.password }));
    expect(page.status, page.html.slice(0, 300)).to.equal(503);
    expect(page.html).to.contain('Temporarily unavailable');
    expectWithinBudget(elapsed, BUDGET_MS); // the console runs in this process: see event-loop.ts
  });

  it("answers the try-it script's JSON route with 503 JSON (not the HTML page) within the budget + 1 s", async () => {
    const tryPage = await user.client.open('/console/liveness/try');
    const csrf = /data-csrf="([^"]+)"/.exec(tryPage.html)?.[1];
    expect(tryPage.url, 'still signed in after the 503 page').to.match(/\/console\/liveness\/try$/);
    expect(csrf, 'the try page carries its CSRF token').to.be.a('string');
    const headers = { 'x-csrf-token': csrf!, 'content-type': 'image/jpeg' };
    const { answer, elapsed } = await stalled(() => user.client.request('POST', '/console/liveness/try/check', undefined, headers));
    expect(answer.status, answer.html.slice(0, 300)).to.equal(503);
    expect(answer.headers.get('content-type')).to.match(/^application\/json/);
    expect(JSON.parse(answer.html)).to.have.nested.property('error.code', 'service_unavailable');
    expect(Number(answer.headers.get('retry-after'))).to.be.at.least(1);
    expectWithinBudget(elapsed, BUDGET_MS); // the console runs in this process: see event-loop.ts
  });

  it('serves the console again once the store answers, still signed in (the 503s did not replace the session)', async () => {
    const page = await user.client.open('/console/dashboard');
    expect(page.status).to.equal(200);
    expect(page.url).to.match(/\/console\/dashboard$/);
  });
});
