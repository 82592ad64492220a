// Owns the liveness worker definition: the queue it serves, its engine, and its metrics.
import { livenessInputSchema, QUEUE_NAMES, type LivenessInput, type LivenessJobValue } from '../../shared/queues/contracts';
import { systemClock } from '../../shared/billing/month';
import { CreditLedger } from '../../shared/billing/credit-ledger';
import type { Config } from '../../shared/config';
import type { Logger } from '../../shared/logger';
import { WarmUpTime } from '../../shared/queues/warm-up-time';
import { startWorker, type RunningWorker, type WorkerDefinition } from '../runtime/worker-process';
import { configuredEngineOptions, LivenessEngine, verifyLivenessModels } from './engine';
import { createLivenessHandler, createLivenessSettle, warmUpLiveness } from './handler';

export const livenessWorker: WorkerDefinition<LivenessInput, LivenessJobValue> = {
  queueName: QUEUE_NAMES.liveness,
  parseInput: (raw) => livenessInputSchema.parse(raw),
  async createHandler({ config, metrics, log, redis }) {
    const engine = await LivenessEngine.load(configuredEngineOptions(config));
    for (const m of engine.modelInfo) metrics.modelInfo.set({ name: m.name, sha256: m.sha256 }, 1);
    log.info({ models: engine.modelInfo.map((m) => m.name) }, 'liveness models loaded');
    const warmMs = await warmUpLiveness(engine, config.MODELS_DIR, log);
    if (warmMs !== undefined) await new WarmUpTime(redis, config.QUEUE_PREFIX, QUEUE_NAMES.liveness).publish(warmMs);
    return createLivenessHandler(engine);
  },
  createSettle({ config, models, redis }) {
    return createLivenessSettle(new CreditLedger(redis, config.QUEUE_PREFIX, models, systemClock), redis);
  },
  observe(metrics, outcome) {
    if (!outcome.ok) {
      if (outcome.error.code === 'invalid_image') metrics.livenessResults.inc({ outcome: 'invalid' });
      return;
    }
    const r = outcome.value.result;
    metrics.livenessResults.inc({ outcome: r.isFakeFace ? 'fake' : 'live' });
    for (const [stage, ms] of Object.entries(r.stages ?? {})) {
      metrics.inferenceStage.observe({ queue: QUEUE_NAMES.liveness, stage }, ms / 1000);
    }
  },
};

/** Refuses to start (ModelIntegrityError) before opening any connection when a model file is missing or altered. */
export async function startLivenessWorker(o: { config: Config; log: Logger; dbName?: string }): Promise<RunningWorker> {
  verifyLivenessModels(o.config.MODELS_DIR);
  return startWorker(livenessWorker, o);
}
