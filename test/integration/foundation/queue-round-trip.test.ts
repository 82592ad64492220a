import { expect } from 'chai';
import { randomUUID, createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { jobOutcomeSchema } from '../../../shared/queues/contracts';
import { InvalidInputError } from '../../../shared/errors';
import { JobTimeoutError, type JobClient } from '../../../shared/queues/job-client';
import { Deadline } from '../../../shared/deadline';
import { queueKeys } from '../../../shared/queues/keys';
import type { JobHandler } from '../../../workers/runtime/job-runner';
import { startTestQueue, type TestQueue } from '../../support/test-queue';

interface EchoInput {
  mode: 'digest' | 'reject' | 'slow';
  delayMs?: number;
}
const echoOutcome = jobOutcomeSchema(z.object({ sha256: z.string(), bytes: z.number() }));
type EchoResult = { sha256: string; bytes: number };

/** A test-only processor: proves the plumbing without any model. */
const echo: JobHandler<EchoInput, EchoResult> = async ({ envelope, payload }) => {
  if (envelope.input.mode === 'reject') throw new InvalidInputError('invalid_image', 'rejected by the test processor');
  if (envelope.input.mode === 'slow') await new Promise((r) => setTimeout(r, envelope.input.delayMs ?? 500));
  return { sha256: createHash('sha256').update(payload).digest('hex'), bytes: payload.length };
};

describe('queue round trip (API process -> BullMQ -> worker process -> result bus)', () => {
  let queue: TestQueue<EchoInput, EchoResult>;
  let clientA: JobClient;
  let clientB: JobClient;
  let producer: Redis;
  let prefix: string;

  before(async () => {
    // Two API processes sharing one worker.
    queue = await startTestQueue('roundtrip', { outcomeSchema: echoOutcome, handler: echo, clients: 2 });
    [clientA, clientB] = queue.clients as [JobClient, JobClient];
    ({ producer, prefix } = queue);
  });

  after(() => queue.close());

  it('returns the worker result to the process that asked, with the bytes kept out of the job data', async () => {
    const payload = Buffer.alloc(256 * 1024, 7);
    const requestId = randomUUID();
    const outcome = await clientA.run<EchoInput, EchoResult>({ requestId, input: { mode: 'digest' }, payload, deadline: Deadline.after(5000) });
    expect(outcome.ok).to.equal(true);
    if (!outcome.ok) return;
    expect(outcome.value.bytes).to.equal(payload.length);
    expect(outcome.value.sha256).to.equal(createHash('sha256').update(payload).digest('hex'));
    expect(await producer.exists(queueKeys(prefix).payload(requestId))).to.equal(0);
  });

  it('delivers each result to its own waiter when two API processes share the queue', async () => {
    const jobs = Array.from({ length: 12 }, (_, i) => ({ client: i % 2 ? clientA : clientB, payload: Buffer.from(`payload-${i}`) }));
    const outcomes = await Promise.all(
      jobs.map((j) =>
        j.client.run<EchoInput, EchoResult>({ requestId: randomUUID(), input: { mode: 'digest' }, payload: j.payload, deadline: Deadline.after(5000) }),
      ),
    );
    outcomes.forEach((o, i) => {
      expect(o.ok).to.equal(true);
      if (o.ok) expect(o.value.sha256).to.equal(createHash('sha256').update(jobs[i]!.payload).digest('hex'));
    });
  });

  it('carries a typed worker error back as its code and HTTP status', async () => {
    const outcome = await clientA.run<EchoInput, EchoResult>({
      requestId: randomUUID(),
      input: { mode: 'reject' },
      payload: Buffer.from('x'),
      deadline: Deadline.after(5000),
    });
    expect(outcome.ok).to.equal(false);
    if (outcome.ok) return;
    expect(outcome.error).to.include({ code: 'invalid_image', httpStatus: 400 });
  });

  it('gives up after the budget with a 503-class error, and frees the queued input', async () => {
    // Occupy the single worker, then ask for a job that cannot start within its budget.
    const busy = clientA.run<EchoInput, EchoResult>({
      requestId: randomUUID(),
      input: { mode: 'slow', delayMs: 1200 },
      payload: Buffer.from('a'),
      deadline: Deadline.after(5000),
    });
    const requestId = randomUUID();
    let caught: unknown;
    try {
      await clientB.run<EchoInput, EchoResult>({ requestId, input: { mode: 'digest' }, payload: Buffer.from('late'), deadline: Deadline.after(300) });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(JobTimeoutError);
    expect((caught as JobTimeoutError).httpStatus).to.equal(503);
    expect(await producer.exists(queueKeys(prefix).payload(requestId))).to.equal(0);
    await busy;
  });

  it('skips a job whose deadline passed while it waited, without running the processor', async () => {
    const busy = clientA.run<EchoInput, EchoResult>({
      requestId: randomUUID(),
      input: { mode: 'slow', delayMs: 800 },
      payload: Buffer.from('a'),
      deadline: Deadline.after(5000),
    });
    await new Promise((r) => setTimeout(r, 50));
    // Enqueue directly with a deadline already behind us, as a slow API would have left it.
    const requestId = randomUUID();
    const keys = queueKeys(prefix);
    await producer.set(keys.payload(requestId), 'stale', 'PX', 10_000);
    await clientA.queue.add(
      queue.queueName,
      {
        requestId,
        deadline: Date.now() - 1,
        payloadKey: keys.payload(requestId),
        replyTo: keys.replies('nobody'),
        enqueuedAt: Date.now(),
        input: { mode: 'digest' },
      },
      { jobId: requestId },
    );
    await busy;
    let stored: string | null = null;
    for (let i = 0; i < 50 && !stored; i++) {
      stored = await producer.get(keys.result(requestId));
      if (!stored) await new Promise((r) => setTimeout(r, 50));
    }
    expect(JSON.parse(stored!)).to.deep.include({ ok: false });
    expect(JSON.parse(stored!).error.code).to.equal('deadline_exceeded');
    expect(await producer.exists(keys.payload(requestId))).to.equal(0);
  });
});
