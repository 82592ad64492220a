// A process that runs one usage drainer and nothing else, with the test fault hook armed from FAULT_KILL_AT: the
// counters' tests kill a drainer mid-batch without loading a model. Env: TEST_REDIS_URL, TEST_MONGODB_URI,
// DRAINER_DB, DRAINER_PREFIX, DRAINER_CLAIM_IDLE_MS, FAULT_KILL_AT.
import { createRedis, waitUntilReady } from '../../shared/redis';
import { connectMongo } from '../../shared/db/mongo';
import { createModels } from '../../shared/db/models';
import { createLogger } from '../../shared/logger';
import { UsageDrainer } from '../../workers/runtime/usage-drainer';
import { faultHook, type FaultStep } from '../../workers/runtime/fault-hook';

async function main(): Promise<void> {
  const env = process.env;
  const log = createLogger('drainer-process', 'warn');
  const redis = createRedis(env.TEST_REDIS_URL!, 'worker');
  await waitUntilReady(redis);
  const conn = await connectMongo(env.TEST_MONGODB_URI!, env.DRAINER_DB);
  const drainer = new UsageDrainer({
    redis,
    prefix: env.DRAINER_PREFIX!,
    models: createModels(conn),
    log,
    claimIdleMs: Number(env.DRAINER_CLAIM_IDLE_MS),
    fault: faultHook(env.FAULT_KILL_AT as FaultStep | undefined, log),
  });
  await drainer.start();
  process.stdout.write(`${JSON.stringify({ msg: 'drainer started', consumer: drainer.consumer })}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
