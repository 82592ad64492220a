// Owns the emotion worker definition: the queue it serves, its engine, usage events and metrics.
import { emotionInputSchema, QUEUE_NAMES, type EmotionInput, type EmotionResult } from '../../shared/queues/contracts';
import { encodeOutboxEvent } from '../../shared/billing/usage-outbox';
import { storeOutcome } from '../../shared/queues/outcome-store';
import { RESULT_TTL_MS } from '../../shared/queues/keys';
import type { Config } from '../../shared/config';
import type { Logger } from '../../shared/logger';
import { startWorker, type RunningWorker, type WorkerDefinition } from '../runtime/worker-process';
import { EmotionEngine } from './engine';

/** The worker stops analysing this long before the API's deadline, so its clean error arrives in time. */
const DEADLINE_MARGIN_MS = 250;

const emotionWorker: WorkerDefinition<EmotionInput, EmotionResult> = {
  queueName: QUEUE_NAMES.emotion,
  parseInput: (raw) => emotionInputSchema.parse(raw),
  async createHandler({ config, metrics, log }) {
    const engine = await EmotionEngine.load({
      modelsDir: config.MODELS_DIR,
      ffmpegPath: config.FFMPEG_PATH,
      ffprobePath: config.FFPROBE_PATH,
      intraOpThreads: config.ORT_INTRA_OP_THREADS,
      analysisThreads: config.EMOTION_ANALYSIS_THREADS,
    });
    for (const m of engine.modelInfo) metrics.modelInfo.set({ name: m.name, sha256: m.sha256 }, 1);
    log.info({ models: engine.modelInfo.map((m) => m.name) }, 'emotion models loaded');
    return ({ envelope, payload }) => engine.analyze(payload, { deadline: envelope.deadline - DEADLINE_MARGIN_MS });
  },
  // Not credit-billed, but its usage event goes through the same outbox, stored with the answer in one step.
  createSettle({ redis }) {
    return async (outcome, { requestId, resultKey, envelope, reply }) => {
      const event =
        outcome.ok && envelope
          ? {
              requestId,
              json: encodeOutboxEvent({
                service: 'emotion',
                tokenId: envelope.input.tokenId ?? null,
                billable: false,
                latencyMs: outcome.workerMs,
                verdict: { intervals: outcome.value.results.length, duration: outcome.value.summary.duration },
                at: new Date(),
              }),
            }
          : undefined;
      return storeOutcome(redis, resultKey, JSON.stringify(outcome), RESULT_TTL_MS, event, reply);
    };
  },
  observe(metrics, outcome) {
    if (!outcome.ok) return;
    for (const [stage, ms] of Object.entries(outcome.value.stages ?? {})) {
      metrics.inferenceStage.observe({ queue: QUEUE_NAMES.emotion, stage }, ms / 1000);
    }
  },
};

export function startEmotionWorker(o: { config: Config; log: Logger; dbName?: string }): Promise<RunningWorker> {
  return startWorker(emotionWorker, o);
}
