// Test support for the "Try it" pages: the console on the liveness front-end plus a real liveness worker and a
// real emotion worker on the same isolated queues and database, and a signed-in console session for a new account.
import { startEmotionWorker } from '../../../workers/emotion/worker';
import { startLivenessWorker } from '../../../workers/liveness/worker';
import type { RunningWorker } from '../../../workers/runtime/worker-process';
import { SessionStore } from '../../../api/console/auth/session';
import { cookieName } from '../../../api/console/http';
import { quietLog } from '../../support/config';
import { startConsole, type ConsoleHarness } from '../../integration/console/harness';

export interface TryItStack {
  h: ConsoleHarness;
  customerId: string;
  /** Cookie header value and CSRF token of a signed-in (authenticated) session. */
  cookie: { name: string; value: string };
  csrf: string;
  stop(): Promise<void>;
}

export async function startTryItStack(label: string, env: Record<string, string> = {}): Promise<TryItStack> {
  const h = await startConsole(label, env);
  const dbName = h.api.deps.models.UsageEvent.db.name;
  const workers: RunningWorker[] = [
    await startLivenessWorker({ config: h.config, log: quietLog, dbName }),
    await startEmotionWorker({ config: h.config, log: quietLog, dbName }),
  ];
  const { account } = await h.api.deps.apiKeys.createAccountWithKeys({
    email: `try-${label}@acme-robotics.example.com`,
    plan: 'starter',
    company: 'Acme Robotics',
    status: 'active',
  });
  const sessions = new SessionStore(h.api.deps.redis, h.config.QUEUE_PREFIX);
  const session = await sessions.create({ stage: 'authenticated', customerId: account._id });
  // As signing in leaves it: a fresh proof of identity, so step-up actions (creating a token) go through.
  session.data.provenAt = Date.now();
  await sessions.save(session);
  return {
    h,
    customerId: account._id,
    cookie: { name: cookieName({ secure: false }), value: session.id },
    csrf: session.data.csrf,
    async stop() {
      for (const w of workers) await w.stop();
      await h.stop();
    },
  };
}
